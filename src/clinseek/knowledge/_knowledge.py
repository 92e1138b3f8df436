"""One run's knowledge source: a backend, the response cache and the deny list, opened from a config."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ClinseekError, ToolError
from ._backend import OfflineBackend, Page, SearchBackend, SearchResult
from ._cache import CacheMode, WebResponseCache
from ._corpus import CorpusSpec, corpus_documents, corpus_version
from ._deny import DEFAULT_DENY, DenyList
from ._document import KnowledgeDocument
from ._index import load_or_build_index
from ._web import WEB_BACKENDS

BackendName = Literal["offline", "serper", "brave", "searxng", "duckduckgo"]


@dataclass(frozen=True, slots=True)
class KnowledgeConfig:
    """How a run searches: which backend, where the cache lives, what is denied.

    Attributes:
        backend: ``offline`` (default: the local BM25 corpus) or a web backend.
        api_key: the key of ``serper`` / ``brave`` (never recorded in a manifest).
        base_url: endpoint of the web backend (required for ``searxng``; overrides the public API
            URL of the others).
        cache_dir: root of the index cache (``<cache_dir>/offline/index-<version>``) and of the web
            response cache (``<cache_dir>/web/<backend>/``); ``None`` = in memory, no replay.
        cache_mode: ``read_write``, ``replay`` (network off: only cached responses) or ``off``.
        store: a clinseek store whose dictionaries and lab reference ranges enrich the corpus.
        folders: folders of Markdown / HTML / text / PDF documents added to the offline corpus.
        bundled: include the generated clinical reference documents in the offline corpus
            (``False``: only ``folders`` and extra documents).
        icd10_procedures: add the ICD-10-PCS procedure titles to the offline corpus.
        deny: URL patterns never shown or fetched (see :data:`DEFAULT_DENY`).
        fetch_timeout_s: seconds for connecting to and each read from a web server.
        max_page_bytes: bytes of a page body read at most (the rest is cut, and the page says so).
    """

    backend: BackendName = "offline"
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    cache_dir: Path | None = None
    cache_mode: CacheMode = "read_write"
    store: Path | None = None
    folders: tuple[Path, ...] = ()
    bundled: bool = True
    icd10_procedures: bool = False
    deny: tuple[str, ...] = DEFAULT_DENY
    fetch_timeout_s: float = 15.0
    max_page_bytes: int = 2_000_000


class Knowledge:
    """A run's knowledge source; shared by every episode of the run, holds no per-episode state.

    ``search`` and ``fetch`` go through the response cache (web backends) and the deny list
    (every backend): denied results are dropped and counted, denied URLs are refused.
    """

    def __init__(self, backend: SearchBackend, cache: WebResponseCache, deny: DenyList,
                 problems: Sequence[str] = ()) -> None:
        self.backend = backend
        self.cache = cache
        self.deny = deny
        self.problems = tuple(problems)

    @property
    def name(self) -> str:
        """The backend's name."""
        return self.backend.name

    def search(self, query: str, topn: int) -> tuple[list[SearchResult], int]:
        """(results, number hidden by the deny list) for ``query``.

        Raises:
            ToolError: the backend failed in a way the model can work around, or a replay miss.
        """
        def compute() -> list[dict[str, str]]:
            return [asdict(r) for r in self.backend.search(query, topn)]

        if isinstance(self.backend, OfflineBackend):
            found = self.backend.search(query, topn)
        else:
            found = [SearchResult(**r) for r in self.cache.call(self.name, f"search\n{topn}\n{query}", compute)]
        kept = [r for r in found if not self.deny.blocks(r.url)]
        return kept, len(found) - len(kept)

    def fetch(self, url: str) -> Page:
        """The page at ``url``.

        Raises:
            ToolError: ``blocked`` (deny list, also after redirects), ``not_found``, ``http_error``,
                ``timeout``, ``unsupported_content``, ``not_cached`` (replay miss), ...
        """
        if self.deny.blocks(url):
            raise ToolError("blocked", f"{url} is on the deny list (a possible benchmark answer-key source)")
        if isinstance(self.backend, OfflineBackend):
            return self.backend.fetch(url)
        page = Page(**self.cache.call(self.name, f"fetch\n{url}", lambda: asdict(self.backend.fetch(url))))
        if self.deny.blocks(page.url):
            raise ToolError("blocked", f"{url} leads to {page.url}, which is on the deny list")
        return page

    def describe(self) -> dict[str, Any]:
        """What the run manifest records: backend, corpus version, cache path and counts, deny list."""
        return {**self.backend.describe(), "cache": self.cache.describe(), "deny": list(self.deny.patterns),
                "corpus_problems": list(self.problems)}


def _web_backend(config: KnowledgeConfig, deny: DenyList) -> SearchBackend:
    if config.backend in ("serper", "brave") and not config.api_key:
        raise ClinseekError(f"knowledge backend {config.backend!r} needs an API key")
    if config.backend == "searxng" and not config.base_url:
        raise ClinseekError("knowledge backend 'searxng' needs the URL of an instance (base_url)")
    cls = WEB_BACKENDS[config.backend]
    return cls(base_url=config.base_url, api_key=config.api_key, timeout_s=config.fetch_timeout_s,
               max_page_bytes=config.max_page_bytes, deny=deny)


def open_knowledge(config: KnowledgeConfig | None = None,
                   extra_documents: Sequence[KnowledgeDocument] = ()) -> Knowledge:
    """Open the knowledge source of a run (blocking: may build the offline index, seconds).

    Args:
        config: the backend and cache settings (default: offline, in memory).
        extra_documents: more documents for the offline corpus, e.g. :func:`task_documents` of
            the benchmark's task registry (they change the corpus version).

    Raises:
        ClinseekError: an unknown backend, a missing API key or URL, or a damaged cached index.
        StoreError: ``config.store`` is not a clinseek store.
    """
    config = config or KnowledgeConfig()
    deny = DenyList(config.deny)
    if config.backend == "offline":
        spec = CorpusSpec(config.bundled, config.icd10_procedures, config.store, tuple(config.folders), tuple(extra_documents))
        problems: list[str] = []
        index_dir = config.cache_dir / "offline" if config.cache_dir else None
        index = load_or_build_index(index_dir, corpus_version(spec), lambda: corpus_documents(spec, problems), problems)
        return Knowledge(OfflineBackend(index), WebResponseCache(None, "off"), deny, index.problems)
    if config.backend not in WEB_BACKENDS:
        raise ClinseekError(f"unknown knowledge backend {config.backend!r}; one of offline, {', '.join(WEB_BACKENDS)}")
    cache = WebResponseCache(config.cache_dir / "web" if config.cache_dir else None, config.cache_mode)
    return Knowledge(_web_backend(config, deny), cache, deny)
