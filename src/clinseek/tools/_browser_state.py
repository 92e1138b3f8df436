"""The per-episode browser: a stack of pages (cursors), call and character budgets, and the knowledge source.

One :class:`PageBrowser` lives in ``ToolContext.state["browser"]`` of one episode; it is never
shared. The :class:`~clinseek.knowledge.Knowledge` it reads is shared by the run and stateless.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..errors import ToolError
from ._browser_page import BrowserPage, Link, make_page, marker, render_view, wrap_lines
from ._result import ToolResult

if TYPE_CHECKING:
    from ..knowledge import Knowledge, Page
    from ._context import ToolContext

STATE_KEY = "browser"
"""Key of the session in ``ToolContext.state``."""


@dataclass(frozen=True, slots=True)
class PageBrowserLimits:
    """Budgets of the browser tools in one episode (a question run); recorded in the run manifest.

    Attributes:
        max_calls: browser calls allowed (the reference stops a run after 40); later calls fail
            with the error kind ``"limit"`` and a note that says so.
        max_chars: characters of browser output in all; a view that would pass it is cut and says so.
        view_chars: characters of one view (about 1,000 tokens, like the reference's ~1,024-token view).
        max_topn: results one search may return.
        line_width: characters per page line.
        find_max_hits: matches ``browser.find`` lists at most.
        find_context_lines: lines shown per match.
    """

    max_calls: int = 40
    max_chars: int = 120_000
    view_chars: int = 4_000
    max_topn: int = 20
    line_width: int = 80
    find_max_hits: int = 50
    find_context_lines: int = 4


class PageBrowser:
    """The browser of one episode. Methods return :class:`ToolResult` or raise :class:`ToolError`."""

    def __init__(self, knowledge: Knowledge, limits: PageBrowserLimits | None = None) -> None:
        self.knowledge = knowledge
        self.limits = limits or PageBrowserLimits()
        self.pages: list[BrowserPage] = []
        self.calls = 0
        self.chars = 0
        self._fetched: dict[str, Page] = {}
        self._lock = threading.Lock()

    # --- budget -------------------------------------------------------------------------------
    @contextmanager
    def call(self) -> Iterator[None]:
        """One tool call: serialised with the episode's other browser calls, and counted.

        Raises:
            ToolError: kind ``"limit"`` when the call or character budget is spent.
        """
        with self._lock:
            self.begin_call()
            yield

    def begin_call(self) -> None:
        """Count one call.

        Raises:
            ToolError: kind ``"limit"`` when the call or character budget is spent.
        """
        lim = self.limits
        if self.calls >= lim.max_calls:
            raise ToolError(
                "limit",
                f"browser call limit reached: all {lim.max_calls} browser calls of this run "
                "are used; answer with the evidence you have",
            )
        if self.chars >= lim.max_chars:
            raise ToolError(
                "limit",
                f"browser output limit reached: {lim.max_chars:,} characters shown in this "
                "run; answer with the evidence you have",
            )
        self.calls += 1

    def _finish(self, text: str, data: dict[str, Any], cut: bool = False) -> ToolResult:
        lim = self.limits
        room = lim.max_chars - self.chars
        notes = []
        if len(text) > room:
            text, cut = text[:room].rsplit("\n", 1)[0], True
            notes.append(
                f"[output cut: the browser output limit of {lim.max_chars:,} characters for this run is reached]"
            )
        if self.calls == lim.max_calls:
            notes.append(f"[this was the last of {lim.max_calls} browser calls allowed in this run]")
        text = "\n".join([text, *notes]) if notes else text
        self.chars += len(text)
        data = {**data, "calls_used": self.calls, "chars_used": self.chars}
        return ToolResult(ok=True, content=text, data=data, truncated=cut)

    # --- pages --------------------------------------------------------------------------------
    def _push(self, page: BrowserPage) -> int:
        self.pages.append(page)
        return len(self.pages) - 1

    def page_at(self, cursor: int) -> tuple[int, BrowserPage]:
        """(cursor, page) for ``cursor`` (``-1`` = the current page).

        Raises:
            ToolError: ``bad_argument`` when there is no such page.
        """
        if not self.pages:
            raise ToolError(
                "bad_argument", "no page is open yet; call browser.search or browser.open with a URL"
            )
        index = len(self.pages) - 1 if cursor < 0 else cursor
        if index >= len(self.pages):
            raise ToolError(
                "bad_argument",
                f"no page with cursor {cursor}; open pages have cursors 0-{len(self.pages) - 1}",
            )
        return index, self.pages[index]

    def view(self, cursor: int, loc: int, num_lines: int, extra: dict[str, Any] | None = None) -> ToolResult:
        """Show lines of the page at ``cursor`` from ``loc`` (``num_lines`` lines, ``-1`` = one view)."""
        cursor, page = self.page_at(cursor)
        loc = max(loc, 0)
        if loc >= len(page.lines):
            raise ToolError(
                "bad_argument",
                f"page [{cursor}] has {len(page.lines)} lines (L0-L{len(page.lines) - 1}); "
                f"loc {loc} is past its end",
            )
        shown = render_view(page, cursor, loc, num_lines, self.limits.view_chars)
        data = {
            "cursor": cursor,
            "url": page.url,
            "title": page.title,
            "lines": [shown.first, shown.last],
            "total_lines": len(page.lines),
            "links": len(page.links),
            **(extra or {}),
        }
        return self._finish(shown.text, data, shown.cut)

    # --- tools --------------------------------------------------------------------------------
    def search(self, query: str, topn: int) -> ToolResult:
        """Search the knowledge source and open the result list as a new page."""
        if not query.strip():
            raise ToolError("bad_argument", "browser.search: query is empty")
        topn = max(1, min(topn, self.limits.max_topn))
        results, hidden = self.knowledge.search(query, topn)
        name = self.knowledge.name
        lines = [f"Search results for {query!r} ({name}; {len(results)} of at most {topn})", ""]
        links: dict[int, Link] = {}
        for i, r in enumerate(results):
            links[i] = Link(r.url, r.title)
            lines += [f"{marker(i, r.title, r.url)}", r.snippet, ""]
        if not results:
            lines.append("No results. Try other words (a code such as I50.23, a lab name, a condition).")
        if hidden:
            lines.append(
                f"[{hidden} result(s) hidden: their sites are on the deny list of benchmark answer-key sources]"
            )
        coverage = getattr(self.knowledge.backend, "coverage", None)  # the offline index says what it holds
        if coverage:
            lines.append(f"[{coverage}]")
        page = make_page(
            f"{name}-search://?q={quote(query)}",
            f"Search results: {query}",
            "\n".join(lines),
            width=self.limits.line_width,
            links=links,
        )
        cursor = self._push(page)
        found = [{"id": i, "url": r.url, "title": r.title} for i, r in enumerate(results)]
        return self.view(cursor, 0, -1, {"results": found, "hidden": hidden, "backend": name})

    def _fetch(self, url: str) -> Page:
        page = self._fetched.get(url)
        if page is None:
            page = self.knowledge.fetch(url)
            self._fetched[url] = page
        return page

    def _open_url(self, url: str, view_source: bool) -> int:
        fetched = self._fetch(url)
        if view_source:
            lines = wrap_lines(fetched.source or fetched.text, self.limits.line_width)
            page = BrowserPage(f"view-source:{fetched.url}", f"Source of {fetched.title}", lines)
        else:
            page = make_page(fetched.url, fetched.title, fetched.text, width=self.limits.line_width)
        if fetched.truncated:
            page.lines.append(f"[page cut: only the first {self.knowledge_max_bytes():,} bytes were read]")
        return self._push(page)

    def knowledge_max_bytes(self) -> int:
        """The byte cap of fetched pages (for the cut notice)."""
        return int(self.knowledge.backend.describe().get("max_page_bytes", 0))

    def open(self, id: int | str, cursor: int, loc: int, num_lines: int, view_source: bool) -> ToolResult:
        """Open link ``id`` of the page at ``cursor``, or the URL ``id``, or (``id=-1``) scroll that page."""
        if isinstance(id, str) and id.strip().lstrip("-").isdigit():
            id = int(id)
        if isinstance(id, str):
            new = self._open_url(id.strip(), view_source)
            return self.view(new, loc, num_lines)
        if id < 0:
            return self.view(cursor, loc, num_lines)
        at, page = self.page_at(cursor)
        link = page.links.get(id)
        if link is None:
            have = f"links 0-{len(page.links) - 1}" if page.links else "no links"
            raise ToolError("bad_argument", f"page [{at}] has no link {id} (it has {have})")
        if link.cursor is not None:
            return self.view(link.cursor, link.loc if loc < 0 else loc, num_lines)
        new = self._open_url(link.url, view_source)
        return self.view(new, link.loc if loc < 0 else loc, num_lines)

    def find(self, pattern: str, cursor: int) -> ToolResult:
        """Case-insensitive literal search in the page at ``cursor``; the matches open as a new page."""
        if not pattern.strip():
            raise ToolError("bad_argument", "browser.find: pattern is empty")
        at, page = self.page_at(cursor)
        needle, lim = pattern.casefold(), self.limits
        hits = [i for i, line in enumerate(page.lines) if needle in line.casefold()][: lim.find_max_hits]
        if not hits:
            return self._finish(
                f"No matches for {pattern!r} in [{at}] {page.title}", {"cursor": at, "matches": 0}
            )
        lines = [
            f"Matches for {pattern!r} in [{at}] {page.title} ({len(hits)} shown, at most {lim.find_max_hits})",
            "",
        ]
        links: dict[int, Link] = {}
        for n, i in enumerate(hits):
            links[n] = Link(page.url, f"match at L{i}", loc=i, cursor=at)
            lines.append(marker(n, f"match at L{i}", page.url))
            lines += page.lines[i : i + lim.find_context_lines]
            lines.append("")
        found = BrowserPage(
            f"{page.url}#find={quote(pattern)}", f"Find results for {pattern!r} in {page.title}", lines, links
        )
        return self.view(self._push(found), 0, -1, {"matches": len(hits), "in_cursor": at})

    def describe(self) -> dict[str, Any]:
        """Calls and characters used, and the limits."""
        return {
            "calls": self.calls,
            "chars": self.chars,
            "pages": len(self.pages),
            "limits": asdict(self.limits),
        }


def attach_browser(
    ctx: ToolContext, knowledge: Knowledge, limits: PageBrowserLimits | None = None
) -> PageBrowser:
    """Give the episode of ``ctx`` its own browser on ``knowledge`` (replacing any previous one)."""
    session = PageBrowser(knowledge, limits)
    ctx.state[STATE_KEY] = session
    return session


def browser_session(ctx: ToolContext) -> PageBrowser:
    """The browser of ``ctx``'s episode.

    Raises:
        ToolError: ``unavailable`` when the run attached no knowledge source.
    """
    session = ctx.state.get(STATE_KEY)
    if not isinstance(session, PageBrowser):
        raise ToolError("unavailable", "the browser tools are not enabled in this run (no knowledge source)")
    return session
