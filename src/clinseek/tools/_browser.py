"""The three knowledge tools ``browser.search``, ``browser.open`` and ``browser.find``.

Names and arguments follow the reference (gpt-oss browser tool, ClinSeekAgent
``browser_tools.json``); the source behind them is the run's :class:`~clinseek.knowledge.Knowledge`
(offline BM25 corpus by default, or a web backend with an on-disk replay cache), attached to each
episode with :func:`attach_browser`. Budgets are :class:`PageBrowserLimits`.
"""

from __future__ import annotations

from ..errors import ToolError
from ._browser_state import browser_session
from ._context import ToolContext
from ._registry import tool
from ._result import ToolResult


@tool("browser.search")
def browser_search(ctx: ToolContext, query: str, topn: int = 10) -> ToolResult:
    """Search clinical reference knowledge (ICD-9/10 codes with CCS groups, MedMod phenotypes, lab tests
    with units and reference ranges, ICU items, task definitions; or the web when the run enables it).
    The result list opens as a new page: each result is a numbered link 【id†title†site】 that
    browser.open(id=...) follows.

    Args:
        query: words to search for, e.g. "CCS category of ICD-10 I50.23" or "potassium reference range".
        topn: how many results to list (1-20).

    Returns:
        The result page as numbered lines: "[cursor] title (url)", "**viewing lines [a - b] of N**",
        then "L<i>: ..." lines.
    """
    session = browser_session(ctx)
    with session.call():
        return session.search(query, topn)


@tool("browser.open")
def browser_open(
    ctx: ToolContext,
    id: int | str = -1,
    cursor: int = -1,
    loc: int = -1,
    num_lines: int = -1,
    view_source: bool = False,
    source: str | None = None,
) -> ToolResult:
    """Open a link or URL as a new page, or scroll a page already open. Pages are numbered lines.

    Args:
        id: a link number on the page at cursor (from a 【id†...】 marker), or a full URL as a string;
            -1 scrolls the page at cursor instead of opening a new one.
        cursor: the page to use (its [cursor] number); -1 means the current (last opened) page.
        loc: the first line to show; -1 means the start (or the line a find match points at).
        num_lines: how many lines to show; -1 means one view (about 1,000 tokens).
        view_source: show the page's raw source (HTML) instead of its cleaned text.
        source: the knowledge source to use; only this run's source exists (its name, e.g. "offline").

    Returns:
        The view: "[cursor] title (url)", "**viewing lines [a - b] of N**", then "L<i>: ..." lines.
    """
    session = browser_session(ctx)
    with session.call():
        if source not in (None, "", session.knowledge.name):
            raise ToolError(
                "bad_argument", f"unknown source {source!r}; this run's source is {session.knowledge.name!r}"
            )
        return session.open(id, cursor, loc, num_lines, view_source)


@tool("browser.find")
def browser_find(ctx: ToolContext, pattern: str, cursor: int = -1) -> ToolResult:
    """Find text in a page (exact, case-insensitive); the matches open as a new page whose links lead
    to each match in the page.

    Args:
        pattern: the text to look for.
        cursor: the page to search (its [cursor] number); -1 means the current page.

    Returns:
        A page listing up to 50 matches with a few lines each, or a line saying there is none.
    """
    session = browser_session(ctx)
    with session.call():
        return session.find(pattern, cursor)
