"""Web search backends behind :class:`~clinseek.knowledge.SearchBackend`: Serper, Brave, SearXNG, DuckDuckGo.

Each takes its endpoint as ``base_url`` (so a test or a proxy can stand in for the real API) and
fetches pages with the shared :func:`fetch_page`. API references: Serper ``POST /search``
(``X-API-KEY``; ``organic[].title/link/snippet``), Brave ``GET /res/v1/web/search``
(``X-Subscription-Token``; ``web.results[].title/url/description``), SearXNG ``GET /search?format=json``
(``results[].title/url/content``), DuckDuckGo through the ``ddgs`` package (no key; ``title/href/body``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import ClinseekError, ToolError, import_optional
from ._backend import Page, SearchResult
from ._deny import DenyList
from ._fetch import fetch_page


class WebBackend:
    """Common part of the web backends: one HTTP client, the fetch caps, JSON search calls."""

    name = "web"
    default_base_url = ""

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None, timeout_s: float = 15.0,
                 max_page_bytes: int = 2_000_000, deny: DenyList | None = None) -> None:
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.max_page_bytes = max_page_bytes
        self.deny = deny or DenyList()
        self._httpx = import_optional("httpx2", f"the {self.name} search backend", "web")
        self._client = self._httpx.Client(timeout=timeout_s, headers={"User-Agent": "clinseek-browser/0.1"},
                                          trust_env=False)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        url = f"{self.base_url}{path}"
        try:
            response = self._client.request(method, url, **kwargs)
        except self._httpx.TimeoutException:
            raise ToolError("timeout", f"{self.name} search did not answer in {self.timeout_s:g} s") from None
        except self._httpx.TransportError as err:
            raise ToolError("backend", f"{self.name} search is unreachable ({err.__class__.__name__})") from None
        if response.status_code in (401, 403):
            raise ClinseekError(f"{self.name} search refused the credentials (HTTP {response.status_code} from "
                                f"{self.base_url}); check the API key")
        if response.status_code >= 400:
            raise ToolError("backend", f"{self.name} search failed with HTTP {response.status_code}; try again later")
        try:
            return response.json()
        except ValueError:
            raise ToolError("backend", f"{self.name} search answered with something that is not JSON") from None

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """Up to ``topn`` results for ``query`` (each backend implements it)."""
        raise NotImplementedError

    def fetch(self, url: str) -> Page:
        """The page at ``url`` (see :func:`~clinseek.knowledge.fetch_page`)."""
        return fetch_page(self._client, url, self.deny, max_bytes=self.max_page_bytes)

    def describe(self) -> dict[str, Any]:
        """Backend name and endpoint without user-info or query (never the key)."""
        parts = urlsplit(self.base_url)
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        return {"backend": self.name, "base_url": urlunsplit((parts.scheme, netloc, parts.path, "", "")),
                "timeout_s": self.timeout_s, "max_page_bytes": self.max_page_bytes}

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()


def _results(items: Any, url_key: str, text_key: str, topn: int) -> list[SearchResult]:
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get(url_key):
            out.append(SearchResult(str(item[url_key]), str(item.get("title") or item[url_key]),
                                    str(item.get(text_key) or "")))
    return out[:topn]


class SerperBackend(WebBackend):
    """Google results through serper.dev (needs an API key)."""

    name = "serper"
    default_base_url = "https://google.serper.dev"

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """``POST /search {q, num}``."""
        body = self._json("POST", "/search", json={"q": query, "num": topn},
                          headers={"X-API-KEY": self._api_key or ""})
        return _results(body.get("organic") if isinstance(body, dict) else None, "link", "snippet", topn)


class BraveBackend(WebBackend):
    """Brave Search API (needs an API key)."""

    name = "brave"
    default_base_url = "https://api.search.brave.com"

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """``GET /res/v1/web/search?q=&count=``."""
        body = self._json("GET", "/res/v1/web/search", params={"q": query, "count": topn},
                          headers={"X-Subscription-Token": self._api_key or "", "Accept": "application/json"})
        web = body.get("web") if isinstance(body, dict) else None
        return _results(web.get("results") if isinstance(web, dict) else None, "url", "description", topn)


class SearxngBackend(WebBackend):
    """A SearXNG instance (its URL is required; JSON output must be enabled on it)."""

    name = "searxng"

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """``GET /search?q=&format=json``."""
        body = self._json("GET", "/search", params={"q": query, "format": "json"})
        return _results(body.get("results") if isinstance(body, dict) else None, "url", "content", topn)


def _ddgs_text() -> Callable[..., list[dict[str, Any]]]:
    ddgs = import_optional("ddgs", "browser.search with DuckDuckGo", extra="web")
    search: Callable[..., list[dict[str, Any]]] = ddgs.DDGS().text
    return search


class DuckDuckGoBackend(WebBackend):
    """DuckDuckGo through the ``ddgs`` package (no key). ``ddgs`` brings its own HTTP client."""

    name = "duckduckgo"

    def __init__(self, *, text_search: Callable[..., list[dict[str, Any]]] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._text_search = text_search

    def search(self, query: str, topn: int) -> list[SearchResult]:
        """``DDGS().text(query, max_results=topn)``."""
        text_search = self._text_search or _ddgs_text()
        try:
            items = text_search(query, max_results=topn)
        except Exception as err:  # ddgs raises its own tree (rate limits, timeouts) over primp
            raise ToolError("backend", f"duckduckgo search failed ({err.__class__.__name__}); try again later") from None
        return _results(list(items or []), "href", "body", topn)

    def describe(self) -> dict[str, Any]:
        """Backend name (ddgs chooses its own endpoints)."""
        return {"backend": self.name, "timeout_s": self.timeout_s, "max_page_bytes": self.max_page_bytes}


WEB_BACKENDS: dict[str, type[WebBackend]] = {
    "serper": SerperBackend, "brave": BraveBackend, "searxng": SearxngBackend, "duckduckgo": DuckDuckGoBackend,
}
"""Web backends by name."""
