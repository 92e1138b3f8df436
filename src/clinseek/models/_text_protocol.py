"""The text protocol: tool calling for endpoints without native tool calls.

The tools are listed in the system prompt, and the model acts by writing **exactly one** fenced
JSON block per reply::

    ```json
    {"tool": "ehr.run_sql_query", "arguments": {"sql_query": "SELECT 1"}}
    ```

Parsing is strict: the block must be fenced with ```` ```json ````, hold one JSON object with exactly
the keys ``tool`` (an offered canonical name) and ``arguments`` (an object). A reply with no such
block has no tool call (the loop reminds the model). Two blocks, bad JSON, extra keys or an
unknown tool give one ``ToolCall`` with ``error_kind`` set and an ``error`` that restates the format;
the loop returns that error to the model. Nothing is guessed. Tool results come back as user turns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._decode import TOO_DEEP, cut_calls, nests_too_deep
from ._messages import GenerateConfig, Message, ModelResponse, ToolCall
from ._names import ToolInfo, to_tool_infos
from ._protocol import ChatModel
from ._vision import accepts_images

TEXT_PROTOCOL_VERSION = "clinseek-text-actions-v1"
"""Recorded with results; bump when the instructions or the parser change."""

_BLOCK = re.compile(r"```json[ \t]*\r?\n(.*?)```", re.DOTALL)
_FORMAT = (
    'To call a tool, write exactly one fenced block: ```json\\n{"tool": "<tool name>", '
    '"arguments": {...}}\\n``` (one call per reply).'
)


def render_tool_instructions(specs: Sequence[ToolInfo]) -> str:
    """The system-prompt section that lists the tools and states the action format."""
    lines = [
        "# Tools",
        "You can call the tools below. To call one, end your reply with exactly one fenced JSON block:",
        "```json",
        '{"tool": "<tool name>", "arguments": {<arguments as a JSON object>}}',
        "```",
        "Write one call per reply, use the exact tool name, and wait for its result, which arrives in",
        "the next user turn. A reply without such a block calls no tool.",
        "",
        "Available tools (name, description, JSON schema of the arguments):",
    ]
    for spec in specs:
        schema = json.dumps(dict(spec.parameters), separators=(",", ":"), sort_keys=True)
        lines += [f"## {spec.name}", spec.description.strip(), f"arguments schema: {schema}", ""]
    return "\n".join(lines).rstrip() + "\n"


def parse_action(text: str, call_id: str, tool_names: Sequence[str]) -> list[ToolCall]:
    """The tool call in ``text``: ``[]`` when there is no ```` ```json ```` block, else one ``ToolCall``
    (with ``error_kind`` set when the block breaks the format)."""
    blocks = _BLOCK.findall(text)
    if not blocks:
        return []
    if len(blocks) > 1:
        return [_bad(call_id, "", "format", f"{len(blocks)} json blocks in one reply; {_FORMAT}", text)]
    body = blocks[0].strip()
    try:
        action = json.loads(body)
    except json.JSONDecodeError as err:
        return [_bad(call_id, "", "invalid_json", f"the json block is not valid JSON ({err.msg}); {_FORMAT}", body)]
    except RecursionError:  # ~1,000 nested brackets: json raises this, not a JSONDecodeError
        return [_bad(call_id, "", "invalid_json", f"the json block is nested too deeply to read; {_FORMAT}", body)]
    if not isinstance(action, dict) or set(action) != {"tool", "arguments"}:
        got = sorted(action) if isinstance(action, dict) else type(action).__name__
        return [_bad(call_id, "", "format", f'the action must have exactly the keys "tool" and "arguments", got {got}; {_FORMAT}', body)]
    tool, arguments = action["tool"], action["arguments"]
    if not isinstance(tool, str) or tool not in tool_names:
        return [_bad(call_id, str(tool), "unknown_tool", f"unknown tool {tool!r}; call one of: {', '.join(tool_names)}", body)]
    if not isinstance(arguments, dict):
        return [_bad(call_id, tool, "not_an_object", f'"arguments" must be a JSON object; {_FORMAT}', body)]
    if nests_too_deep(arguments):
        return [_bad(call_id, tool, "invalid_json", f"{TOO_DEEP}; {_FORMAT}", body)]
    return [ToolCall(id=call_id, name=tool, arguments=arguments)]


def _bad(call_id: str, name: str, kind: Any, problem: str, raw: str) -> ToolCall:
    return ToolCall(id=call_id, name=name or "(unparsed)", raw_arguments=raw, error_kind=kind, error=problem)


def render_messages(messages: Sequence[Message], specs: Sequence[ToolInfo]) -> list[Message]:
    """The conversation as plain turns: tool list appended to the system prompt, tool calls kept as
    the model's own text, tool results as user turns."""
    instructions = render_tool_instructions(specs)
    out: list[Message] = []
    pending = True  # the instructions go after the first system turn (or open the conversation)
    if not any(m.role == "system" for m in messages):
        out.append(Message.system(instructions))
        pending = False
    for message in messages:
        if message.role == "system" and pending:
            out.append(Message.system(f"{message.content}\n\n{instructions}"))
            pending = False
        elif message.role == "assistant":
            out.append(Message(role="assistant", content=_assistant_text(message)))
        elif message.role == "tool":
            label = "error from" if message.is_error else "result of"
            header = f"[{label} {message.name or 'tool'} (call {message.tool_call_id})]"
            out.append(Message.user(f"{header}\n{message.content}", images=list(message.images)))
        else:
            out.append(message)
    return out


def _assistant_text(message: Message) -> str:
    if not message.tool_calls or _BLOCK.search(message.content):
        return message.content
    blocks = [
        "```json\n" + json.dumps({"tool": c.name, "arguments": c.arguments}) + "\n```" for c in message.tool_calls
    ]
    return "\n".join([message.content, *blocks]).strip()


class TextProtocolModel:
    """Wraps any ``ChatModel`` so tools work through the text protocol instead of native tool calls."""

    supports_native_tools = False

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.supports_vision = accepts_images(inner)

    def __repr__(self) -> str:
        return f"TextProtocolModel({self.inner!r})"

    async def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        config: GenerateConfig | None = None,
    ) -> ModelResponse:
        """Render the tools into the prompt, call the inner model without tools, parse the action."""
        specs = to_tool_infos(tools)
        config = (config or GenerateConfig()).model_copy(update={"tool_choice": "auto"})
        rendered = render_messages(messages, specs) if specs else list(messages)
        response = await self.inner.generate(rendered, (), config)
        turn = 1 + sum(1 for m in messages if m.role == "assistant")
        calls = parse_action(response.message.content, f"text_{turn}", [s.name for s in specs]) if specs else []
        calls = cut_calls(calls, response.stop_reason == "max_tokens")
        message = response.message.model_copy(update={"tool_calls": calls})
        stop = "tool_calls" if calls else response.stop_reason
        return response.model_copy(update={"message": message, "stop_reason": stop})

    async def aclose(self) -> None:
        """Close the inner model."""
        await self.inner.aclose()


__all__ = ["TEXT_PROTOCOL_VERSION", "TextProtocolModel", "parse_action", "render_messages", "render_tool_instructions"]
