"""The ``ChatModel`` protocol every provider (and every offline baseline) implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ._messages import GenerateConfig, Message, ModelResponse


@runtime_checkable
class ChatModel(Protocol):
    """A chat model behind one provider.

    Attributes:
        name: the full model name ``provider:model`` (e.g. ``openai:gpt-5.1``).
        supports_native_tools: ``True`` when tool calls travel in the provider's native tool-calling
            fields; ``False`` for the text protocol (tools rendered into the system prompt).
        supports_vision: (declared by every built-in model; optional, so a plug-in written before
            it still satisfies the protocol) ``True`` when the model takes images
            (``Message.images``) in user and tool turns. Read it with ``accepts_images(model)``: the
            agent loop and Curated Input mode attach images only then, and otherwise say in text how
            many were not shown (built-ins: ``clinseek.models.VISION_PATTERNS``).
    """

    name: str
    supports_native_tools: bool

    async def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        config: GenerateConfig | None = None,
    ) -> ModelResponse:
        """Send one request and return the assistant turn.

        Args:
            messages: the conversation so far (system, user, assistant, tool turns), oldest first.
            tools: tool schemas with canonical dotted names (OpenAI-style function JSON or flat
                ``{"name", "description", "parameters"}``).
            config: call settings; ``None`` = ``GenerateConfig()``.

        Raises:
            RateLimited, ProviderUnavailable, ContextLengthExceeded, BadRequest: the call failed
                (see ``clinseek.models`` errors); nothing is retried here.
        """
        ...

    async def aclose(self) -> None:
        """Release connections. The model must not be used afterwards."""
        ...


__all__ = ["ChatModel"]
