"""The tool registry: a decorator fills it at import; it holds factories, never per-run state."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .._suggest import did_you_mean
from ..errors import RegistryError
from ._signature import build_arguments_model, parameters_schema, split_docstring

ToolFn = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One registered tool.

    Attributes:
        name: canonical dotted name, ``<family>.<tool>`` (e.g. ``"ehr.run_sql_query"``).
        fn: the implementation, ``fn(ctx: ToolContext, **arguments) -> ToolResult``; sync
            functions run in a worker thread, async ones on the loop.
        arguments: pydantic model of the keyword arguments (validation and schema).
        description: what the model is told about the tool (docstring without ``Args``).
    """

    name: str
    fn: ToolFn
    arguments: type[BaseModel]
    description: str

    @property
    def family(self) -> str:
        """The part of the name before the first dot (``"ehr"``, ``"browser"``, ``"image"``)."""
        return self.name.split(".", 1)[0]

    @property
    def is_async(self) -> bool:
        """True when ``fn`` is a coroutine function."""
        return inspect.iscoroutinefunction(self.fn)

    def schema(self) -> dict[str, Any]:
        """OpenAI-style function tool schema with the canonical dotted name."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters_schema(self.arguments),
            },
        }


class ToolRegistry:
    """A set of tools by canonical name. The process has one default registry, filled at import by
    :func:`tool`; tests and plug-in hosts may build their own."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def register(self, name: str, fn: ToolFn) -> ToolSpec:
        """Register ``fn`` as ``name``.

        Raises:
            RegistryError: ``name`` is already registered or has no family prefix.
        """
        if "." not in name:
            raise RegistryError(f"tool name {name!r} needs a family prefix such as 'ehr.'")
        if name in self._tools:
            raise RegistryError(f"tool {name!r} is registered twice")
        description, _ = split_docstring(fn.__doc__)
        spec = ToolSpec(name, fn, build_arguments_model(name, fn), description)
        self._tools[name] = spec
        return spec

    def get(self, name: str) -> ToolSpec:
        """The tool registered as ``name`` (exact canonical name; never guessed).

        Raises:
            RegistryError: no tool has that name.
        """
        try:
            return self._tools[name]
        except KeyError:
            hint = did_you_mean(name, self._tools) or f"; known: {', '.join(sorted(self._tools))}"
            raise RegistryError(f"unknown tool {name!r}{hint}") from None

    def names(self, family: str | None = None) -> tuple[str, ...]:
        """Registered names in registration order, optionally of one family (``"ehr"``)."""
        return tuple(n for n, spec in self._tools.items() if family is None or spec.family == family)


DEFAULT_REGISTRY = ToolRegistry()
"""The registry the built-in tools (and :func:`tool`) register into."""


def tool(name: str) -> Callable[[ToolFn], ToolFn]:
    """Register ``fn`` in the default registry as the tool ``name`` (``"<family>.<tool>"``).

    The arguments schema comes from the signature (every parameter after the context, typed)
    and the docstring's ``Args:`` section; the description from the rest of the docstring.

    Raises:
        RegistryError: ``name`` is already registered or has no family prefix.
    """

    def register(fn: ToolFn) -> ToolFn:
        DEFAULT_REGISTRY.register(name, fn)
        return fn

    return register


def get_tool(name: str) -> ToolSpec:
    """The tool registered as ``name`` in the default registry.

    Raises:
        RegistryError: no tool has that name.
    """
    return DEFAULT_REGISTRY.get(name)


def tool_names(family: str | None = None) -> tuple[str, ...]:
    """Registered tool names in registration order, optionally only one family (``"ehr"``)."""
    return DEFAULT_REGISTRY.names(family)


def tool_schemas(names: Iterable[str]) -> list[dict[str, Any]]:
    """OpenAI-style function schemas for ``names`` (default registry), in the given order.

    Raises:
        RegistryError: a name is not registered.
    """
    return [get_tool(n).schema() for n in names]
