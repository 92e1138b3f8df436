"""Canonical records ⇄ OpenAI Chat Completions JSON (no SDK import: plain dicts and duck typing)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ._content import calls_in_content, split_reasoning
from ._decode import decode_tool_call
from ._images import load_image
from ._messages import GenerateConfig, Message, StopReason, ToolCall, ToolCallSource, Usage
from ._names import ToolInfo, ToolNameMap, forced_wire_name

_STOP: dict[str, StopReason] = {
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


class _WireIds:
    """Tool-call ids as a request sends them: unique across the whole history.

    A server can repeat an id on a later turn (Kimi K2's ``functions.<name>:<n>`` counts per turn; a server
    that sends none gets the same synthesized ``call0000n`` every turn), and OpenAI, DeepSeek and Mistral
    refuse a history in which one id is called or answered twice (HTTP 400 "Duplicate value for
    'tool_call_id'"). The first use of an id goes as it is (the records, and the cached prefix, keep it);
    a later one goes as ``dup000001``... (nine letters and digits: Mistral's rule), and so do the results
    of that turn's call.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.turn: dict[str, str] = {}
        self.count = 0

    def calls(self, message: Message) -> list[str]:
        """The wire ids of an assistant turn's calls (a new turn: results map to these from now on)."""
        self.turn = {}
        wire_ids = []
        for call in message.tool_calls:
            wire = call.id
            while wire in self.used:
                self.count += 1
                wire = f"dup{self.count:06d}"
            self.used.add(wire)
            self.turn.setdefault(call.id, wire)
            wire_ids.append(wire)
        return wire_ids

    def result(self, call_id: str) -> str:
        return self.turn.get(call_id, call_id)


def encode_messages(messages: Sequence[Message], names: ToolNameMap) -> list[dict[str, Any]]:
    """Chat Completions ``messages``; images of tool turns follow the tool run as one user turn; tool-call
    ids unique across the history (:class:`_WireIds`)."""
    out: list[dict[str, Any]] = []
    pending_images: list[dict[str, Any]] = []
    ids = _WireIds()
    for message in messages:
        if message.role != "tool" and pending_images:
            out.append({"role": "user", "content": pending_images})
            pending_images = []
        if message.role == "tool":
            call_id = ids.result(message.tool_call_id or "")
            out.append({"role": "tool", "tool_call_id": call_id, "content": message.content})
            if message.images:
                pending_images += [{"type": "text", "text": f"Images returned by tool call {call_id}:"}]
                pending_images += [_image_part(m) for m in message.images]
        elif message.role == "assistant":
            out.append(_assistant(message, names, ids.calls(message)))
        elif message.images:
            parts = [{"type": "text", "text": message.content}] + [_image_part(m) for m in message.images]
            out.append({"role": message.role, "content": parts})
        else:
            out.append({"role": message.role, "content": message.content})
    if pending_images:
        out.append({"role": "user", "content": pending_images})
    return out


def _assistant(message: Message, names: ToolNameMap, wire_ids: list[str]) -> dict[str, Any]:
    # content is always a string, "" beside tool calls: llama-cpp-python answers null with HTTP 500
    # and some templates break when the key is missing (docs/models.md, "Requests")
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        entry["tool_calls"] = [_call(call, names, wire) for call, wire in zip(message.tool_calls, wire_ids, strict=True)]
    return entry


def _call(call: ToolCall, names: ToolNameMap, wire_id: str) -> dict[str, Any]:
    # arguments are always a JSON object text: vLLM and SGLang parse them to render the template and
    # refuse anything else with HTTP 400; arguments that did not parse go back as {} (the model was
    # told why in the error result that follows, and the record keeps the text in raw_arguments)
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return {"id": wire_id, "type": "function", "function": {"name": names.to_wire(call.name), "arguments": arguments}}


def _image_part(image: Any) -> dict[str, Any]:
    media_type, data = load_image(image)
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}


def encode_tools(specs: Sequence[ToolInfo], names: ToolNameMap) -> list[dict[str, Any]]:
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


def decode_message(
    message: Any, names: ToolNameMap, specs: Sequence[ToolInfo] = ()
) -> tuple[Message, ToolCallSource | None]:
    """The assistant ``Message`` of a Chat Completions choice, and where its tool calls came from.

    Native ``tool_calls`` are decoded (never repaired); a call id that is missing or repeated is
    replaced by a synthesized one. ``reasoning_content`` / ``reasoning`` and ``<think>`` blocks in
    the text become ``reasoning``. When tools were offered and the server sent no native call, a
    call written in the text is read (:func:`~clinseek.models._content.calls_in_content`, its values
    typed from the offered tools' ``specs`` where the shape writes them as text); the source is then ``content``.
    """
    content, think = split_reasoning(_text(_get(message, "content")))
    calls: list[ToolCall] = []
    seen: set[str] = set()
    native = _get(message, "tool_calls")
    if isinstance(native, dict) and "function" in native:  # one call sent as an object, not a list: read, not dropped
        native = [native]
    for index, call in enumerate(native if isinstance(native, list) else []):
        call_id = _get(call, "id")
        call_id = call_id if isinstance(call_id, str) and call_id and call_id not in seen else f"call{index:04d}n"
        seen.add(call_id)
        function = _get(call, "function")
        if function is None:  # a non-function (custom) tool call: not something we offered
            calls.append(decode_tool_call(call_id, str(_get(call, "type") or "?"), None, names))
        else:
            calls.append(decode_tool_call(call_id, str(_get(function, "name")), _get(function, "arguments"), names))
    source: ToolCallSource | None = "native" if calls else None
    if not calls:
        calls, content = calls_in_content(content, names, specs) if content else ([], content)
        source = "content" if calls else None
    reasoning = _get(message, "reasoning_content") or _get(message, "reasoning")
    parts = [r for r in (reasoning if isinstance(reasoning, str) else None, think) if r]
    message_out = Message(role="assistant", content=content, tool_calls=calls, reasoning="\n\n".join(parts) or None)
    return message_out, source


def _get(value: Any, key: str) -> Any:
    """A field of a reply's JSON object (a dict) or of an SDK object; ``None`` when it is missing or the
    value is neither (servers that send a string where an object belongs)."""
    return value.get(key) if isinstance(value, dict) else getattr(value, key, None)


def _text(content: Any) -> str:
    """The reply text: a string, or the text parts of a list of content parts; ``""`` for none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(_get(p, "text") or "") for p in content if _get(p, "type") in ("text", None))
    return ""


def decode_usage(usage: Any) -> Usage | None:
    """Canonical usage from a Chat Completions ``usage`` (``prompt_tokens`` includes cached tokens);
    ``None`` when the reply carried none, or counts that are no whole numbers (``5.5``): not reported, so the
    call's cost is unknown rather than the reply lost."""
    if usage is None or _get(usage, "prompt_tokens") is None:
        return None
    details: Mapping[str, Any] | Any = _get(usage, "prompt_tokens_details")
    cached = _get(details, "cached_tokens") or 0 if details is not None else 0
    written = _get(details, "cache_write_tokens") or 0 if details is not None else 0
    try:
        return Usage(
            input_tokens=_get(usage, "prompt_tokens") or 0,
            output_tokens=_get(usage, "completion_tokens") or 0,
            cached_input_tokens=cached,
            cache_write_tokens=written,
        )
    except ValidationError:
        return None


def stop_reason(finish_reason: str | None, has_calls: bool) -> StopReason:
    """Canonical stop reason; a reply with tool calls is ``tool_calls`` whatever the server said."""
    if has_calls:
        return "tool_calls"
    return _STOP.get(finish_reason or "", "other")


__all__ = ["decode_message", "decode_usage", "encode_messages", "encode_tools", "request_options", "stop_reason"]
