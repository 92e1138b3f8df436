"""Reading what OpenAI-compatible servers leave in the text of a reply: reasoning and tool calls.

Servers differ in what they parse out of the generated text (docs/models.md, "Servers"):

- **Reasoning**: vLLM / SGLang with a reasoning parser send ``reasoning_content`` (or
  ``reasoning``); without one, the text holds ``<think>…</think>`` blocks, and templates that
  open the block themselves leave only the closing ``</think>``. :func:`split_reasoning` moves
  every such block (also ``<reasoning>``, ``<thinking>``) out of the content.
- **Tool calls**: vLLM with a tool parser, llama.cpp ``llama-server --jinja``, Ollama and LM
  Studio send ``tool_calls``; llama-cpp-python with the model's own template, vLLM without
  ``--enable-auto-tool-choice`` and TGI in some versions leave the call in the text, as
  ``<tool_call>{…}</tool_call>`` (Qwen / Hermes; several objects one per line in one block are
  several calls), ``[TOOL_CALLS][…]`` (Mistral) or ``[TOOL_CALLS]name[ARGS]{…}`` (Mistral
  tokenizer v11+), ``<|python_tag|>{…}`` (Llama 3; several separated by ``;``), a fenced JSON
  block, the bare JSON object, several JSON objects one per line, or a Python list of calls
  ``[name(key=value, …)]`` (Llama 3.2 / 4, parsed with ``ast``, never evaluated), or Qwen3-Coder's
  XML calls in ``<tool_call>`` blocks (``<function=NAME><parameter=KEY>VALUE</parameter>…</function>``,
  also Qwen3.5 served without a tool parser; several functions in one or several blocks are several
  calls). :func:`calls_in_content` reads those shapes: a JSON object with ``name`` and ``arguments``
  (or ``parameters``; other keys are ignored: Qwen2.5-Coder-0.5B wrote
  ``{"name": …, "arguments": {…}, "response": ["no"]}`` to llama-cpp-python), or OpenAI's own
  ``{"type": "function", "function": {...}}``, alone or in a list; or gpt-oss's harmony messages to
  a tool (``<|channel|>commentary to=functions.<name> <|constrain|>json<|message|>{…}<|call|>``); a JSON value of another shape is left as text (it may be an answer). A name is an offered
  tool's wire name or its canonical name, exactly; calls are decoded like native ones
  (:func:`~clinseek.models.decode_tool_call`), so another name or bad arguments are flagged
  (``unknown_tool``, ``invalid_json``), never repaired; a ``<tool_call>`` block that is not a call
  at all is a ``format`` error, and a reply that starts like a call of an offered tool
  (``{"name": "<tool>"``) but is not valid JSON is an ``invalid_json`` call, so the model is told.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._decode import decode_tool_call
from ._messages import ToolCall
from ._names import ToolInfo, ToolNameMap

_THINK_TAGS = ("think", "thinking", "reasoning")
_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_UNOPENED = re.compile(r"^(.*?)</(think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
_UNCLOSED = re.compile(r"<(think|thinking|reasoning)>(.*)$", re.DOTALL | re.IGNORECASE)

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call|tool_code)?[ \t]*\r?\n(.*?)```", re.DOTALL)
_PREFIXES = ("[TOOL_CALLS]", "<|python_tag|>")


def split_reasoning(text: str) -> tuple[str, str | None]:
    """``(content, reasoning)``: ``<think>`` / ``<thinking>`` / ``<reasoning>`` blocks moved out of ``text``.

    A closing tag with no opening tag (a template that opened the block itself) makes everything
    before it reasoning; an opening tag that is never closed (the reply was cut) makes everything
    after it reasoning. gpt-oss's harmony messages left in the text (``<|channel|>analysis<|message|>…``)
    are read too: the ``analysis`` channel is reasoning, the ``final`` channel and recipient-less
    ``commentary`` are the content, and a message to a tool (``to=functions.<name>``) stays in the
    content as one ``<|channel|>commentary to=…<|message|>…<|call|>`` for :func:`calls_in_content`.
    ``reasoning`` is ``None`` when there was none.
    """
    harmony = _harmony_messages(text)
    if harmony:
        thoughts = [body.strip() for channel, to, body in harmony if channel == "analysis" and to is None]
        said = [f"<|channel|>commentary to={to}<|message|>{body.strip()}<|call|>" if to is not None else body.strip()
                for channel, to, body in harmony if channel != "analysis" or to is not None]
        return "\n\n".join(x for x in said if x), "\n\n".join(x for x in thoughts if x) or None
    found: list[str] = []
    unopened = _UNOPENED.match(text)
    if unopened and not re.search(rf"<{unopened.group(2)}>", unopened.group(1), re.IGNORECASE):
        found.append(unopened.group(1).strip())
        text = text[unopened.end():]

    def take(match: re.Match[str]) -> str:
        found.append(match.group(2).strip())
        return ""

    text = _THINK_BLOCK.sub(take, text)
    unclosed = _UNCLOSED.search(text)
    if unclosed:
        found.append(unclosed.group(2).strip())
        text = text[: unclosed.start()]
    reasoning = "\n\n".join(f for f in found if f)
    return text.strip() if found else text, reasoning or None


_HARMONY_END = re.compile(r"<\|(?:end|call|return)\|>|(?=<\|start\|>)")
_HARMONY_CHANNEL = re.compile(r"<\|channel\|>\s*(\w+)")
_HARMONY_TO = re.compile(r"\bto=([^\s<]+)")


def _harmony_messages(text: str) -> list[tuple[str, str | None, str]]:
    """``(channel, recipient, body)`` of each harmony message in ``text`` (gpt-oss), ``[]`` when it has none."""
    if "<|channel|>" not in text or "<|message|>" not in text:
        return []
    messages: list[tuple[str, str | None, str]] = []
    at = 0
    while (opened := text.find("<|message|>", at)) >= 0:
        header, start = text[at:opened], opened + len("<|message|>")
        end = _HARMONY_END.search(text, start)
        channel, to = _HARMONY_CHANNEL.search(header), _HARMONY_TO.search(header)
        messages.append((channel.group(1) if channel else "", to.group(1) if to else None,
                         text[start:end.start() if end else len(text)]))
        at = end.end() if end else len(text)
    return messages if any(channel for channel, _, _ in messages) else []


def calls_in_content(text: str, names: ToolNameMap, specs: Sequence[ToolInfo] = ()) -> tuple[list[ToolCall], str]:
    """Tool calls written in the text of a reply, and the text that is left.

    Returns ``([], text)`` when the text holds no call of an offered tool in one of the shapes in
    the module docstring. Call ids are synthesized (``call`` + 4 hex digits of the content hash +
    the call's index: 9 characters of ``[a-z0-9]``, as Mistral templates require). ``specs`` are the
    offered tools: their JSON Schemas type the text values of Qwen3-Coder's XML calls (without them,
    every value stays text).
    """
    if not names.canonical_names():
        return [], text
    for tagged, spans in ((True, _harmony(text)), (True, _tagged(text, names, specs)), (False, _prefixed(text)), (False, _fenced(text)),
                          (False, _whole(text)), (False, _sequence(text)), (False, _pythonic(text))):
        calls: list[ToolCall] = []
        for start, end, value in spans:
            found = _calls(value, names, text, len(calls))
            if not found and not tagged:
                break  # a JSON block that is not a call (an answer, data): the text is left as it is
            calls += found or [_unreadable(text, len(calls), text[start:end])]
        else:
            if calls:
                rest = text
                for start, end, _ in sorted(spans, reverse=True):
                    rest = rest[:start] + rest[end:]
                return calls, rest.strip()
    broken = _broken_call(text, names)
    return ([broken], "") if broken is not None else ([], text)


_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyz"


_BROKEN_CALL = re.compile(r'^\{\s*"name"\s*:\s*"([^"]+)"')


def _broken_call(text: str, names: ToolNameMap) -> ToolCall | None:
    """A reply that is one call of an offered tool by its look (``{"name": "<tool>", ...``) but not
    valid JSON: an ``invalid_json`` call, so the model is told (never repaired)."""
    body = text.strip()
    match = _BROKEN_CALL.match(body)
    if match is None or _json(body) is not None:
        return None
    name = match.group(1)
    canonical = names.from_wire(name) or (name if name in names.canonical_names() else None)
    if canonical is None:
        return None
    return ToolCall(id=_call_id(text, 0), name=canonical, raw_arguments=body, error_kind="invalid_json",
                    error=f"the call to {canonical} written in the reply is not valid JSON; send one JSON object "
                          '{"name": ..., "arguments": {...}}')


def _call_id(text: str, index: int) -> str:
    """``call`` + 4 hex digits of the text's hash + the call's index: 9 characters of ``[a-z0-9]``."""
    return f"call{hashlib.sha256(text.encode('utf-8')).hexdigest()[:4]}{_ALNUM[index % 36]}"


def _unreadable(text: str, index: int, block: str) -> ToolCall:
    """A ``<tool_call>`` block that holds no call of an offered tool: answered with an error, never guessed."""
    return ToolCall(
        id=_call_id(text, index), name="(unparsed)", raw_arguments=block,
        error_kind="format",
        error='a <tool_call> block must hold one JSON object {"name": <an offered tool>, "arguments": {...}}',
    )


_Span = tuple[int, int, Any]


def _json(body: str) -> Any:
    """``body`` as one JSON value, else ``None`` (also for JSON nested past the recursion limit)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


_HARMONY_CALL = re.compile(r"<\|channel\|>commentary to=(?:functions\.)?(\S+?)<\|message\|>(.*?)<\|call\|>", re.DOTALL)


def _harmony(text: str) -> list[_Span]:
    """Harmony messages to a tool, as :func:`split_reasoning` leaves them; arguments that are not JSON
    are kept as text (decoded as ``invalid_json``)."""
    spans: list[_Span] = []
    for m in _HARMONY_CALL.finditer(text):
        value = _json(m.group(2))
        spans.append((m.start(), m.end(), {"name": m.group(1), "arguments": value if isinstance(value, dict) else m.group(2)}))
    return spans


def _tagged(text: str, names: ToolNameMap, specs: Sequence[ToolInfo]) -> list[_Span]:
    """``<tool_call>`` blocks: one JSON value each, several one after the other (one call per line), or
    Qwen3-Coder's XML functions (:func:`_xml_calls`)."""
    spans: list[_Span] = []
    for m in _TAGGED.finditer(text):
        value = _json(m.group(1))
        if value is None and m.group(1).startswith("<function="):
            value = _xml_calls(m.group(1), names, specs)
        elif value is None:
            several = [v for _, _, v in _sequence(m.group(1))]
            value = several or None
        spans.append((m.start(), m.end(), value))
    return spans


_XML_FUNCTION = re.compile(r"<function=([^>\s]*)>(.*?)(</function>|\Z)", re.DOTALL)
_XML_PARAMETER = re.compile(r"\s*<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)


class _Broken:
    """A call written in the text that cannot be read (an XML function not closed, a body that is not
    parameters): answered with a ``format`` error naming the tool, never repaired."""

    def __init__(self, name: str, block: str, error: str) -> None:
        self.name, self.block, self.error = name, block, error


def _xml_calls(body: str, names: ToolNameMap, specs: Sequence[ToolInfo]) -> list[Any] | None:
    """The calls of one ``<tool_call>`` block of XML functions, in order, as ``{"name", "arguments"}``
    objects (values typed by :func:`_typed` from the tool's schema) or :class:`_Broken` ones;
    ``None`` when something other than white space stands between the functions."""
    schemas = {s.name: s.parameters for s in specs}
    calls: list[Any] = []
    at = 0
    for m in _XML_FUNCTION.finditer(body):
        if body[at:m.start()].strip():
            return None
        at = m.end()
        name, inner, closed = m.group(1), m.group(2), m.group(3)
        if not closed:
            calls.append(_Broken(name, m.group(0), f"the call <function={name}> is not closed with </function>"))
            continue
        arguments: dict[str, Any] = {}
        canonical = names.from_wire(name) or name
        properties = schemas.get(canonical, {}).get("properties")
        end = 0
        for p in _XML_PARAMETER.finditer(inner):
            key = p.group(1).strip()
            if p.start() != end or key in arguments:
                break
            schema = properties.get(key) if isinstance(properties, Mapping) else None
            arguments[key] = _typed(p.group(2), schema if isinstance(schema, Mapping) else {})
            end = p.end()
        if inner[end:].strip():
            calls.append(_Broken(name, m.group(0), f"the call <function={name}> must hold only "
                                                   "<parameter=NAME>VALUE</parameter> blocks, each name once"))
            continue
        calls.append({"name": name, "arguments": arguments})
    return calls if calls and not body[at:].strip() else None


_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
_LITERAL_MAX = 100_000
_DIGITS_MAX = 4000  # int() refuses more than 4,300 digits (a ValueError); longer text stays text


def _typed(text: str, schema: Mapping[str, Any]) -> Any:
    """One XML parameter's text typed as vLLM's ``qwen3_coder`` parser types it from the parameter's
    JSON Schema: a string loses one leading and one trailing newline; ``integer`` / ``number`` /
    ``boolean`` / ``null`` are parsed; ``array`` / ``object`` are JSON, else a Python literal
    (``ast.literal_eval``, never evaluated). The types of ``anyOf`` / ``oneOf`` members count too
    (tried before ``string``). Text that fits none of the types is kept as the string, so the tool's
    own argument check answers it as it answers the same value sent as JSON."""
    types = _types(schema)
    value = text.strip()
    if "null" in types and value == "null":
        return None
    if types & {"integer", "number"} and _NUMBER.fullmatch(value) and len(value) <= _DIGITS_MAX:
        number = float(value) if set(value) & set(".eE") else int(value)
        if isinstance(number, int) or ("number" in types and math.isfinite(number)):
            return number
    if "boolean" in types and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if types & {"array", "object"} and value.startswith(("[", "{", "(")) and len(value) <= _LITERAL_MAX:
        parsed = _json(value)
        if parsed is None:
            try:
                parsed = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                parsed = None
        if isinstance(parsed, tuple):
            parsed = list(parsed)
        if ("array" in types and isinstance(parsed, list)) or ("object" in types and isinstance(parsed, dict)):
            return parsed
    return text.removeprefix("\n").removesuffix("\n")


def _types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema allows: ``type`` (a name or a list), and those of its ``anyOf`` / ``oneOf`` members."""
    declared = schema.get("type")
    types = {declared} if isinstance(declared, str) else {t for t in declared if isinstance(t, str)} \
        if isinstance(declared, list) else set()
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        for member in members if isinstance(members, list) else []:
            if isinstance(member, Mapping):
                types |= _types(member)
    return types


def _prefixed(text: str) -> list[_Span]:
    """``[TOOL_CALLS]`` / ``<|python_tag|>`` and the JSON values after it, one after the other
    (separated by white space or ``;``, as Llama 3 writes several calls), or Mistral's
    ``[TOOL_CALLS]name[ARGS]{…}`` calls (tokenizer v11 and later)."""
    mistral = _mistral_v11(text)
    if mistral:
        return mistral
    for prefix in _PREFIXES:
        at = text.find(prefix)
        if at >= 0:
            spans: list[_Span] = []
            value, end = _raw_decode(text, at + len(prefix))
            while value is not None and (not spans or _call_shape(value) is not None):
                spans.append((at, end, value))  # the first value, then each further call
                at = end
                rest = text[end:]
                gap = len(rest) - len(rest.lstrip().removeprefix(";"))
                value, end = _raw_decode(text, end + gap)
            if spans:
                return spans
    return []


_MISTRAL_CALL = re.compile(r"\[TOOL_CALLS\]\s*([^\s\[\]{}]+)\s*(?:\[CALL_ID\]\s*[A-Za-z0-9]*\s*)?\[ARGS\]")


def _mistral_v11(text: str) -> list[_Span]:
    """``[TOOL_CALLS]name[ARGS]{…}`` (optionally ``[CALL_ID]id`` before ``[ARGS]``), one per call; arguments
    that are not one JSON value are kept as text (decoded as ``invalid_json``, never repaired)."""
    matches = list(_MISTRAL_CALL.finditer(text))
    spans: list[_Span] = []
    for n, match in enumerate(matches):
        stop = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        value, end = _raw_decode(text, match.end())
        if value is None or end > stop:
            arguments: Any = text[match.end():stop].strip()
            end = stop
        else:
            arguments = value if isinstance(value, dict) else json.dumps(value)
        spans.append((match.start(), end, {"name": match.group(1), "arguments": arguments}))
    return spans


def _raw_decode(text: str, start: int) -> tuple[Any, int]:
    body = text[start:]
    offset = len(body) - len(body.lstrip())
    try:
        value, used = json.JSONDecoder().raw_decode(body.lstrip())
    except (ValueError, RecursionError):
        return None, start
    return value, start + offset + used


def _fenced(text: str) -> list[_Span]:
    return [(m.start(), m.end(), _json(m.group(1).strip())) for m in _FENCED.finditer(text)]


def _sequence(text: str) -> list[_Span]:
    """Two or more JSON values one after the other and nothing else (one call per line)."""
    decoder, at = json.JSONDecoder(), 0
    spans: list[_Span] = []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return spans if len(spans) > 1 else []
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return []
        spans.append((at, end, value))
        at = end


_PYTHONIC_MAX = 100_000


def _pythonic(text: str) -> list[_Span]:
    """The whole text as a Python list of calls with keyword arguments (Llama 3.2 / 4, vLLM's ``pythonic``
    parser): ``[name(key=value, ...), ...]``. Parsed, never evaluated (``ast``; values are literals, else
    the call's argument text is kept and decoded as ``invalid_json``)."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]") and "(" in body) or len(body) > _PYTHONIC_MAX:
        return []
    try:
        tree = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    if not isinstance(tree, ast.List) or not tree.elts:
        return []
    calls: list[dict[str, Any]] = []
    for node in tree.elts:
        name = _dotted(node.func) if isinstance(node, ast.Call) else None
        if name is None or not isinstance(node, ast.Call) or node.args or any(k.arg is None for k in node.keywords):
            return []
        try:
            arguments: Any = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            arguments = ast.get_source_segment(body, node) or ""
        calls.append({"name": name, "arguments": arguments})
    return [(0, len(text), calls)]


def _dotted(node: ast.expr) -> str | None:
    """``a`` or ``a.b.c`` of a call's function, else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _whole(text: str) -> list[_Span]:
    """The text as one JSON value, or one JSON value followed by words (``{...}\nNow waiting.``, a leftover
    ``<|eot_id|>``: the words stay text, as after a fenced or tagged call); several JSON values one after
    the other are :func:`_sequence`'s."""
    body = text.strip()
    if not body.startswith(("{", "[")):
        return []
    value = _json(body)
    if value is not None:
        return [(0, len(text), value)]
    value, end = _raw_decode(text, 0)
    if value is None or text[end:].lstrip().startswith(("{", "[")):
        return []
    return [(0, end, value)]


def _calls(value: Any, names: ToolNameMap, text: str, first: int) -> list[ToolCall]:
    """The calls of one JSON value; ``[]`` when it is not entirely call-shaped objects."""
    items = value if isinstance(value, list) else [value]
    calls: list[ToolCall] = []
    for offset, item in enumerate(items):
        if isinstance(item, _Broken):
            calls.append(_broken_xml(item, names, _call_id(text, first + offset)))
            continue
        shape = _call_shape(item)
        if shape is None:
            return []
        name, arguments = shape
        # the wire name, or the canonical name exactly; any other name is decoded as an unknown tool
        wire = names.to_wire(name) if name in names.canonical_names() else name
        calls.append(decode_tool_call(_call_id(text, first + offset), wire, arguments, names))
    return calls


def _broken_xml(item: _Broken, names: ToolNameMap, call_id: str) -> ToolCall:
    canonical = names.from_wire(item.name) or (item.name if item.name in names.canonical_names() else None)
    if canonical is None:
        return decode_tool_call(call_id, item.name or "(unparsed)", None, names)  # an unknown tool says so
    return ToolCall(id=call_id, name=canonical, raw_arguments=item.block, error_kind="format", error=item.error)


def _call_shape(item: Any) -> tuple[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict) and item.get("type", "function") == "function":
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or ("arguments" in item and "parameters" in item):
        return None
    arguments = item.get("arguments", item.get("parameters"))
    if arguments is None and set(item) - {"name", "id", "type"}:
        return None  # {"name": ..., "other": ...}: not a call
    if arguments is None or isinstance(arguments, dict | str):
        return name, arguments  # other keys beside name and arguments are ignored (small models add them)
    return name, json.dumps(arguments)  # a list or a number: decoded as a not_an_object call, never repaired


__all__ = ["calls_in_content", "split_reasoning"]
