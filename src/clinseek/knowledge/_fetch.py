"""Fetching one web page: redirects checked against the deny list, a byte cap, content-type dispatch.

HTML is cleaned with trafilatura (the ``[web]`` extra) into Markdown with links; text, Markdown,
JSON, CSV and XML are shown as they are; PDF is read with pypdf when installed; anything else is
refused. HTTP failures, timeouts and refused content are :class:`ToolError` values the model sees.
"""

from __future__ import annotations

import io
from types import ModuleType
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from ..errors import ToolError, import_optional
from ._backend import Page
from ._deny import DenyList
from ._extra_docs import html_to_text

if TYPE_CHECKING:
    import httpx2

_TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "application/json", "text/xml", "application/xml")
_MAX_REDIRECTS = 5


def _trafilatura() -> ModuleType:
    return import_optional("trafilatura", "browser.open on web pages", extra="web")


def clean_html(html: str, url: str) -> tuple[str, str]:
    """(title, Markdown text with links) of an HTML page via trafilatura, falling back to plain text.

    Raises:
        MissingExtraError: trafilatura (extra ``[web]``) is not installed or cannot be imported.
    """
    traf = _trafilatura()
    text = traf.extract(html, url=url, output_format="markdown", include_links=True,
                        include_tables=True, favor_recall=True)
    meta = traf.extract_metadata(html)
    fallback_title, fallback_text = html_to_text(html)
    title = (meta.title if meta and meta.title else "") or fallback_title
    return title, text or fallback_text


def _pdf(data: bytes, url: str) -> str:
    try:
        from pypdf import PdfReader
    except ImportError:
        raise ToolError("unsupported_content", f"{url} is a PDF and this installation cannot read PDF "
                                               "(pip install pypdf)") from None
    try:
        return "\n".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(data)).pages)
    except Exception as err:  # pypdf's own error tree for damaged files
        raise ToolError("unsupported_content", f"{url}: the PDF cannot be read ({err})") from None


def _read_capped(response: httpx2.Response, max_bytes: int) -> tuple[bytes, bool]:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


def _page(url: str, media: str, data: bytes, encoding: str, truncated: bool) -> Page:
    if media == "application/pdf":
        text = _pdf(data, url)
        return Page(url, url.rsplit("/", 1)[-1] or url, text, text, media, truncated)
    raw = data.decode(encoding or "utf-8", errors="replace")
    if media in ("text/html", "application/xhtml+xml"):
        title, text = clean_html(raw, url)
        return Page(url, title or url, text, raw, media, truncated)
    if media in _TEXT_TYPES or media.startswith("text/"):
        return Page(url, url.rsplit("/", 1)[-1] or url, raw, raw, media, truncated)
    raise ToolError("unsupported_content", f"{url} serves {media or 'an unknown type'}, which cannot be shown as text")


def fetch_page(client: httpx2.Client, url: str, deny: DenyList, *, max_bytes: int) -> Page:
    """GET ``url``, following up to 5 redirects, each checked against ``deny``.

    Args:
        client: an ``httpx2.Client`` (its timeout applies to connect and each read).
        url: an ``http`` or ``https`` URL.
        deny: URLs it may not fetch or be redirected to.
        max_bytes: body bytes read at most; a longer body is cut and the page says so.

    Raises:
        ToolError: ``bad_argument`` (not http/https), ``blocked``, ``http_error`` (status >= 400 or
            too many redirects), ``timeout``, ``backend`` (connection failed), ``unsupported_content``.
        MissingExtraError: an HTML page and trafilatura is not installed.
    """
    httpx = import_optional("httpx2", "browser.open on web pages", "web")
    for _ in range(_MAX_REDIRECTS + 1):
        if urlsplit(url).scheme not in ("http", "https"):
            raise ToolError("bad_argument", f"cannot open {url!r}: only http and https URLs are fetched")
        if deny.blocks(url):
            raise ToolError("blocked", f"{url} is on the deny list (a possible benchmark answer-key source)")
        try:
            with client.stream("GET", url, follow_redirects=False) as response:
                if response.is_redirect and response.headers.get("location"):
                    url = urljoin(url, response.headers["location"])
                    continue
                if response.status_code >= 400:
                    raise ToolError("http_error", f"HTTP {response.status_code} for {url}")
                media = response.headers.get("content-type", "").split(";")[0].strip().lower()
                data, truncated = _read_capped(response, max_bytes)
                return _page(str(response.url), media, data, response.encoding or "utf-8", truncated)
        except httpx.TimeoutException:
            raise ToolError("timeout", f"{url} did not answer in time") from None
        except httpx.TransportError as err:
            raise ToolError("backend", f"cannot reach {url}: {err.__class__.__name__}") from None
    raise ToolError("http_error", f"more than {_MAX_REDIRECTS} redirects from {url}")
