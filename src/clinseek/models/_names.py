"""Canonical tool specs and the one tool-name map per provider.

Tools are named canonically with dots (``ehr.run_sql_query``, ``browser.search``). OpenAI and
Anthropic (also on Bedrock and Vertex) only accept ``^[a-zA-Z0-9_-]{1,64}$``, so on the wire every
``.`` becomes ``__`` (``ehr__run_sql_query``); the inspect_ai adapter names its tools the same way. The map is built once
per tool list and provider (:func:`tool_set`: a loop offers the same list on every call), checked to be one-to-one, and decoded through its inverse dictionary, never by string repair:
a wire name that is not in the map is *unknown* (the call gets an ``unknown_tool`` error that the
loop returns to the model). The text protocol uses the canonical names unchanged.
"""

from __future__ import annotations

import copy
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True, eq=False)
class ToolSet:
    """One tool list as one provider is offered it: its specs, its name map, and what each request
    encoding derives from them once (:meth:`encoded`), shared by every call that offers the same list.

    Built by :func:`tool_set`; never mutated after (the derived encodings are memoised by kind).
    """

    specs: tuple[ToolInfo, ...]
    names: ToolNameMap
    _encoded: dict[str, Any] = field(default_factory=dict)

    def encoded(self, kind: str, encode: Callable[[ToolSet], Any]) -> Any:
        """``encode(self)``, computed on the first call for ``kind`` and reused after (e.g. the tools'
        JSON text of one wire format). ``encode`` must depend on this tool set only."""
        try:
            return self._encoded[kind]
        except KeyError:
            value = self._encoded.setdefault(kind, encode(self))
            return value


_TOOL_SETS: OrderedDict[tuple[str, tuple[str, ...]], tuple[list[Any], ToolSet]] = OrderedDict()
_TOOL_SETS_MAX = 64
_TOOL_SETS_LOCK = threading.Lock()


def tool_set(provider: str, tools: Sequence[Mapping[str, Any]]) -> ToolSet:
    """The :class:`ToolSet` of ``tools`` for ``provider``: built once per tool list, then reused.

    The agent loop offers the same tools on every call of a run; reading the schemas, checking the
    wire names and encoding the tools' JSON cost ~0.45 ms per call for the 16 EHR tools. Entries are
    keyed by the provider and the tools' names and kept with a private deep copy of the schemas: a
    list whose schemas differ in anything (a description, a parameter) from the cached copy is
    rebuilt, never served stale. At most 64 lists are kept (least recently used dropped).

    Raises:
        ModelError: as :func:`to_tool_infos` and :class:`ToolNameMap`.
    """
    schemas = list(tools)
    key = (provider, tuple(_name_of(t) for t in schemas))
    with _TOOL_SETS_LOCK:
        hit = _TOOL_SETS.get(key)
        if hit is not None and hit[0] == schemas:
            _TOOL_SETS.move_to_end(key)
            return hit[1]
    specs = to_tool_infos(schemas)
    built = ToolSet(specs=tuple(specs), names=ToolNameMap(provider, [s.name for s in specs]))
    try:
        snapshot = copy.deepcopy(schemas)
    except Exception:  # a schema that cannot be copied (an exotic mapping): used as it is, not kept
        return built
    with _TOOL_SETS_LOCK:
        _TOOL_SETS[key] = (snapshot, built)
        _TOOL_SETS.move_to_end(key)
        while len(_TOOL_SETS) > _TOOL_SETS_MAX:
            _TOOL_SETS.popitem(last=False)
    return built


def _name_of(tool: Mapping[str, Any]) -> str:
    """A schema's name for the cache key (a schema without one fails in :func:`to_tool_infos`)."""
    body = tool.get("function", tool) if tool.get("type", "function") == "function" else tool
    name = body.get("name") if isinstance(body, Mapping) else None
    return name if isinstance(name, str) else ""


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
    "ToolSet",
    "WireNameRule",
    "forced_wire_name",
    "to_tool_infos",
    "tool_set",
    "wire_name",
]
