"""Re-parse tool calls from rendered assistant text, as a serving parser would, and compare.

Four formats are read (named as vLLM's ``--tool-call-parser`` options):

- ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (JSON body; Qwen2.5/3,
  Hermes and many other templates);
- ``qwen3_xml``: ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>``
  (Qwen3-Coder / Qwen3.5 templates; values are text, non-strings as JSON);
- ``llama3_json``: the turn is one or more ``{"name": ..., "parameters": {...}}`` objects (an optional
  ``<|python_tag|>`` before, ``;`` between), ended by ``<|eot_id|>`` (Llama 3.1 / 3.2 templates);
- ``gemma4``: ``<|tool_call>call:NAME{key:value,...}<tool_call|>`` with Gemma 4's own value syntax
  (strings between ``<|"|>`` marks, bare keys, numbers, ``true``/``false``, nested ``{}`` and ``[]``).

``auto`` picks by the markup present (``<|tool_call>``: gemma4; ``<tool_call>``: hermes or qwen3_xml per
block; a turn that starts with ``{``: llama3_json). A call round-trips when the parsed name and
arguments equal those of the sample, in order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from ..errors import ClinseekError

ToolParser = Literal["auto", "hermes", "qwen3_xml", "llama3_json", "gemma4"]
TOOL_PARSERS: tuple[str, ...] = ("auto", "hermes", "qwen3_xml", "llama3_json", "gemma4")
"""The names :func:`parse_tool_calls` accepts."""

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FUNCTION = re.compile(r"^\s*<function=([^>\n]+)>(.*?)</function>\s*$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)
_GEMMA_CALL = re.compile(r"<\|tool_call>call:([^{\s]+)\{")
_GEMMA_END = "<tool_call|>"
_GEMMA_STR = '<|"|>'
_LLAMA_END = ("<|eot_id|>", "<|eom_id|>", "<|end_of_text|>")
_LLAMA_TAG = "<|python_tag|>"


class ParseFailure(ClinseekError, ValueError):
    """A ``<tool_call>`` block that the chosen parser cannot read (also a ``ValueError``)."""


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


def _llama3(text: str) -> list[tuple[str, dict[str, Any]]]:
    body = text.strip()
    for end in _LLAMA_END:
        body = body.removesuffix(end).rstrip()
    body = body.removeprefix(_LLAMA_TAG).strip()
    if not body.startswith("{"):
        return []  # a text answer: no call (vLLM's llama3_json reads calls only from a leading JSON object)
    decoder, calls, i = json.JSONDecoder(), [], 0
    while i < len(body):
        try:
            obj, i = decoder.raw_decode(body, i)
        except ValueError as err:
            raise ParseFailure(f"llama3_json: not a JSON object at character {i} ({err})") from err
        arguments = obj.get("parameters", obj.get("arguments")) if isinstance(obj, dict) else None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not isinstance(arguments, dict):
            raise ParseFailure("llama3_json: expected an object with 'name' and 'parameters'")
        calls.append((obj["name"], arguments))
        while i < len(body) and body[i] in " \n\t;":
            i += 1
    return calls


def _gemma_scalar(token: str) -> Any:
    word = token.strip()
    if word in ("true", "false"):
        return word == "true"
    if word in ("null", "None"):
        return None
    try:
        return float(word) if any(c in word for c in ".eE") else int(word)
    except ValueError:
        raise ParseFailure(f"gemma4: unquoted value {word!r} is not a number, boolean or null") from None


def _gemma_value(text: str, i: int) -> tuple[Any, int]:
    """One Gemma 4 value starting at ``i`` (after spaces): string, object, array or scalar; and the next index."""
    while i < len(text) and text[i] in " \n\t":
        i += 1
    if text.startswith(_GEMMA_STR, i):
        end = text.find(_GEMMA_STR, i + len(_GEMMA_STR))
        if end < 0:
            raise ParseFailure("gemma4: a string is not closed with <|\"|>")
        return text[i + len(_GEMMA_STR) : end], end + len(_GEMMA_STR)
    if i < len(text) and text[i] in "{[":
        return _gemma_container(text, i)
    end = i
    while end < len(text) and text[end] not in ",}]":
        end += 1
    return _gemma_scalar(text[i:end]), end


def _gemma_container(text: str, i: int) -> tuple[Any, int]:
    """A ``{key:value,...}`` object or ``[value,...]`` array starting at ``text[i]``; and the index after it."""
    closing, is_object = ("}", True) if text[i] == "{" else ("]", False)
    items: list[Any] = []
    fields: dict[str, Any] = {}
    i += 1
    while True:
        while i < len(text) and text[i] in " \n\t,":
            i += 1
        if i >= len(text):
            raise ParseFailure(f"gemma4: {'object' if is_object else 'array'} not closed with {closing!r}")
        if text[i] == closing:
            return (fields if is_object else items), i + 1
        if not is_object:
            value, i = _gemma_value(text, i)
            items.append(value)
            continue
        if text.startswith(_GEMMA_STR, i):
            key, i = _gemma_value(text, i)
        else:
            colon = text.find(":", i)
            if colon < 0:
                raise ParseFailure("gemma4: a key has no ':'")
            key, i = text[i:colon].strip(), colon
        if not text.startswith(":", i):
            raise ParseFailure(f"gemma4: expected ':' after key {key!r}")
        fields[str(key)], i = _gemma_value(text, i + 1)


def _gemma4(text: str) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for match in _GEMMA_CALL.finditer(text):
        arguments, end = _gemma_container(text, match.end() - 1)
        if not text.startswith(_GEMMA_END, end):
            raise ParseFailure(f"gemma4: call {match.group(1)} is not closed with {_GEMMA_END}")
        calls.append((match.group(1), arguments))
    return calls


def _detect(text: str) -> ToolParser:
    if "<|tool_call>" in text:
        return "gemma4"
    if "<tool_call>" in text:
        return "auto"
    return "llama3_json"


def parse_tool_calls(text: str, parser: ToolParser = "auto") -> list[tuple[str, dict[str, Any]]]:
    """The (name, arguments) of every tool call in ``text`` (one assistant turn), in order.

    Raises:
        ParseFailure: a call the parser cannot read.
    """
    kind = _detect(text) if parser == "auto" else parser
    if kind == "gemma4":
        return _gemma4(text)
    if kind == "llama3_json":
        return _llama3(text)
    calls = []
    for body in _BLOCK.findall(text):
        block = kind if kind != "auto" else ("qwen3_xml" if body.lstrip().startswith("<function=") else "hermes")
        calls.append(_xml(body) if block == "qwen3_xml" else _hermes(body.strip()))
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
