"""Servers 21: the Anthropic Messages API over real HTTP (a local aiohttp server; the SDK on its aiohttp transport).

Each test serves the exact bytes below to ``anthropic:claude-test`` at ``http://127.0.0.1:<port>``.
Measured before the fixes:

- a ``tool_use`` whose ``input`` is a JSON array or a number escaped the provider as ``AttributeError:
  'list' object has no attribute 'strip'`` (no ModelCallError; the row an ``infra_error``), where an
  input that is a string was already an ``invalid_json`` call the model could fix;
- HTTP 200 with Anthropic's own error envelope (``{"type": "error", "error": {"type": "overloaded_error",
  ...}}``, the body the API sends with 529, anthropics/anthropic-sdk-typescript#616, relayed with 200 by a
  proxy or gateway) was read as an empty assistant reply: stop reason ``other``, no usage, no error. The
  loop sent reminders to a model that never answered and the row ended ``no_answer`` (a model failure,
  not an ``infra_error``: ``clinseek run`` does not redo it on resume), every retry of the proxy's
  failure lost.

What held (guards): 529 ``overloaded_error`` is ``ProviderUnavailable`` with and without ``retry-after``
(read when sent); ``pause_turn``, ``refusal`` and ``model_context_window_exceeded`` are read with their raw
stop reason kept.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("anthropic")
from aiohttp import web  # noqa: E402
from test_servers21_openai import FINISH  # noqa: E402

from clinseek.models import (  # noqa: E402
    BadRequest,
    ContextLengthExceeded,
    GenerateConfig,
    Message,
    ProviderUnavailable,
    RateLimited,
    get_model,
)

OVERLOADED = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CZAYfc9MZ9RTh4p7Qex6Z"}'


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


def _call(raw: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    """One generate() (``ehr.finish`` offered) against a server that answers ``raw``: the response or the error."""
    seen: list[bytes] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(await request.read())
        return web.Response(body=raw, status=status, headers=headers, content_type="application/json")

    async def main() -> Any:
        app = web.Application()
        app.router.add_post("/v1/messages", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        model = get_model("anthropic:claude-test", base_url=f"http://127.0.0.1:{runner.addresses[0][1]}")
        try:
            return await model.generate([Message(role="user", content="hi")], [FINISH], GenerateConfig(timeout_s=20))
        except Exception as err:
            return err
        finally:
            await model.aclose()
            await runner.cleanup()

    got = anyio.run(main)
    assert len(seen) == 1  # no retry inside the provider (the runner's ResilientModel retries)
    return got


def _message(content: list[dict[str, Any]], stop: str) -> bytes:
    return json.dumps({"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
                       "content": content, "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": 300, "output_tokens": 20}}, separators=(",", ":")).encode()


@pytest.mark.parametrize(("value", "said"), [(["yes"], "array"), (7, "number")], ids=["array", "number"])
def test_a_tool_use_whose_input_is_not_an_object_is_a_call_error(value: Any, said: str) -> None:
    raw = _message([{"type": "tool_use", "id": "toolu_01", "name": "ehr__finish", "input": {"answer": "yes"}},
                    {"type": "tool_use", "id": "toolu_02", "name": "ehr__finish", "input": value}], "tool_use")
    got = _call(raw)
    assert not isinstance(got, Exception), repr(got)
    good, bad = got.message.tool_calls
    assert (good.arguments, good.error_kind) == ({"answer": "yes"}, None)
    assert (bad.id, bad.error_kind, bad.error) == ("toolu_02", "not_an_object",
                                                   f"arguments must be a JSON object, got {said}")


@pytest.mark.parametrize(
    ("raw", "kind", "said"),
    [
        (OVERLOADED, ProviderUnavailable, "Overloaded"),
        (b'{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded '
         b'your per-minute rate limit"}}', RateLimited, "per-minute rate limit"),
        (b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > '
         b'200000 maximum"}}', ContextLengthExceeded, "prompt is too long"),
        (b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', BadRequest,
         "invalid x-api-key"),
        (b'{"type":"error","error":{"type":"api_error","message":"Internal server error"}}', ProviderUnavailable,
         "Internal server error"),
    ],
    ids=["overloaded", "rate-limit", "prompt-too-long", "authentication", "api-error"],
)
def test_a_200_reply_that_is_an_error_envelope_is_that_error(raw: bytes, kind: type, said: str) -> None:
    got = _call(raw)
    assert type(got) is kind, repr(got)
    assert said in str(got) and "HTTP 200" in str(got) and "anthropic:claude-test" in str(got), str(got)


@pytest.mark.parametrize(("headers", "after"), [(None, None), ({"retry-after": "12"}, 12.0)],
                         ids=["no-retry-after", "retry-after"])
def test_529_overloaded_is_retryable_with_its_wait(headers: dict[str, str] | None, after: float | None) -> None:
    got = _call(OVERLOADED, status=529, headers={"x-should-retry": "true", **(headers or {})})
    assert type(got) is ProviderUnavailable and got.status_code == 529, repr(got)
    assert got.retry_after_s == after and "overloaded_error" in str(got), str(got)


@pytest.mark.parametrize(("stop", "canonical"), [("pause_turn", "other"), ("refusal", "content_filter"),
                                                 ("model_context_window_exceeded", "context_length")])
def test_the_newer_stop_reasons_are_read_and_kept(stop: str, canonical: str) -> None:
    got = _call(_message([{"type": "text", "text": "Partial"}], stop))
    assert (got.stop_reason, got.raw_stop_reason, got.message.content) == (canonical, stop, "Partial")


def test_a_text_block_whose_text_is_null_reads_as_empty() -> None:
    """servers21's leftover: a gateway's ``{"type": "text", "text": null}`` raised TypeError joining the texts."""
    got = _call(_message([{"type": "text", "text": None}, {"type": "text", "text": "ok"}], "end_turn"))
    assert not isinstance(got, Exception), repr(got)
    assert got.message.content == "ok"
