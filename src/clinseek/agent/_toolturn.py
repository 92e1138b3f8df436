"""One tool turn as an agent sees it: which call runs, and the text it is shown.

The agent loop and :class:`~clinseek.agent.EpisodeSession` (what ``clinseek.open_episode`` returns to
an MCP server, inspect_ai tools or a Ray worker) both go through these functions, so a tool answers
them with the same text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ..tools import ToolContext, ToolResult, call_tool, strip_ansi
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
    if name not in offered:
        return ToolResult.failed("unknown_tool", f"{name!r} is not one of the tools offered in this run")
    return await call_tool(ctx, name, arguments)


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
