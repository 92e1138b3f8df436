"""The pre-flight's errors say what is wrong and what to do (newcomer25's findings, loopback servers).

- A refused key names where the key came from: the variable that was read, or that none was set (a
  local server started with ``--api-key`` and a shell without ``OPENAI_API_KEY``); the key itself never.
- A server that answers 500 to the probe is told as the server's own failure, with where to look.
- A server that accepts the connection but never answers is not "cannot reach" (no empty
  ``TimeoutError:`` either), and one that lists its models but never answers the chat request says so.
"""

from __future__ import annotations

import anyio
import pytest
from _models_helpers import SECRET

from clinseek.errors import ModelError
from clinseek.models import _preflight, get_model, preflight
from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply


class _Bare(OpenAIFake):
    """An OpenAI fake whose every answer, ``GET /models`` included, comes from its responder."""

    def _fixed(self, request: RecordedRequest) -> Reply | None:
        return None


def _refused(server: OpenAIFake, accepted: str):
    def answer(request: RecordedRequest) -> Reply:
        if request.headers.get("authorization") != f"Bearer {accepted}":
            return Reply(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                         "param": None, "code": "invalid_api_key"}})
        return server.text("OK")
    return answer


def _preflight_error(name: str, base_url: str, *, timeout_s: float = 5, **options: object) -> str:
    async def go() -> None:
        model = get_model(name, base_url=base_url, **options)
        try:
            await preflight(model, tools=False, timeout_s=timeout_s)
        finally:
            await model.aclose()

    with pytest.raises(ModelError) as err:
        anyio.run(go)
    return str(err.value)


def test_a_refused_key_names_the_variable_it_was_read_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_VLLM_KEY", SECRET)
    with _Bare() as server:
        server.responder = _refused(server, "the-right-key")
        text = _preflight_error("openai:fake-model", server.url, api_key_env="MY_VLLM_KEY")
    assert "refused the API key" in text and "read from MY_VLLM_KEY" in text, text
    assert SECRET not in text


def test_a_refused_key_says_when_no_key_was_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIFake() as server:  # lists its models without a key, refuses the chat request (a gateway)
        server.responder = _refused(server, "the-right-key")
        text = _preflight_error("openai:fake-model", server.url)
    assert "no key was sent (OPENAI_API_KEY is not set)" in text and "--api-key-env" in text, text


def test_a_server_error_on_the_probe_says_where_to_look(openai_key: str) -> None:
    with OpenAIFake() as server:
        server.responder = lambda request: server.server_error(500)
        text = _preflight_error("openai:fake-model", server.url)
    assert "HTTP 500" in text and "the server's own error" in text and "log" in text, text


def test_a_server_that_never_answers_is_not_called_unreachable(openai_key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_preflight, "CONNECT_TIMEOUT_S", 0.3)
    with _Bare() as server:
        server.responder = lambda request: server.slow(server.text("OK"), 2)
        url = server.url
        text = _preflight_error("openai:fake-model", url)
    assert "did not answer GET /models within 0.3 s" in text and "cannot reach" not in text, text
    assert "TimeoutError" not in text and f"curl {url}/models" in text


def test_a_chat_request_that_never_answers_says_so(openai_key: str) -> None:
    with OpenAIFake() as server:  # GET /models answers at once, the chat request never does
        server.responder = lambda request: server.slow(server.text("OK"), 2)
        text = _preflight_error("openai:fake-model", server.url, timeout_s=0.5)
    assert "no usable answer to the pre-flight chat request" in text and "--request-timeout" in text, text
    assert "no reply within 0.5 s" in text


def test_an_unserved_model_names_the_option_that_fixes_it(openai_key: str) -> None:
    with OpenAIFake(profile="vllm") as server:
        text = _preflight_error("openai:gpt-9", server.url)
    assert "does not serve the model of openai:gpt-9" in text, text
    listed = server.profile.listed[0] if server.profile else ""
    assert f"e.g. --model openai:{listed}" in text, text


@pytest.mark.parametrize(("url", "says"), [
    ("127.0.0.1:8000/v1", "expected a URL such as http://127.0.0.1:8000/v1"),
    ("localhost:8000/v1", "expected a URL such as http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1/chat/completions", "give the API root, not an endpoint: --base-url http://127.0.0.1:8000/v1"),
])
def test_a_base_url_no_request_could_use_is_refused_before_any_is_sent(url: str, says: str, openai_key: str) -> None:
    """newcomer25: no scheme read as an unreachable server ("is the server running?"), and the chat path as
    a server without /v1."""
    with pytest.raises(ModelError) as err:
        get_model("openai:m", base_url=url)
    assert says in str(err.value), err.value


def test_https_to_a_plain_http_server_says_to_use_http(openai_key: str) -> None:
    with OpenAIFake() as server:
        text = _preflight_error("openai:fake-model", server.url.replace("http://", "https://"))
    assert "use http:// in --base-url" in text, text
