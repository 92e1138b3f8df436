"""Argument models and JSON schemas generated from a tool's signature and Google-style docstring."""

from __future__ import annotations

import functools
import inspect
import json
import re
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..errors import ToolError

_SECTION = re.compile(r"^(Args|Arguments|Returns|Raises|Yields|Examples?|Notes?|Source):\s*$")
_ARG_LINE = re.compile(r"^\s{4}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def split_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg name: arg description}).

    The description is everything before the first section header, plus the ``Returns:``
    section (the model needs to know what comes back); ``Raises:`` and the rest are dropped.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    desc: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
            if section == "Returns":
                desc.append("Returns:")
            continue
        if section is None or section == "Returns":
            desc.append(line)
        elif section in ("Args", "Arguments"):
            match = _ARG_LINE.match(line)
            if match:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
    return "\n".join(desc).strip(), args


def build_arguments_model(name: str, fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of ``fn``'s keyword arguments after the first (the ``ToolContext``).

    Raises:
        TypeError: a parameter has no type annotation or is variadic.
    """
    hints = typing.get_type_hints(fn)
    _, arg_docs = split_docstring(fn.__doc__)
    fields: dict[str, Any] = {}
    params = list(inspect.signature(fn).parameters.values())[1:]
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name not in hints:
            raise TypeError(f"tool {name}: parameter {param.name!r} must be a typed keyword argument")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints[param.name], Field(default, description=arg_docs.get(param.name)))
    model_name = "Args_" + re.sub(r"\W", "_", name)
    return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON schema (draft 2020-12 subset OpenAI accepts) of an arguments model, without titles.

    Generated once per model (pydantic's generation costs ~1 ms per tool; an agent run lists every tool it
    offers); each call returns a new dict, which the caller may change.
    """
    schema: dict[str, Any] = json.loads(_schema_text(model))
    return schema


@functools.cache
def _schema_text(model: type[BaseModel]) -> str:
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return json.dumps(schema)


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title" or isinstance(v, dict)}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def validate_arguments(name: str, model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate ``arguments`` against ``model``; the validated keyword arguments.

    Raises:
        ToolError: kind ``"bad_argument"``, naming each bad or missing argument and what was expected.
    """
    try:
        parsed = model.model_validate(arguments)
    except ValidationError as err:
        problems = []
        for e in err.errors():
            where = ".".join(str(p) for p in e["loc"]) or "(arguments)"
            problems.append(f"{where}: {e['msg']}")
        allowed = ", ".join(model.model_fields)
        raise ToolError(
            "bad_argument", f"{name}: {'; '.join(problems)} (arguments: {allowed or 'none'})"
        ) from None
    return {k: getattr(parsed, k) for k in model.model_fields}
