"""Re-parse tool calls from rendered assistant text, as a serving parser would, and compare.

Two formats are read (named as vLLM's ``--tool-call-parser`` options):

- ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (JSON body; Qwen2.5/3,
  Hermes and many other templates);
- ``qwen3_xml``: ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>``
  (Qwen3-Coder / Qwen3.5 templates; values are text, non-strings as JSON).

``auto`` picks per block from its body. A call round-trips when the parsed name and arguments equal
those of the sample, in order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

ToolParser = Literal["auto", "hermes", "qwen3_xml"]

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FUNCTION = re.compile(r"^\s*<function=([^>\n]+)>(.*?)</function>\s*$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)


class ParseFailure(ValueError):
    """A ``<tool_call>`` block that the chosen parser cannot read."""


def _hermes(body: str) -> tuple[str, dict[str, Any]]:
    try:
        obj = json.loads(body)
    except ValueError as err:
        raise ParseFailure(f"hermes: body is not JSON ({err})") from err
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise ParseFailure("hermes: body is not an object with a 'name'")
    arguments = obj.get("arguments", {})
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    if not isinstance(arguments, dict):
        raise ParseFailure("hermes: 'arguments' is not an object")
    return obj["name"], arguments


def _strip_newline(value: str) -> str:
    value = value[1:] if value.startswith("\n") else value
    return value[:-1] if value.endswith("\n") else value


def _xml(body: str) -> tuple[str, dict[str, Any]]:
    match = _FUNCTION.match(body)
    if match is None:
        raise ParseFailure("qwen3_xml: no <function=NAME>...</function> in the block")
    params = {key.strip(): _strip_newline(value) for key, value in _PARAMETER.findall(match.group(2))}
    return match.group(1).strip(), params


def parse_tool_calls(text: str, parser: ToolParser = "auto") -> list[tuple[str, dict[str, Any]]]:
    """The (name, arguments) of every ``<tool_call>`` block in ``text``, in order.

    Raises:
        ParseFailure: a block the parser cannot read.
    """
    calls = []
    for body in _BLOCK.findall(text):
        kind = parser if parser != "auto" else ("qwen3_xml" if body.lstrip().startswith("<function=") else "hermes")
        calls.append(_xml(body) if kind == "qwen3_xml" else _hermes(body.strip()))
    return calls


def _same_value(parsed: Any, expected: Any) -> bool:
    if parsed == expected:
        return True
    if isinstance(parsed, str) and not isinstance(expected, str):  # XML text of a non-string value
        try:
            return bool(json.loads(parsed) == expected)
        except ValueError:
            return False
    return False


def compare_calls(parsed: Sequence[tuple[str, dict[str, Any]]], expected: Sequence[dict[str, Any]]) -> list[str]:
    """Differences between parsed calls and a sample's ``tool_calls`` (``[]`` = round-trips)."""
    problems = []
    if len(parsed) != len(expected):
        problems.append(f"{len(parsed)} calls parsed, {len(expected)} in the sample")
    for index, ((name, args), call) in enumerate(zip(parsed, expected, strict=False)):
        function = call["function"]
        if name != function["name"]:
            problems.append(f"call {index}: name {name!r} != {function['name']!r}")
        want = function["arguments"]
        if set(args) != set(want) or not all(_same_value(args[k], want[k]) for k in want):
            problems.append(f"call {index} {function['name']}: arguments {args!r} != {want!r}")
    return problems
