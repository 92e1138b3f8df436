"""The OpenAI-compatible provider: OpenAI itself and vLLM / SGLang / Ollama / llama.cpp servers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._decode import cut_calls
from ._errors import BadRequest, ModelCallError, ProviderUnavailable
from ._messages import GenerateConfig, Message, ModelResponse, Usage
from ._names import ToolSet, tool_set
from ._openai_http import ChatEndpoint
from ._openai_wire import (
    decode_message,
    decode_usage,
    encode_messages,
    encode_tools,
    request_options,
    stop_reason,
)
from ._preflight import PreflightReport, openai_preflight
from ._pricing import PriceTable
from ._sdk_errors import from_status
from ._tokens import TokenCounter
from ._vision import vision_capable


class OpenAIChatModel:
    """A model behind the OpenAI Chat Completions API, with native tool calling.

    Prompt caching is automatic on OpenAI; cached prompt tokens are read from
    ``usage.prompt_tokens_details.cached_tokens``. The request goes out on aiohttp, one request per
    call (no retries here: the runner's ``ResilientModel`` retries), and the reply is read as plain
    JSON (:mod:`clinseek.models._openai_http` says why not through the ``openai`` SDK).
    """

    supports_native_tools = True

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str,
        base_url: str | None,
        prices: PriceTable,
        extra_body: Mapping[str, Any] | None = None,
        provider: str = "openai",
        key_hint: str = "check --api-key-env",
    ) -> None:
        self.name = f"{provider}:{model_id}"
        self.model_id = model_id
        self.supports_vision = vision_capable(model_id)
        self._provider = provider
        self._prices = prices
        self.priced = prices.price(self.name) is not None
        self._extra_body = dict(extra_body) if extra_body else None
        # OpenAI's own API wants max_completion_tokens; compatible servers all accept max_tokens.
        self._max_tokens_param = "max_tokens" if base_url else "max_completion_tokens"
        self._endpoint = ChatEndpoint(api_key=api_key, base_url=base_url, model=self.name)
        self._key_hint = key_hint  # what the pre-flight says when the key is refused (where it came from)

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.name!r})"

    async def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        config: GenerateConfig | None = None,
    ) -> ModelResponse:
        """One Chat Completions call (see ``ChatModel.generate``)."""
        config = config or GenerateConfig()
        offered = tool_set(self._provider, tools)
        body = self._body(messages, offered, config)
        started = time.perf_counter()
        try:  # asyncio's own timeout (aiohttp runs on asyncio only): a third of anyio's fail_after CPU per call
            async with asyncio.timeout(config.timeout_s):
                try:
                    completion, request_id = await self._endpoint.post("chat/completions", body)
                except BadRequest as err:
                    # a compatible server in front of a reasoning model (Azure OpenAI, a LiteLLM proxy) refuses
                    # max_tokens and names max_completion_tokens: ask once more with it, and keep it
                    if self._max_tokens_param != "max_tokens" or "max_completion_tokens" not in str(err):
                        raise
                    self._max_tokens_param = "max_completion_tokens"
                    body = self._body(messages, offered, config)
                    completion, request_id = await self._endpoint.post("chat/completions", body)
        except TimeoutError:
            raise ProviderUnavailable(f"no reply within {config.timeout_s} s", model=self.name, no_reply=True) from None
        latency_s = time.perf_counter() - started
        return self._response(completion, request_id, offered, latency_s)

    def _body(self, messages: Sequence[Message], offered: ToolSet, config: GenerateConfig) -> str:
        """The request's JSON text: ``model``, ``messages``, ``tools``, the options, the extra body, in that order.

        The tools' JSON is encoded once per tool list (:meth:`ToolSet.encoded`) and spliced in; the
        text is the one ``json.dumps`` gives for the whole request dict (tests/models checks it).
        """
        names = offered.names
        head: dict[str, Any] = {"model": self.model_id, "messages": encode_messages(messages, names)}
        tail = request_options(config, names, bool(offered.specs), self._max_tokens_param)
        extra = self._extra_body or {}
        if not offered.specs or extra.keys() & {"model", "messages", "tools"}:
            request = head | ({"tools": encode_tools(offered.specs, names)} if offered.specs else {}) | tail | extra
            return _dumps(request)
        tools_json = offered.encoded("openai-tools-json", lambda t: _dumps(encode_tools(t.specs, t.names)))
        rest = _dumps(tail | extra)
        return f'{_dumps(head)[:-1]}, "tools": {tools_json}{", " + rest[1:] if rest != "{}" else "}"}'

    def _response(self, completion: Any, request_id: str | None, offered: ToolSet, latency_s: float) -> ModelResponse:
        choices = completion.get("choices") if isinstance(completion, dict) else None
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise _no_choices(completion, self.name)
        choice = choices[0]
        message, source = decode_message(choice.get("message") or {}, offered.names, offered.specs)
        if choice.get("finish_reason") == "length" and message.tool_calls:
            message = message.model_copy(update={"tool_calls": cut_calls(message.tool_calls, True)})
        usage = decode_usage(completion.get("usage"))
        return ModelResponse(
            model=self.name,
            message=message,
            usage=usage or Usage(),
            usage_reported=usage is not None,
            cost_usd=None if usage is None else self._prices.cost_usd(self.name, usage),
            latency_s=latency_s,
            stop_reason=stop_reason(_text_or_none(choice.get("finish_reason")), bool(message.tool_calls)),
            raw_stop_reason=_text_or_none(choice.get("finish_reason")),
            provider_response_id=_text_or_none(completion.get("id")),
            provider_model=_text_or_none(completion.get("model")),
            request_id=request_id,
            tool_calls_source=source,
        )

    async def preflight(self, *, tools: bool, timeout_s: float) -> tuple[PreflightReport, TokenCounter]:
        """Check the endpoint, the model and (``tools``) tool support; find the tokenizer endpoint
        (:func:`clinseek.models.preflight`).

        Raises:
            ModelError: the endpoint cannot serve the run (the message says why and what to do).
        """
        return await openai_preflight(self, self._endpoint.base_url, self._endpoint.api_key, tools=tools,
                                      timeout_s=timeout_s, key_hint=self._key_hint)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._endpoint.aclose()


def _no_choices(completion: Any, model: str) -> ModelCallError:
    """The error of a 200 reply without a choice: a gateway's error object (OpenRouter, LiteLLM: HTTP 200 with
    ``{"error": {"code": <HTTP status>, "message": ...}}`` when the model failed after the request was taken)
    is classified by the status in its ``code`` (a context overflow, a refused key, a rate limit); else it is
    ``ProviderUnavailable`` (retried)."""
    error = completion.get("error") if isinstance(completion, dict) else None
    detail = error.get("message") if isinstance(error, dict) else error
    said = f": {detail}" if isinstance(detail, str) and detail else ""
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
        return from_status(code, f"the reply (HTTP 200) is an error object{said}", error, {}, model)
    return ProviderUnavailable(f"the reply has no choices{said}", model=model)


def _dumps(value: Any) -> str:
    """JSON text as every request of this provider is encoded (``ensure_ascii=False``)."""
    return json.dumps(value, ensure_ascii=False)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


__all__ = ["OpenAIChatModel"]
