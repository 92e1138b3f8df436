"""Browser pages as numbered lines with numbered links, and their views (gpt-oss browser format).

A page's text is wrapped at ``line_width`` characters; every Markdown link ``[text](url)`` becomes
``【<id>†<text>†<host>】`` and is recorded under that id, so ``browser.open(id=<id>)`` follows it.
A view prints ``[<cursor>] <title> (<url>)``, a scrollbar line ``**viewing lines [a - b] of N**``
and the lines as ``L<i>: ...`` (0-based), as the reference's browser does.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)\s]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)\)")


@dataclass(frozen=True, slots=True)
class Link:
    """A numbered link: where it goes, its text, the line to show first, or an existing page's cursor."""

    url: str
    text: str
    loc: int = 0
    cursor: int | None = None


@dataclass(slots=True)
class BrowserPage:
    """One page on the browser's stack: numbered lines and numbered links."""

    url: str
    title: str
    lines: list[str]
    links: dict[int, Link] = field(default_factory=dict)


def link_host(url: str) -> str:
    """The short origin shown in a link marker (``mayoclinic.org``, ``clinseek-kb``, ``file``)."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return (parts.hostname or url).removeprefix("www.")
    return parts.scheme or url


def marker(link_id: int, text: str, url: str) -> str:
    """The inline marker of link ``link_id``: ``【id†text†host】``."""
    return f"【{link_id}†{text.strip() or url}†{link_host(url)}】"


def make_page(
    url: str, title: str, text: str, *, width: int, links: dict[int, Link] | None = None
) -> BrowserPage:
    """Turn ``text`` into a page: Markdown links numbered after ``links``, lines wrapped at ``width``."""
    found: dict[int, Link] = dict(links or {})
    base = url if urlsplit(url).scheme in ("http", "https") else ""

    def number(match: re.Match[str]) -> str:
        target = urljoin(base, match.group(2)) if base else match.group(2)
        link_id = len(found)
        found[link_id] = Link(target, match.group(1))
        return marker(link_id, match.group(1), target)

    body = _LINK.sub(number, _IMAGE.sub(lambda m: f"[image: {m.group(1)}]", text))
    return BrowserPage(url, title or url, wrap_lines(body, width), found)


def wrap_lines(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` characters (blank lines kept; at least one line)."""
    lines: list[str] = []
    for raw in text.splitlines() or [""]:
        wrapped = textwrap.wrap(
            raw, width=width, break_on_hyphens=False, replace_whitespace=False, drop_whitespace=True
        )
        lines.extend(wrapped or [""])
    return lines


@dataclass(frozen=True, slots=True)
class View:
    """One rendered view of a page: the text, the first and last line shown, and whether it was cut."""

    text: str
    first: int
    last: int
    cut: bool


def render_view(page: BrowserPage, cursor: int, loc: int, num_lines: int, max_chars: int) -> View:
    """Lines ``loc``.. of ``page`` as a view of at most ``num_lines`` lines (``-1``: as many as fit
    in ``max_chars``); at least one line is shown. ``cut`` is True when ``num_lines`` asked for more
    than ``max_chars`` allowed."""
    total = len(page.lines)
    header = f"[{cursor}] {page.title} ({page.url})"
    wanted = total - loc if num_lines < 0 else min(num_lines, total - loc)
    body: list[str] = []
    size = len(header) + 40
    for i in range(loc, loc + wanted):
        line = f"L{i}: {page.lines[i]}"
        if body and size + len(line) + 1 > max_chars:
            break
        body.append(line)
        size += len(line) + 1
    last = loc + len(body) - 1
    cut = num_lines >= 0 and len(body) < wanted
    text = f"{header}\n**viewing lines [{loc} - {last}] of {total - 1}**\n\n" + "\n".join(body)
    return View(text, loc, last, cut)
