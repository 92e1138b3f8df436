"""Attack 21: OpenAI-compatible servers over real HTTP (a local aiohttp server) not mimicked before.

Measured before the fix (``openai:test-model`` against ``http://127.0.0.1:<port>/v1``): a compatible server in
front of an OpenAI reasoning model (Azure OpenAI, a LiteLLM proxy) answers ``max_tokens`` with HTTP 400
"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
clinseek sends ``max_tokens`` to every server given a ``base_url`` and had no way to send the other name, so
every call failed: ``BadRequest openai:test-model: HTTP 400 ...`` (the run could not use such a server at all).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

aiohttp = pytest.importorskip("aiohttp")
from aiohttp import web  # noqa: E402
from test_attack17_servers import _serve  # noqa: E402

from clinseek.models import BadRequest, GenerateConfig, Message, get_model  # noqa: E402

_REFUSAL = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                 "'max_completion_tokens' instead.", "type": "invalid_request_error",
                      "param": "max_tokens", "code": "unsupported_parameter"}}


def _completion(content: str) -> dict[str, Any]:
    return {"id": "x", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                                  "finish_reason": "stop"}]}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _calls(handler: Any, n: int) -> list[Any]:
    async def main() -> list[Any]:
        async with _serve(handler) as url:
            model = get_model("openai:test-model", base_url=url)
            out = []
            for _ in range(n):
                try:
                    out.append(await model.generate([Message(role="user", content="hi")], [],
                                                    GenerateConfig(max_output_tokens=50, timeout_s=20)))
                except BadRequest as err:
                    out.append(err)
            return out

    return anyio.run(main)


def test_a_server_that_wants_max_completion_tokens_gets_it() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        if "max_tokens" in body:
            return web.json_response(_REFUSAL, status=400)
        return web.json_response(_completion("ok"))

    replies = _calls(handler, 2)
    assert [getattr(r, "message", r).content for r in replies] == ["ok", "ok"], replies
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in seen] == [
        (True, None), (False, 50), (False, 50)]  # asked again once, then remembered


def test_another_bad_request_is_not_retried() -> None:
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(await request.json())
        return web.json_response({"error": {"message": "messages: too long"}}, status=400)

    (reply,) = _calls(handler, 1)
    assert isinstance(reply, BadRequest) and "too long" in str(reply), reply
    assert len(seen) == 1
