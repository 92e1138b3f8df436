"""Turning a provider's tool call into a canonical ``ToolCall`` (shared by every provider)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from ._messages import ToolCall
from ._names import ToolNameMap


def decode_tool_call(call_id: str, wire: str, arguments: Any, names: ToolNameMap) -> ToolCall:
    """Decode one call: map the wire name back, parse the JSON arguments; never guess.

    The name is an offered tool's wire name or, exactly, its canonical name (the prompts name the tools
    canonically, ``ehr.finish``, and servers that parse the model's own calls pass that name through;
    the error of any other name lists the canonical names). An unknown name gives
    ``error_kind="unknown_tool"``; argument text that is not JSON gives ``invalid_json`` (text kept in
    ``raw_arguments``); JSON that is not an object (as text, or served parsed: an array, a number) gives
    ``not_an_object``, its error naming the JSON type. Empty argument text, ``null`` and ``"null"`` mean ``{}``.
    """
    canonical = names.from_wire(wire) or (wire if wire in names.canonical_names() else None)
    parsed, raw, kind, problem = _parse_arguments(arguments)
    if canonical is None:
        offered = ", ".join(names.canonical_names()) or "(none)"
        return ToolCall(
            id=call_id,
            name=wire,
            arguments=parsed,
            raw_arguments=raw,
            error_kind="unknown_tool",
            error=f"unknown tool {wire!r}; call one of: {offered}",
        )
    return ToolCall(id=call_id, name=canonical, arguments=parsed, raw_arguments=raw, error_kind=kind, error=problem)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: Any) -> Any:
    """``value`` (JSON data: strings, lists, dicts) with every lone UTF-16 surrogate replaced by U+FFFD.

    A model (or a server's JSON) can write a ``\\udXXX`` escape without its pair (a cut emoji, a bad
    escape); ``json.loads`` keeps it, and such text cannot be encoded as UTF-8: the next request, the
    records and the SQL engine would all fail on it. Replaced as a UTF-8 decoder replaces invalid bytes.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, list):
        return [scrub_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    return value


MAX_NESTING = 64
"""How deep a call's arguments may nest (objects and lists). Deeper arguments (a degenerate generation of
brackets) are an ``invalid_json`` call: past ~1,000 levels ``json`` raises ``RecursionError``, and a
few hundred already break every recursive step after it (checks, records, the next request)."""

TOO_DEEP = f"arguments nest more than {MAX_NESTING} levels deep; send a flat JSON object"


def nests_too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_NESTING` (iterative: any depth is safe to check)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_NESTING:
                return True
            stack += [(v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return False


_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _json_type(value: Any) -> str:
    """``value``'s JSON type name, as the model wrote it (``null``, ``array``, ...), never a Python one."""
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


def _parse_arguments(
    arguments: Any,
) -> tuple[dict[str, Any], str | None, Any, str | None]:
    if arguments is None:
        return {}, None, None, None
    if isinstance(arguments, dict):
        if nests_too_deep(arguments):
            return {}, None, "invalid_json", TOO_DEEP
        return scrub_surrogates(arguments), None, None, None
    if not isinstance(arguments, str):  # JSON served parsed (llama-server's object arguments): an array, a number
        if nests_too_deep(arguments):
            return {}, None, "invalid_json", TOO_DEEP
        raw = json.dumps(scrub_surrogates(arguments), ensure_ascii=False)
        return {}, raw, "not_an_object", f"arguments must be a JSON object, got {_json_type(arguments)}"
    if not arguments.strip():
        return {}, None, None, None
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as err:
        return {}, arguments, "invalid_json", f"arguments are not valid JSON ({err.msg} at char {err.pos}); send a JSON object"
    except RecursionError:  # ~1,000 nested brackets: json raises this, not a JSONDecodeError
        return {}, arguments, "invalid_json", TOO_DEEP
    if nests_too_deep(value):
        return {}, arguments, "invalid_json", TOO_DEEP
    if value is None:  # "null": no arguments, as the JSON null itself (vLLM's hermes parser dumps a model's null)
        return {}, None, None, None
    if not isinstance(value, dict):
        return {}, arguments, "not_an_object", f"arguments must be a JSON object, got {_json_type(value)}"
    return scrub_surrogates(value), None, None, None


CUT_CALL = ("the reply was cut at the output-token limit inside this call, so its arguments are incomplete; "
            "write a shorter call (a shorter query, fewer columns) or fewer calls per reply")
"""The error a call gets when its reply ended at the output-token limit and the call could not be read."""


def shown_url(url: str) -> str:
    """``url`` as errors show it: without any user:password part."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def snippet(raw: bytes | str, limit: int = 200) -> str:
    """The start of a reply body that is not JSON, as words: tags dropped, whitespace collapsed."""
    text = raw[: limit * 8] if isinstance(raw, str) else raw[: limit * 8].decode("utf-8", errors="replace")
    text = " ".join(re.sub(r"<[^>]*>", " ", text).split())
    return text[:limit] + ("..." if len(text) > limit else "")


def cut_calls(calls: list[ToolCall], cut: bool) -> list[ToolCall]:
    """``calls`` of a reply; when the reply was ``cut`` at the output-token limit, the ones that could
    not be read (``invalid_json``, a broken ``format``) say so (:data:`CUT_CALL`) instead of blaming
    the format. The ``error_kind`` is kept."""
    if not cut or not any(c.error_kind in ("invalid_json", "format") for c in calls):
        return calls
    return [c.model_copy(update={"error": CUT_CALL}) if c.error_kind in ("invalid_json", "format") else c
            for c in calls]


__all__ = [
    "CUT_CALL", "MAX_NESTING", "TOO_DEEP", "cut_calls", "decode_tool_call", "nests_too_deep", "scrub_surrogates",
    "shown_url", "snippet",
]
