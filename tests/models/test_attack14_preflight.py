"""Attack 14: the pre-flight against servers as they answer, on loopback HTTP.

- OpenAI's reasoning models (o1, o3, o4-mini, gpt-5) refuse any ``temperature`` but the default with
  a 400 whose text says "... with this model": the probe must not send one (the run itself sends none
  unless ``--temperature`` is given), and a refused parameter is not "the model is not served".
- A ``--base-url`` without ``/v1`` (vLLM / SGLang answer FastAPI's ``{"detail": "Not Found"}``) must
  say so, not that the model is not served.
"""

from __future__ import annotations

import anyio
import pytest

from clinseek.errors import ModelError
from clinseek.models import get_model, preflight
from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply


def _check(name: str, base_url: str | None, tools: bool = True):
    async def go():
        model = get_model(name, base_url=base_url)
        try:
            return await preflight(model, tools=tools, timeout_s=5)
        finally:
            await model.aclose()

    return anyio.run(go)


def _openai_reasoning_server(server: OpenAIFake):
    """OpenAI's answer to sampling parameters its reasoning models do not take (status, body, wording)."""

    def answer(request: RecordedRequest) -> Reply:
        body = request.json if isinstance(request.json, dict) else {}
        if "temperature" in body and body["temperature"] != 1:
            return Reply(400, {"error": {
                "message": f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
                           "Only the default (1) value is supported.",
                "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}})
        if "max_tokens" in body:
            return Reply(400, {"error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                           "Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})
        return server.text("OK", model="o3-mini-2025-01-31")

    return answer


@pytest.mark.parametrize("tools", [True, False])
def test_the_probe_passes_an_openai_reasoning_model(tools: bool, openai_key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIFake() as server:
        server.responder = _openai_reasoning_server(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # e.g. a gateway in front of OpenAI's API
        report, _ = _check("openai:o3-mini", None, tools)
        probe = next(r.json for r in server.requests if r.path.endswith("/chat/completions"))
    assert report is not None and report.tools_checked is tools
    assert "temperature" not in probe


def test_a_refused_parameter_is_not_reported_as_an_unserved_model(openai_key: str) -> None:
    """A 400 about a parameter names the parameter; only an error about the model names the model."""
    with OpenAIFake() as server:
        server.responder = lambda request: Reply(400, {"error": {
            "message": "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
            "type": "invalid_request_error", "param": "parallel_tool_calls", "code": "unsupported_parameter"}})
        with pytest.raises(ModelError) as err:
            _check("openai:o1", server.url, tools=False)
    assert "does not serve the model" not in str(err.value), err.value
    assert "parallel_tool_calls" in str(err.value)


def test_a_base_url_without_v1_is_named(openai_key: str) -> None:
    """vLLM's routes are under /v1 only; elsewhere FastAPI answers 404 {"detail": "Not Found"}."""
    with OpenAIFake(profile="vllm") as server:
        root = server.url.removesuffix("/v1")
        server.responder = lambda request: Reply(404, {"detail": "Not Found"})
        with pytest.raises(ModelError) as err:
            _check("openai:Qwen/Qwen3-8B", root)
    assert "/v1" in str(err.value) and "does not serve the model" not in str(err.value), err.value
