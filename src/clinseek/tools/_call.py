"""Calling tools: validate arguments, run them off the event loop, turn ToolError into a result.

A model turn's calls go to :func:`call_tools` together: the blocking ones run one after another in a single
hand-off to a worker thread (``clinseek._threads.run_cpu_bound``: one hop per turn instead of one per call,
none when the caller is alone on its loop), each with its own ``elapsed_s`` and its own error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .._threads import hand_off, run_cpu_bound
from ..errors import RegistryError, ToolError
from ._context import ToolContext
from ._registry import DEFAULT_REGISTRY, ToolRegistry, ToolSpec
from ._render import cap_text, strip_ansi
from ._result import ToolResult
from ._signature import validate_arguments

Arguments = Mapping[str, Any] | str | None
"""A tool call's keyword arguments: a dict, a JSON object string, or ``None`` (none)."""


async def call_tool(
    ctx: ToolContext,
    name: str,
    arguments: Arguments,
    *,
    registry: ToolRegistry | None = None,
) -> ToolResult:
    """Run the tool ``name`` with ``arguments`` in ``ctx``: :func:`call_tools` with one call.

    Args:
        ctx: the episode's tool context.
        name: canonical dotted tool name (provider wire names are decoded by the models layer).
        arguments: keyword arguments as a dict, or a JSON object string; ``None`` means none.
        registry: where to look the tool up (default: the built-in registry).

    Returns:
        The tool's result with ``elapsed_s`` set, its content cut at ``ctx.limits.max_tool_chars``
        (with a notice) whatever the tool, and free of terminal escape sequences (a library's
        coloured error message, escape bytes in data). Unknown tools (``"unknown_tool"``), bad or
        missing arguments (``"bad_argument"``) and every :class:`~clinseek.errors.ToolError`
        the tool raises come back as ``ok=False`` results.

    Raises:
        Exception: anything else the tool raises propagates unchanged (an infrastructure error
            that the runner records; it is never shown to the model as data).
    """
    return (await call_tools(ctx, [(name, arguments)], registry=registry))[0]


async def call_tools(
    ctx: ToolContext,
    calls: Sequence[tuple[str, Arguments]],
    *,
    registry: ToolRegistry | None = None,
) -> list[ToolResult]:
    """Run the ``(name, arguments)`` calls of one model turn in ``ctx``, in order; their results in that order.

    The coroutine tools (``ehr.finish``, ``ehr.think``) are awaited on the loop first, then the blocking ones run
    one after another, in their order, in one hand-off (``clinseek._threads.run_cpu_bound``; in a worker thread
    whatever else runs on the loop when one of them comes from outside clinseek: it may start an event loop of
    its own). The calls of a turn are independent of one another (models send them as parallel calls; they
    once ran concurrently): the results come back in the calls' order. Each result is what
    :func:`call_tool` returns for that call alone: its own ``elapsed_s`` (from its own start, the wait for a
    thread not counted), its own ``ok=False`` result for an unknown tool, bad arguments or a ``ToolError``.

    Raises:
        Exception: the first infrastructure error a call raised (not a ``ToolError``), once every call ran.
    """
    found = registry or DEFAULT_REGISTRY
    out: list[ToolResult | Exception | None] = [None] * len(calls)
    blocking: list[tuple[int, ToolSpec | str, str, Arguments]] = []
    for i, (name, arguments) in enumerate(calls):
        try:
            spec: ToolSpec | str = found.get(name)
        except RegistryError as err:
            spec = str(err)  # answered with the blocking calls, in its place: unknown_tool
        if isinstance(spec, ToolSpec) and spec.is_async:
            out[i] = await _run_async(ctx, spec, arguments)
        else:
            blocking.append((i, spec, name, arguments))
    if blocking:
        own = all(not isinstance(spec, ToolSpec) or _own(spec) for _, spec, _, _ in blocking)
        ran = await (run_cpu_bound if own else hand_off)(_run_blocking, ctx, [b[1:] for b in blocking])
        for (i, *_), result in zip(blocking, ran, strict=True):
            out[i] = result
    for item in out:
        if not isinstance(item, ToolResult):
            raise item or RuntimeError("a tool call was not run")
    return [item for item in out if isinstance(item, ToolResult)]


def _own(spec: ToolSpec) -> bool:
    """True for a tool of clinseek itself (it never starts an event loop: it may run on the loop's thread)."""
    return spec.fn.__module__.startswith("clinseek.")


def _run_blocking(ctx: ToolContext, calls: Sequence[tuple[ToolSpec | str, str, Arguments]]) -> list[ToolResult | Exception]:
    """Blocking calls one after another (a ``str`` in place of the spec: an unknown tool, and why); an
    infrastructure error is kept in its place and the next calls still run."""
    results: list[ToolResult | Exception] = []
    for spec, name, arguments in calls:
        started = time.perf_counter()
        try:
            if isinstance(spec, str):
                result = ToolResult.failed("unknown_tool", spec)
            else:
                result = _checked(name, spec.fn(ctx, **_kwargs(spec, name, arguments)))
        except ToolError as err:
            result = ToolResult.failed(err.kind, err.message)
        except Exception as err:  # an infrastructure failure: raised by call_tools once the others ran
            results.append(err)
            continue
        results.append(_finished(ctx, result, started))
    return results


async def _run_async(ctx: ToolContext, spec: ToolSpec, arguments: Arguments) -> ToolResult | Exception:
    started = time.perf_counter()
    try:
        result = _checked(spec.name, await spec.fn(ctx, **_kwargs(spec, spec.name, arguments)))
    except ToolError as err:
        result = ToolResult.failed(err.kind, err.message)
    except Exception as err:  # as in _run_blocking
        return err
    return _finished(ctx, result, started)


def _kwargs(spec: ToolSpec, name: str, arguments: Arguments) -> dict[str, Any]:
    return validate_arguments(name, spec.arguments, _as_dict(name, arguments))


def _checked(name: str, result: object) -> ToolResult:
    if not isinstance(result, ToolResult):
        raise TypeError(f"tool {name} returned {type(result).__name__}, not ToolResult")
    return result


def _finished(ctx: ToolContext, result: ToolResult, started: float) -> ToolResult:
    """``result`` with its ``elapsed_s`` since ``started``, its content capped and free of escape sequences."""
    update: dict[str, Any] = {"elapsed_s": time.perf_counter() - started}
    content, cut = cap_text(
        strip_ansi(result.content), ctx.limits, narrow="Ask for less (a narrower table, window or query)."
    )
    if cut or content != result.content:
        update.update(content=content, truncated=result.truncated or cut)
    return result.model_copy(update=update)


def _as_dict(name: str, arguments: Arguments) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as err:
            raise ToolError("bad_argument", f"{name}: arguments are not valid JSON: {err}") from None
    if not isinstance(arguments, Mapping):
        raise ToolError("bad_argument", f"{name}: arguments must be a JSON object")
    return dict(arguments)
