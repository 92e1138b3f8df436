"""The search-backend interface and its offline implementation (the BM25 index)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ToolError
from ._index import KnowledgeIndex
from ._tokenize import tokenize

_SNIPPET_CHARS = 300


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search result: where it points, its title and a short snippet (plain text)."""

    url: str
    title: str
    snippet: str


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page.

    Attributes:
        url: the final URL (after redirects).
        title: the page title (or the URL when it has none).
        text: cleaned text; Markdown links ``[text](url)`` mark the page's links.
        source: the raw text as served (HTML source), for ``view_source``; capped like ``text``.
        content_type: the media type as served (``text/html``), or ``text/markdown`` for corpus pages.
        truncated: True when the body was longer than the byte cap and was cut.
    """

    url: str
    title: str
    text: str
    source: str = ""
    content_type: str = "text/plain"
    truncated: bool = False


class SearchBackend(Protocol):
    """What every knowledge backend offers. Implementations are thread-safe and hold no per-episode state."""

    name: str
    """Short stable name (``offline``, ``serper``, ``brave``, ``searxng``, ``duckduckgo``); part of cache keys."""

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """Up to ``topn`` results for ``query``, best first.

        Raises:
            ToolError: a problem the model can work around (backend unavailable, bad query).
        """
        ...

    def fetch(self, url: str) -> Page:
        """The page at ``url``.

        Raises:
            ToolError: ``not_found``, ``http_error``, ``timeout``, ``unsupported_content``...
        """
        ...

    def describe(self) -> dict[str, Any]:
        """What to record about this backend in a run manifest (never a credential)."""
        ...


def snippet(text: str, query: str, limit: int = _SNIPPET_CHARS) -> str:
    """The lines of ``text`` that share most terms with ``query``, joined, at most ``limit`` characters."""
    terms = set(tokenize(query))
    lines = [ln.strip().lstrip("# ") for ln in text.splitlines() if ln.strip()]
    ranked = sorted(range(len(lines)), key=lambda i: (-len(terms & set(tokenize(lines[i]))), i))
    picked = sorted(ranked[:3])
    out = " … ".join(re.sub(r"\[([^\]]*)\]\([^)\s]*\)", r"\1", lines[i]) for i in picked)
    return out if len(out) <= limit else out[: limit - 1] + "…"


_COVERS = {
    "icd10cm": "ICD-10-CM", "icd9cm": "ICD-9-CM", "icd9proc": "ICD-9 procedures", "icd10pcs": "ICD-10-PCS",
    "ccs": "CCS groups", "ccs_procedures": "CCS procedure groups", "phenotypes": "MedMod phenotypes",
    "labs": "lab tests (units, reference ranges)", "icu_items": "ICU items", "tasks": "benchmark task definitions",
}
"""What each bundled source is, in the words the coverage line uses (docs/knowledge.md, "The offline corpus")."""


def offline_coverage(sources: Iterable[str]) -> str:
    """One line saying what an offline index holds (from its documents' sources) and what it does not:
    it is reference tables, so a question about treatment or dosing finds only loosely related codes."""
    present = set(sources)
    parts = [label for source, label in _COVERS.items() if source in present]
    folders = sorted(s.removeprefix("folder:") for s in present if s.startswith("folder"))
    if folders:
        parts.append(f"your documents ({', '.join(folders)})")
    held = ", ".join(parts) or "nothing"
    return (f"Offline index: {held}. It holds codes, definitions and reference values, not treatment "
            "guidelines, drug dosing or textbook knowledge" + (" beyond your documents." if folders else "."))


class OfflineBackend:
    """Search and open the bundled corpus (plus a user's folders) from a :class:`KnowledgeIndex`."""

    name = "offline"

    def __init__(self, index: KnowledgeIndex) -> None:
        self.index = index
        self.coverage = offline_coverage(d.source for d in index.documents)
        """What the index holds and does not (shown under every offline search result list)."""

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """The ``topn`` best corpus documents for ``query`` by BM25."""
        return [SearchResult(h.document.url, h.document.title, snippet(h.document.text, query))
                for h in self.index.search(query, topn)]

    def fetch(self, url: str) -> Page:
        """The corpus document at ``url``.

        Raises:
            ToolError: ``not_found`` when the corpus has no such document (this backend has no web).
        """
        doc = self.index.get(url)
        if doc is None:
            raise ToolError("not_found", f"the offline knowledge corpus has no page {url!r} (this run has no web "
                                         "access); open a result of browser.search instead")
        return Page(doc.url, doc.title, doc.text, doc.text, "text/markdown")

    def describe(self) -> dict[str, Any]:
        """Backend name, corpus version and document count."""
        return {"backend": self.name, "corpus_version": self.index.version, "documents": len(self.index)}
