"""Canonical records ⇄ OpenAI Chat Completions JSON (no SDK import: plain dicts and duck typing)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._decode import decode_tool_call
from ._images import load_image
from ._messages import GenerateConfig, Message, StopReason, ToolCall, Usage
from ._names import ToolNameMap, ToolSpec, forced_wire_name

_STOP: dict[str, StopReason] = {
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


def encode_messages(messages: Sequence[Message], names: ToolNameMap) -> list[dict[str, Any]]:
    """Chat Completions ``messages``; images of tool turns follow the tool run as one user turn."""
    out: list[dict[str, Any]] = []
    pending_images: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "tool" and pending_images:
            out.append({"role": "user", "content": pending_images})
            pending_images = []
        if message.role == "tool":
            out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content})
            if message.images:
                pending_images += [{"type": "text", "text": f"Images returned by tool call {message.tool_call_id}:"}]
                pending_images += [_image_part(m) for m in message.images]
        elif message.role == "assistant":
            out.append(_assistant(message, names))
        elif message.images:
            parts = [{"type": "text", "text": message.content}] + [_image_part(m) for m in message.images]
            out.append({"role": message.role, "content": parts})
        else:
            out.append({"role": message.role, "content": message.content})
    if pending_images:
        out.append({"role": "user", "content": pending_images})
    return out


def _assistant(message: Message, names: ToolNameMap) -> dict[str, Any]:
    # content may be null only when the turn carries tool calls
    entry: dict[str, Any] = {"role": "assistant", "content": message.content or (None if message.tool_calls else "")}
    if message.tool_calls:
        entry["tool_calls"] = [_call(call, names) for call in message.tool_calls]
    return entry


def _call(call: ToolCall, names: ToolNameMap) -> dict[str, Any]:
    arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    return {"id": call.id, "type": "function", "function": {"name": names.to_wire(call.name), "arguments": arguments}}


def _image_part(image: Any) -> dict[str, Any]:
    media_type, data = load_image(image)
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}


def encode_tools(specs: Sequence[ToolSpec], names: ToolNameMap) -> list[dict[str, Any]]:
    """Chat Completions ``tools`` with wire names."""
    return [
        {
            "type": "function",
            "function": {"name": names.to_wire(s.name), "description": s.description, "parameters": dict(s.parameters)},
        }
        for s in specs
    ]


def request_options(
    config: GenerateConfig, names: ToolNameMap, has_tools: bool, max_tokens_param: str
) -> dict[str, Any]:
    """The sampling / tool-choice fields of a request (only the ones that are set)."""
    options: dict[str, Any] = {max_tokens_param: config.max_output_tokens}
    for key in ("temperature", "top_p", "seed", "reasoning_effort"):
        value = getattr(config, key)
        if value is not None:
            options[key] = value
    if config.stop:
        options["stop"] = list(config.stop)
    if has_tools:
        choice = config.tool_choice
        if choice in ("auto", "required", "none"):
            options["tool_choice"] = choice
        else:
            options["tool_choice"] = {"type": "function", "function": {"name": forced_wire_name(choice, names)}}
        if config.parallel_tool_calls is not None:
            options["parallel_tool_calls"] = config.parallel_tool_calls
    return options


def decode_message(message: Any, names: ToolNameMap) -> Message:
    """The assistant ``Message`` of a Chat Completions choice (tool calls decoded, never repaired)."""
    calls = []
    for call in message.tool_calls or []:
        function = getattr(call, "function", None)
        if function is None:  # a non-function (custom) tool call: not something we offered
            calls.append(decode_tool_call(call.id, str(getattr(call, "type", "?")), None, names))
        else:
            calls.append(decode_tool_call(call.id, function.name, function.arguments, names))
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    return Message(
        role="assistant",
        content=message.content or "",
        tool_calls=calls,
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
    )


def decode_usage(usage: Any) -> Usage:
    """Canonical usage from a Chat Completions ``usage`` (``prompt_tokens`` includes cached tokens)."""
    if usage is None:
        return Usage()
    details: Mapping[str, Any] | Any = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    written = getattr(details, "cache_write_tokens", None) or 0
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_input_tokens=cached,
        cache_write_tokens=written,
    )


def stop_reason(finish_reason: str | None, has_calls: bool) -> StopReason:
    """Canonical stop reason; a reply with tool calls is ``tool_calls`` whatever the server said."""
    if has_calls:
        return "tool_calls"
    return _STOP.get(finish_reason or "", "other")


__all__ = ["decode_message", "decode_usage", "encode_messages", "encode_tools", "request_options", "stop_reason"]
