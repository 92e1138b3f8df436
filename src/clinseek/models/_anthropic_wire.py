"""Canonical records ⇄ Anthropic Messages JSON, with prompt-cache breakpoints (no SDK import)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._decode import decode_tool_call, scrub_surrogates
from ._images import load_image
from ._messages import GenerateConfig, ImageRef, Message, ReasoningBlock, StopReason, Usage
from ._names import ToolInfo, ToolNameMap, forced_wire_name

_CACHE = {"type": "ephemeral"}
_STOP: dict[str, StopReason] = {
    "tool_use": "tool_calls",
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "pause_turn": "other",
    "max_tokens": "max_tokens",
    "refusal": "content_filter",
    "model_context_window_exceeded": "context_length",
}


def encode_system(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The top-level ``system`` blocks (all system turns, in order), the last one a cache breakpoint."""
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": m.content} for m in messages if m.role == "system" and m.content
    ]
    if blocks:
        blocks[-1]["cache_control"] = dict(_CACHE)
    return blocks


def encode_messages(messages: Sequence[Message], names: ToolNameMap) -> list[dict[str, Any]]:
    """Alternating user/assistant turns; tool results become ``tool_result`` blocks of a user turn;
    consecutive turns of one role are merged; the last block of the last turn is a cache breakpoint."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, names)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if not turn["content"]:
            turn["content"].append({"type": "text", "text": "(empty)"})
    if turns and turns[-1]["role"] == "user":
        turns[-1]["content"][-1]["cache_control"] = dict(_CACHE)
    return turns


def _blocks(message: Message, names: ToolNameMap) -> list[dict[str, Any]]:
    if message.role == "tool":
        content: list[dict[str, Any]] = [{"type": "text", "text": message.content or "(no output)"}]
        content += [_image(i) for i in message.images]
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.role == "assistant":
        blocks += [_reasoning(b) for b in message.reasoning_blocks]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks += [_image(i) for i in message.images]
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": names.to_wire(call.name), "input": call.arguments})
    return blocks


def _reasoning(block: ReasoningBlock) -> dict[str, Any]:
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.text}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature or ""}


def _image(image: ImageRef) -> dict[str, Any]:
    media_type, data = load_image(image)
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def encode_tools(specs: Sequence[ToolInfo], names: ToolNameMap) -> list[dict[str, Any]]:
    """Messages-API ``tools`` with wire names; the last one is a cache breakpoint."""
    tools: list[dict[str, Any]] = [
        {"name": names.to_wire(s.name), "description": s.description, "input_schema": dict(s.parameters)} for s in specs
    ]
    if tools:
        tools[-1]["cache_control"] = dict(_CACHE)
    return tools


def request_options(config: GenerateConfig, names: ToolNameMap, has_tools: bool) -> dict[str, Any]:
    """``max_tokens``, sampling, thinking and tool-choice fields (only those set)."""
    options: dict[str, Any] = {"max_tokens": config.max_output_tokens}
    if config.temperature is not None:
        options["temperature"] = config.temperature
    if config.top_p is not None:
        options["top_p"] = config.top_p
    if config.stop:
        options["stop_sequences"] = list(config.stop)
    if config.thinking_budget_tokens is not None:
        options["thinking"] = {"type": "enabled", "budget_tokens": config.thinking_budget_tokens}
    if has_tools:
        choice: dict[str, Any]
        if config.tool_choice in ("auto", "required", "none"):
            choice = {"type": {"auto": "auto", "required": "any", "none": "none"}[config.tool_choice]}
        else:
            choice = {"type": "tool", "name": forced_wire_name(config.tool_choice, names)}
        if config.parallel_tool_calls is False and choice["type"] != "none":
            choice["disable_parallel_tool_use"] = True
        options["tool_choice"] = choice
    return options


def decode_content(blocks: Sequence[Any], names: ToolNameMap) -> Message:
    """The assistant ``Message`` of a Messages-API reply (text joined, thinking kept, calls decoded)."""
    texts: list[str] = []
    reasoning: list[ReasoningBlock] = []
    calls = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text if isinstance(block.text, str) else "")  # a gateway's "text": null
        elif kind == "thinking":
            reasoning.append(ReasoningBlock(kind="thinking", text=block.thinking, signature=block.signature))
        elif kind == "redacted_thinking":
            reasoning.append(ReasoningBlock(kind="redacted_thinking", text=block.data))
        elif kind == "tool_use":
            calls.append(decode_tool_call(block.id, block.name, block.input, names))
    return Message(
        role="assistant",
        content=scrub_surrogates("".join(texts)),
        tool_calls=calls,
        reasoning="\n".join(b.text for b in reasoning if b.kind == "thinking") or None,
        reasoning_blocks=reasoning,
    )


def decode_usage(usage: Any) -> Usage:
    """Canonical usage: Anthropic's ``input_tokens`` excludes cache reads/writes, so they are added."""
    if usage is None:
        return Usage()
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return Usage(
        input_tokens=(usage.input_tokens or 0) + read + written,
        output_tokens=usage.output_tokens or 0,
        cached_input_tokens=read,
        cache_write_tokens=written,
    )


def stop_reason(raw: str | None, has_calls: bool) -> StopReason:
    """Canonical stop reason; a reply with tool calls is ``tool_calls``."""
    if has_calls:
        return "tool_calls"
    return _STOP.get(raw or "", "other")


__all__ = [
    "decode_content",
    "decode_usage",
    "encode_messages",
    "encode_system",
    "encode_tools",
    "request_options",
    "stop_reason",
]
