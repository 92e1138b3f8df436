"""The Anthropic provider: the Messages API directly, on AWS Bedrock, or on Google Vertex AI."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import anthropic
import anyio

from ._anthropic_wire import (
    decode_content,
    decode_usage,
    encode_messages,
    encode_system,
    encode_tools,
    request_options,
    stop_reason,
)
from ._errors import ProviderUnavailable
from ._messages import GenerateConfig, Message, ModelResponse
from ._names import ToolNameMap, to_tool_infos
from ._pricing import PriceTable
from ._sdk_errors import map_sdk_error
from ._vision import vision_capable

AnthropicClient = anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex


class AnthropicChatModel:
    """A Claude model behind the Messages API (``anthropic:``, ``bedrock:``, ``vertex:``).

    Prompt caching: ``cache_control`` breakpoints on the system prompt, on the last tool and on the
    last user turn, so each turn re-reads the previous prefix from the cache. Cache reads and writes
    are reported in ``Usage``. The SDK's retries are off (``max_retries=0``).
    """

    supports_native_tools = True

    def __init__(self, model_id: str, *, client: AnthropicClient, prices: PriceTable, provider: str) -> None:
        self.name = f"{provider}:{model_id}"
        self.model_id = model_id
        self.supports_vision = vision_capable(model_id)
        self._provider = provider
        self._prices = prices
        self.priced = prices.price(self.name) is not None
        self._client = client

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
        specs = to_tool_infos(tools)
        names = ToolNameMap(self._provider, [s.name for s in specs])
        request: dict[str, Any] = {"model": self.model_id, "messages": encode_messages(messages, names)}
        system = encode_system(messages)
        if system:
            request["system"] = system
        if specs:
            request["tools"] = encode_tools(specs, names)
        request.update(request_options(config, names, bool(specs)))
        started = time.perf_counter()
        try:
            with anyio.fail_after(config.timeout_s):
                reply = await self._client.messages.create(**request, timeout=config.timeout_s)
        except TimeoutError:
            raise ProviderUnavailable(f"no reply within {config.timeout_s} s", model=self.name) from None
        except (anthropic.AnthropicError, ValueError) as err:
            raise map_sdk_error(err, self.name, anthropic) from err
        latency_s = time.perf_counter() - started
        message = decode_content(reply.content or [], names)
        usage = decode_usage(reply.usage)
        return ModelResponse(
            model=self.name,
            message=message,
            usage=usage,
            cost_usd=self._prices.cost_usd(self.name, usage),
            latency_s=latency_s,
            stop_reason=stop_reason(reply.stop_reason, bool(message.tool_calls)),
            raw_stop_reason=reply.stop_reason,
            provider_response_id=reply.id,
            provider_model=reply.model,
            request_id=getattr(reply, "_request_id", None),
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.close()


__all__ = ["AnthropicChatModel"]
