"""Calling a tool: validate arguments, run it off the event loop, turn ToolError into a result."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping
from typing import Any

from .._threads import run_cpu_bound
from ..errors import RegistryError, ToolError
from ._context import ToolContext
from ._registry import DEFAULT_REGISTRY, ToolRegistry
from ._render import cap_text, strip_ansi
from ._result import ToolResult
from ._signature import validate_arguments


async def call_tool(
    ctx: ToolContext,
    name: str,
    arguments: Mapping[str, Any] | str | None,
    *,
    registry: ToolRegistry | None = None,
) -> ToolResult:
    """Run the tool ``name`` with ``arguments`` in ``ctx``.

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
    started = time.perf_counter()
    try:
        spec = (registry or DEFAULT_REGISTRY).get(name)
    except RegistryError as err:
        return ToolResult.failed("unknown_tool", str(err)).model_copy(
            update={"elapsed_s": time.perf_counter() - started}
        )
    try:
        kwargs = validate_arguments(name, spec.arguments, _as_dict(name, arguments))
        if spec.is_async:
            result = await spec.fn(ctx, **kwargs)
        else:
            result = await run_cpu_bound(functools.partial(spec.fn, ctx, **kwargs))
    except ToolError as err:
        result = ToolResult.failed(err.kind, err.message)
    if not isinstance(result, ToolResult):
        raise TypeError(f"tool {name} returned {type(result).__name__}, not ToolResult")
    update: dict[str, Any] = {"elapsed_s": time.perf_counter() - started}
    content, cut = cap_text(
        strip_ansi(result.content), ctx.limits, narrow="Ask for less (a narrower table, window or query)."
    )
    if cut or content != result.content:
        update.update(content=content, truncated=result.truncated or cut)
    return result.model_copy(update=update)


def _as_dict(name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
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
