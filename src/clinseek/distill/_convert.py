"""A runner trajectory → OpenAI-style training messages, with the run's tool schemas and protocol checks.

Tool names are spelled as the chosen provider puts them on the wire (one map, ``ToolNameMap``:
``ehr.finish`` → ``ehr__finish`` for OpenAI-compatible endpoints such as vLLM), so a student served
behind that API sees exactly the names it was trained on. Arguments stay objects (chat templates
such as Qwen3.5's iterate over them); they are never re-serialised to strings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..agent import FINISH_TOOL
from ..models import Message, ToolNameMap
from ..tools import tool_schemas


@dataclass(frozen=True, slots=True)
class Converted:
    """One trajectory converted for training, with what the filters need to know about it."""

    messages: list[dict[str, Any]]
    system: str
    protocol_errors: list[str] = field(default_factory=list)
    """Each break of the tool protocol (malformed or unknown call, turn without a call, ...)."""
    has_images: bool = False
    tool_errors: int = 0
    assistant_turns: int = 0
    tool_calls: int = 0


def sha256_text(text: str) -> str:
    """SHA-256 hex digest of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the form every hash in a dataset is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def wire_tools(names: Sequence[str], provider: str) -> list[dict[str, Any]]:
    """OpenAI function schemas of ``names`` (the tool registry) with ``provider``'s wire names.

    Raises:
        RegistryError: a tool name that is not registered.
        ModelError: names the provider cannot spell one-to-one.
    """
    names_map = ToolNameMap(provider, names)
    out = []
    for schema in tool_schemas(names):
        function = dict(schema["function"])
        function["name"] = names_map.to_wire(function["name"])
        out.append({"type": "function", "function": function})
    return out


class _State:
    def __init__(self, offered: set[str], names: ToolNameMap, keep_reasoning: bool) -> None:
        self.offered = offered
        self.names = names
        self.keep_reasoning = keep_reasoning
        self.pending: list[str] = []
        self.out: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.images = False
        self.tool_errors = 0
        self.turns = 0
        self.calls = 0
        self.finishes = 0

    def add(self, index: int, message: Message) -> None:
        self.images = self.images or bool(message.images)
        if message.role == "assistant":
            self.assistant(index, message)
        elif message.role == "tool":
            self.tool(index, message)
        else:
            if self.pending and message.role == "user":
                self.errors.append(f"message {index}: user turn while calls {self.pending} are unanswered")
            self.out.append({"role": message.role, "content": message.content})

    def assistant(self, index: int, message: Message) -> None:
        self.turns += 1
        if self.pending:
            self.errors.append(f"message {index}: calls {self.pending} were never answered")
            self.pending = []
        if not message.tool_calls:
            self.errors.append(f"message {index}: assistant turn without a tool call")
        entry: dict[str, Any] = {"role": "assistant", "content": message.content}
        if self.keep_reasoning and message.reasoning:
            entry["reasoning_content"] = message.reasoning
        calls = []
        for call in message.tool_calls:
            self.calls += 1
            self.finishes += call.name == FINISH_TOOL
            if call.error_kind is not None:
                self.errors.append(f"message {index}: call {call.id} {call.name!r}: {call.error_kind}")
            elif call.name not in self.offered:
                self.errors.append(f"message {index}: call {call.id} to a tool not offered: {call.name!r}")
            function = {"name": self.names.to_wire(call.name), "arguments": dict(call.arguments)}
            calls.append({"id": call.id, "type": "function", "function": function})
            self.pending.append(call.id)
        if calls:
            entry["tool_calls"] = calls
        self.out.append(entry)

    def tool(self, index: int, message: Message) -> None:
        if message.tool_call_id not in self.pending:
            self.errors.append(f"message {index}: tool result for unknown call {message.tool_call_id!r}")
        else:
            self.pending.remove(message.tool_call_id)
        self.tool_errors += message.is_error
        self.out.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content})


def convert_messages(raw: Sequence[dict[str, Any]], offered: Sequence[str], *, provider: str = "openai",
                     keep_reasoning: bool = False) -> Converted:
    """Convert a ``ResultRow.messages`` list (canonical ``clinseek.models.Message`` dumps).

    Args:
        raw: the trajectory as the runner wrote it.
        offered: canonical names of the tools the run offered (``run_manifest.json`` ``tools``).
        provider: provider whose wire names the output uses.
        keep_reasoning: keep assistant reasoning text as ``reasoning_content``.

    Returns:
        The messages plus every tool-protocol break found: a call the harness could not read
        (``error_kind``), a call to a tool not offered, an assistant turn without a call (the loop
        sent a reminder), a result for an unknown call, a call never answered, more than one
        ``ehr.finish`` call (an invalid answer was corrected).

    Raises:
        ValueError: the trajectory does not start with a system then a user turn, or a message is
            not a valid ``Message`` (the caller refuses that run as ``malformed_trajectory``).
    """
    try:
        messages = [Message.model_validate(m) for m in raw]
    except ValidationError as err:
        raise ValueError(f"a message is not a valid clinseek message: {err.errors()[0]['msg']}") from err
    if len(messages) < 2 or messages[0].role != "system" or messages[1].role != "user":
        raise ValueError("a trajectory must start with a system turn then a user turn")
    state = _State(set(offered), ToolNameMap(provider, offered), keep_reasoning)
    for index, message in enumerate(messages):
        state.add(index, message)
    if state.pending:
        state.errors.append(f"calls {state.pending} were never answered")
    if state.finishes > 1:
        state.errors.append(f"{state.finishes} {FINISH_TOOL} calls (an invalid answer was corrected)")
    return Converted(
        messages=state.out, system=messages[0].content, protocol_errors=state.errors, has_images=state.images,
        tool_errors=state.tool_errors, assistant_turns=state.turns, tool_calls=state.calls,
    )
