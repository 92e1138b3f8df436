"""One tool turn as an agent sees it: which call runs, and the text it is shown.

The agent loop and :class:`~clinseek.agent.EpisodeSession` (what ``clinseek.open_episode`` returns to
an MCP server, inspect_ai tools or a Ray worker) both go through these functions, so a tool answers
them with the same text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..records import ToolRecord
from ..tools import ToolContext, ToolResult, call_tools, strip_ansi
from ._prompts import PICTURES_NOT_SHOWN

CUT_NOTICE = "\n[output cut by the agent loop at {limit} of {total} characters; narrow the query]"
"""Appended to a tool output cut at ``AgentBudget.max_tool_chars`` (a second guard after the tools' own cap)."""


async def call_offered(
    ctx: ToolContext, offered: Collection[str], name: str, arguments: Mapping[str, Any] | str | None
) -> ToolResult:
    """Run tool ``name`` when it is one of ``offered``; any other name is an ``unknown_tool`` result.

    Raises:
        Exception: what :func:`clinseek.tools.call_tool` raises (infrastructure failures only).
    """
    return (await call_offered_turn(ctx, offered, [(name, arguments)]))[0]


async def call_offered_turn(
    ctx: ToolContext, offered: Collection[str], calls: Sequence[tuple[str, Mapping[str, Any] | str | None]]
) -> list[ToolResult]:
    """:func:`call_offered` for each ``(name, arguments)`` call of one model turn, in order, their blocking work
    in one hand-off (:func:`clinseek.tools.call_tools`); each result as that call alone would give.

    Raises:
        Exception: the first infrastructure failure of a call, once every call ran.
    """
    ran = await call_tools(ctx, [(name, arguments) for name, arguments in calls if name in offered])
    results = iter(ran)
    return [next(results) if name in offered else
            ToolResult.failed("unknown_tool", f"{name!r} is not one of the tools offered in this run")
            for name, _ in calls]


def cap_output(content: str, max_chars: int) -> str:
    """``content`` cut at ``max_chars`` characters, with :data:`CUT_NOTICE` when it was cut."""
    if len(content) <= max_chars:
        return content
    return content[:max_chars] + CUT_NOTICE.format(limit=max_chars, total=len(content))


def pictures_note(result: ToolResult, *, vision: bool) -> str:
    """The line that stands in for the pictures a tool made when the model is not sent images (else ``""``)."""
    if result.images and not vision:
        return "\n" + PICTURES_NOT_SHOWN.format(count=len(result.images))
    return ""


def tool_turn_text(capped: str, result: ToolResult, *, vision: bool) -> str:
    """The text of a tool turn from the output already cut (:func:`cap_output`): the pictures note added,
    terminal control sequences removed."""
    return strip_ansi(capped + pictures_note(result, vision=vision))


def shown_text(result: ToolResult, max_chars: int, *, vision: bool) -> str:
    """The text of a tool turn: the output cut at ``max_chars`` (announced), then the pictures note."""
    return tool_turn_text(cap_output(result.content, max_chars), result, vision=vision)


def tool_record(turn: int, name: str, result: ToolResult, max_chars: int) -> ToolRecord:
    """The record of one tool call of ``turn``: its outcome, time, the characters shown (after the cut at
    ``max_chars``) and whether the tool or the cut shortened its output."""
    content = cap_output(result.content, max_chars)
    return ToolRecord(turn=turn, name=name, ok=result.ok, error_kind=result.error_kind, elapsed_s=result.elapsed_s,
                      output_chars=len(content), truncated=result.truncated or len(content) < len(result.content))
