"""Canonical tool specs and the one tool-name map per provider.

Tools are named canonically with dots (``ehr.run_sql_query``, ``browser.search``). OpenAI and
Anthropic (also on Bedrock and Vertex) only accept ``^[a-zA-Z0-9_-]{1,64}$``, so on the wire every
``.`` becomes ``__`` (``ehr__run_sql_query``); the inspect_ai adapter names its tools the same way. The map is built per request from the tool list,
checked to be one-to-one, and decoded through its inverse dictionary, never by string repair:
a wire name that is not in the map is *unknown* (the call gets an ``unknown_tool`` error that the
loop returns to the model). The text protocol uses the canonical names unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError

_CANONICAL = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


@dataclass(frozen=True, slots=True)
class WireNameRule:
    """How a provider spells tool names: ``.`` → ``separator``; the result must match ``pattern``."""

    separator: str
    pattern: re.Pattern[str]
    max_length: int


_SAFE = WireNameRule("__", re.compile(r"^[a-zA-Z0-9_-]+$"), 64)
_DOTTED = WireNameRule(".", re.compile(r"^[A-Za-z0-9_.-]+$"), 128)

WIRE_NAME_RULES: Mapping[str, WireNameRule] = {
    "openai": _SAFE,
    "anthropic": _SAFE,
    "bedrock": _SAFE,
    "vertex": _SAFE,
    "inspect": _SAFE,  # inspect_ai hands tool names to every provider it serves: the strictest rule
    "text": _DOTTED,
}
"""The one place that says how each provider spells tool names (unlisted providers use ``openai``'s)."""


def _rule(provider: str) -> WireNameRule:
    return WIRE_NAME_RULES.get(provider, _SAFE)


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool as offered to a model: canonical dotted ``name``, ``description``, JSON-schema ``parameters``."""

    name: str
    description: str
    parameters: Mapping[str, Any]


def to_tool_infos(tools: Iterable[Mapping[str, Any]]) -> list[ToolInfo]:
    """Read tool schemas: OpenAI-style ``{"type": "function", "function": {...}}`` or flat ``{"name", ...}``.

    Raises:
        ModelError: a schema without a ``name``, or a name given twice.
    """
    specs: list[ToolInfo] = []
    for index, tool in enumerate(tools):
        body = tool.get("function", tool) if tool.get("type", "function") == "function" else tool
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise ModelError(f"tool schema #{index} has no 'name': {sorted(tool)}")
        params = body.get("parameters") or {"type": "object", "properties": {}}
        specs.append(ToolInfo(name=name, description=str(body.get("description", "")), parameters=params))
    seen = [s.name for s in specs]
    duplicates = sorted({n for n in seen if seen.count(n) > 1})
    if duplicates:
        raise ModelError(f"tool names given twice: {duplicates}")
    return specs


class ToolNameMap:
    """The one-to-one map between canonical tool names and one provider's wire names.

    Raises:
        ModelError: a canonical name that is not dotted identifiers, that becomes an invalid or too
            long wire name, or two canonical names that would share a wire name.
    """

    def __init__(self, provider: str, names: Iterable[str]) -> None:
        self.provider = provider
        self.rule = _rule(provider)
        to_wire: dict[str, str] = {}
        for name in names:
            if not _CANONICAL.match(name):
                raise ModelError(f"tool name {name!r} is not dotted identifiers (letters, digits, _ and -)")
            wire = name.replace(".", self.rule.separator)
            if not self.rule.pattern.match(wire) or len(wire) > self.rule.max_length:
                raise ModelError(f"tool name {name!r} becomes {wire!r}, which {provider} does not accept")
            to_wire[name] = wire
        from_wire = {wire: name for name, wire in to_wire.items()}
        if len(from_wire) != len(to_wire):
            clashes = sorted(n for n in to_wire if list(to_wire.values()).count(to_wire[n]) > 1)
            raise ModelError(f"tool names {clashes} share a wire name for {provider}")
        self._to_wire = to_wire
        self._from_wire = from_wire

    def to_wire(self, name: str) -> str:
        """The wire name of ``name``; a name outside the map (e.g. an unknown name the model sent
        earlier, replayed in history) is passed through only if the provider accepts it as is."""
        if name in self._to_wire:
            return self._to_wire[name]
        if self.rule.pattern.match(name) and len(name) <= self.rule.max_length:
            return name
        return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[: self.rule.max_length] or "unknown"

    def from_wire(self, wire: str) -> str | None:
        """The canonical name of ``wire``, or ``None`` when no offered tool has that wire name."""
        return self._from_wire.get(wire)

    def canonical_names(self) -> list[str]:
        """The canonical names in the map, in the order given."""
        return list(self._to_wire)


def forced_wire_name(name: str, names: ToolNameMap) -> str:
    """The wire name of a tool forced by ``GenerateConfig.tool_choice``.

    Raises:
        ModelError: ``name`` is not one of the offered tools.
    """
    if name not in names.canonical_names():
        raise ModelError(f"tool_choice {name!r} is not one of the offered tools {names.canonical_names()}")
    return names.to_wire(name)


def wire_name(provider: str, name: str) -> str:
    """The wire spelling of one canonical tool name for ``provider`` (e.g. ``ehr.finish`` → ``ehr__finish``)."""
    return ToolNameMap(provider, [name]).to_wire(name)


__all__ = [
    "WIRE_NAME_RULES",
    "ToolInfo",
    "ToolNameMap",
    "WireNameRule",
    "forced_wire_name",
    "to_tool_infos",
    "wire_name",
]
