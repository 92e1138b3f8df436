"""The Anthropic provider: the Messages API directly, on AWS Bedrock, or on Google Vertex AI."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anthropic

from ._anthropic_preflight import anthropic_preflight
from ._anthropic_wire import (
    decode_content,
    decode_usage,
    encode_messages,
    encode_system,
    encode_tools,
    request_options,
    stop_reason,
)
from ._decode import shown_url, snippet
from ._errors import BadRequest, ModelCallError, ProviderUnavailable
from ._loops import PerLoop
from ._messages import GenerateConfig, Message, ModelResponse
from ._names import tool_set
from ._preflight import PreflightReport
from ._pricing import PriceTable
from ._sdk_errors import from_status, is_credential_error, map_sdk_error
from ._tokens import TokenCounter
from ._vision import vision_capable

_BODY_ONLY = ("temperature", "top_p")
"""Request fields sent through ``extra_body`` (the SDK's ``messages.create`` dropped them in 2.x)."""

AnthropicClient = anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex


class AnthropicChatModel:
    """A Claude model behind the Messages API (``anthropic:``, ``bedrock:``, ``vertex:``).

    Prompt caching: ``cache_control`` breakpoints on the system prompt, on the last tool and on the
    last user turn, so each turn re-reads the previous prefix from the cache. Cache reads and writes
    are reported in ``Usage``. The SDK's retries are off (``max_retries=0``).
    """

    supports_native_tools = True

    def __init__(self, model_id: str, *, client: AnthropicClient, prices: PriceTable, provider: str,
                 http_client: Callable[[], Any] | None = None) -> None:
        self.name = f"{provider}:{model_id}"
        self.model_id = model_id
        self.supports_vision = vision_capable(model_id)
        self._provider = provider
        self._prices = prices
        self.priced = prices.price(self.name) is not None

        def make() -> AnthropicClient:  # ``client``'s configuration on a connection pool of this loop
            return client if http_client is None else client.copy(http_client=http_client())

        self._clients: PerLoop[AnthropicClient] = PerLoop(make, _close)
        """One SDK client per event loop (a connection pool cannot move between loops), closed with it."""

    def __repr__(self) -> str:
        return f"AnthropicChatModel({self.name!r})"

    async def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        config: GenerateConfig | None = None,
    ) -> ModelResponse:
        """One Messages call (see ``ChatModel.generate``)."""
        config = config or GenerateConfig()
        offered = tool_set(self._provider, tools)
        specs, names = list(offered.specs), offered.names
        request: dict[str, Any] = {"model": self.model_id, "messages": encode_messages(messages, names)}
        system = encode_system(messages)
        if system:
            request["system"] = system
        if specs:
            request["tools"] = encode_tools(specs, names)
        request.update(request_options(config, names, bool(specs)))
        # Sampling fields newer SDKs no longer take as arguments go in the body as they are: the
        # service decides (older models accept them; others answer a clear 400).
        extra_body = {key: request.pop(key) for key in _BODY_ONLY if key in request}
        started = time.perf_counter()
        try:
            async with asyncio.timeout(config.timeout_s):  # asyncio's own: the SDK's transport is aiohttp
                reply = await (await self._clients.get()).messages.create(**request, extra_body=extra_body or None,
                                                           timeout=config.timeout_s)
        except TimeoutError:
            raise ProviderUnavailable(f"no reply within {config.timeout_s} s", model=self.name, no_reply=True) from None
        except Exception as err:
            if is_credential_error(err):  # never sent: retrying cannot help
                raise BadRequest(f"no usable credentials: {type(err).__name__}: {err}", model=self.name) from err
            if not isinstance(err, (anthropic.AnthropicError, ValueError, RecursionError)):  # Recursion: a body nested too deep
                raise
            raise map_sdk_error(err, self.name, anthropic) from err
        latency_s = time.perf_counter() - started
        if not hasattr(reply, "content"):  # the SDK hands back a body that is not JSON as text (a proxy's page)
            client = await self._clients.get()
            said = snippet(reply) if isinstance(reply, (str, bytes)) else type(reply).__name__
            raise ProviderUnavailable(f"unreadable reply from {shown_url(str(client.base_url))}: not a JSON message; "
                                      f"it reads: {said!r}", model=self.name)
        if getattr(reply, "type", None) == "error":  # the API's error envelope relayed with HTTP 200 (a proxy)
            raise _error_envelope(getattr(reply, "error", None), self.name)
        message = decode_content(reply.content or [], names)
        usage = decode_usage(reply.usage)
        reported = getattr(reply, "usage", None) is not None
        return ModelResponse(
            model=self.name,
            message=message,
            usage=usage,
            usage_reported=reported,
            cost_usd=self._prices.cost_usd(self.name, usage) if reported else None,
            latency_s=latency_s,
            stop_reason=stop_reason(reply.stop_reason, bool(message.tool_calls)),
            raw_stop_reason=reply.stop_reason,
            provider_response_id=reply.id,
            provider_model=reply.model,
            request_id=getattr(reply, "_request_id", None),
        )

    async def preflight(self, *, tools: bool, timeout_s: float) -> tuple[PreflightReport, TokenCounter]:
        """Check the endpoint, the credentials, the model and (``tools``) tool support
        (:func:`clinseek.models.preflight`; for Claude services ``clinseek.models._anthropic_preflight``).

        Raises:
            ModelError: the service cannot serve the run (the message says why and what to do).
        """
        return await anthropic_preflight(self, await self._clients.get(), self._provider, tools=tools, timeout_s=timeout_s)

    async def aclose(self) -> None:
        """Close the HTTP connection pools."""
        await self._clients.aclose()


_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                 "permission_error": 403, "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
                 "api_error": 500, "timeout_error": 504, "overloaded_error": 529}
"""The HTTP status the Messages API sends with each ``error.type`` (docs "Errors")."""


def _error_envelope(error: Any, model: str) -> ModelCallError:
    """The taxonomy error of ``{"type": "error", "error": {"type": ..., "message": ...}}`` received with HTTP
    200: classified by the status the API sends that ``error.type`` with (an unknown type: retried)."""
    kind = error.get("type") if isinstance(error, dict) else None
    detail = error.get("message") if isinstance(error, dict) else None
    said = f"{kind}: {detail}" if isinstance(detail, str) and detail else str(kind or error)
    status = _ERROR_STATUS.get(kind, 500) if isinstance(kind, str) else 500
    return from_status(status, f"the reply (HTTP 200) is an error object: {said}", error, {}, model)


async def _close(client: AnthropicClient) -> None:
    await client.close()


__all__ = ["AnthropicChatModel"]
