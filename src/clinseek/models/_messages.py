"""Provider-independent conversation records: messages, tool calls, usage, responses, call settings.

These are the only shapes the agent loop, the runner and the results files see; every provider
translates them to and from its wire format. All are frozen pydantic models with ``extra="forbid"``.
Images are kept **by reference** (a file path); providers read and encode the bytes at request time
and never store them in a record.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..records import CallAttempt, ToolCallSource, Usage

Role = Literal["system", "user", "assistant", "tool"]
StopReason = Literal["tool_calls", "end_turn", "max_tokens", "content_filter", "context_length", "other"]
ToolCallErrorKind = Literal["unknown_tool", "invalid_json", "not_an_object", "format"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ImageRef(_Frozen):
    """An image attached to a message, by reference."""

    path: str
    """Path of the image file (PNG, JPEG, GIF or WebP) on this machine; read only when a request is sent."""
    media_type: str | None = None
    """MIME type such as ``"image/png"``; ``None`` = guessed from the file suffix."""


class ReasoningBlock(_Frozen):
    """One provider reasoning block, kept verbatim so it can be replayed (Anthropic thinking requires
    the signed blocks of a tool-use turn to be sent back unchanged)."""

    kind: Literal["thinking", "redacted_thinking"]
    text: str
    """The thinking text, or the opaque ``data`` of a redacted block."""
    signature: str | None = None
    """The block's signature (thinking blocks)."""


class ToolCall(_Frozen):
    """One tool call requested by the model, with its canonical (dotted) tool name.

    A call the harness cannot execute as requested keeps ``error_kind`` and ``error``: the loop
    must answer it with an error result showing ``error`` to the model (never repair it).
    """

    id: str
    """The provider's call id (``call_…``/``toolu_…``), or ``text_<turn>`` for the text protocol."""
    name: str
    """Canonical dotted tool name (``ehr.run_sql_query``); the wire name verbatim when it is unknown."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Parsed JSON arguments; ``{}`` when they did not parse (see ``raw_arguments``)."""
    raw_arguments: str | None = None
    """The argument text as sent by the model, kept only when it was not a JSON object."""
    error_kind: ToolCallErrorKind | None = None
    """Why the call cannot be executed: ``unknown_tool``, ``invalid_json``, ``not_an_object``, ``format``."""
    error: str | None = None
    """A message for the model explaining what was wrong and how to fix it."""


class Message(_Frozen):
    """One conversation turn.

    ``system``/``user`` carry ``content`` (and user turns optional ``images``); ``assistant`` may
    carry ``tool_calls`` and ``reasoning``; ``tool`` answers one call (``tool_call_id``) and may be
    an error (``is_error``) or carry images (sent to providers that accept them in tool results,
    otherwise as a following user turn).
    """

    role: Role
    content: str = ""
    """The text of the turn (may be empty for an assistant turn with only tool calls)."""
    images: list[ImageRef] = Field(default_factory=list)
    """Images by reference (user and tool turns)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Calls requested in an assistant turn, in the model's order."""
    tool_call_id: str | None = None
    """For a ``tool`` turn: the id of the call it answers."""
    name: str | None = None
    """For a ``tool`` turn: the canonical tool name (informative; providers match on the id)."""
    is_error: bool = False
    """For a ``tool`` turn: the result is an error the model should react to."""
    reasoning: str | None = None
    """Reasoning / thinking text the provider returned with an assistant turn, if any."""
    reasoning_blocks: list[ReasoningBlock] = Field(default_factory=list)
    """Signed / redacted reasoning blocks (Anthropic), replayed verbatim on later turns."""

    @classmethod
    def system(cls, content: str) -> Message:
        """A system turn."""
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str, images: list[ImageRef] | None = None) -> Message:
        """A user turn, optionally with images by reference."""
        return cls(role="user", content=content, images=images or [])

    @classmethod
    def tool(cls, call: ToolCall, content: str, *, is_error: bool = False) -> Message:
        """The result of ``call`` (text the model sees)."""
        return cls(role="tool", content=content, tool_call_id=call.id, name=call.name, is_error=is_error)


class ModelResponse(_Frozen):
    """What one ``ChatModel.generate`` call returned."""

    model: str
    """The full model name that was called, ``provider:model``."""
    message: Message
    """The assistant turn (``role="assistant"``), with tool calls decoded to canonical names."""
    usage: Usage
    cost_usd: Decimal | None = None
    """Cost from the price table; ``None`` when the model's price is unknown (never 0 for unknown)."""
    latency_s: float
    """Wall time of the HTTP call, seconds."""
    stop_reason: StopReason
    """Canonical reason the model stopped."""
    raw_stop_reason: str | None = None
    """The provider's own stop / finish reason string."""
    provider_response_id: str | None = None
    """The provider's response id (``chatcmpl-…`` / ``msg_…``)."""
    provider_model: str | None = None
    """The model the provider says answered (may differ from the requested alias)."""
    request_id: str | None = None
    """The provider's request id header (``x-request-id`` / ``request-id``), for support tickets."""
    usage_reported: bool = True
    """False when the reply carried no token usage (``usage`` is then zeros and ``cost_usd`` ``None``)."""
    tool_calls_source: ToolCallSource | None = None
    """Where the tool calls were read: ``native`` (the provider's tool-call fields) or ``content``
    (a JSON / ``<tool_call>`` call written in the text by a server that does not parse it);
    ``None`` when the reply has no tool call."""
    attempts: list[CallAttempt] = Field(default_factory=list)
    """Every HTTP attempt of this call, filled by a retrying wrapper; empty when none tracked them."""


class GenerateConfig(_Frozen):
    """Settings of one generate call. ``None`` = the provider's default."""

    max_output_tokens: int = 8192
    """Cap on generated tokens per call (reasoning included where the provider counts it)."""
    temperature: float | None = None
    top_p: float | None = None
    timeout_s: float = 180.0
    """Wall-clock limit of one call, seconds; exceeding it raises ``ProviderUnavailable``."""
    seed: int | None = None
    """Sampling seed where the provider supports one (OpenAI-compatible); ignored elsewhere."""
    tool_choice: Literal["auto", "required", "none"] | str = "auto"
    """``auto``, ``required`` (must call some tool), ``none``, or a canonical tool name to force."""
    parallel_tool_calls: bool | None = None
    """Allow several tool calls in one turn; ``None`` = provider default (allowed)."""
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    """OpenAI reasoning models: effort level."""
    thinking_budget_tokens: int | None = None
    """Anthropic extended thinking: token budget (>= 1024); ``None`` = thinking off."""
    stop: list[str] = Field(default_factory=list)
    """Stop sequences."""


__all__ = [
    "CallAttempt",
    "GenerateConfig",
    "ImageRef",
    "Message",
    "ModelResponse",
    "ReasoningBlock",
    "Role",
    "StopReason",
    "ToolCall",
    "ToolCallErrorKind",
    "ToolCallSource",
    "Usage",
]
