"""A loopback HTTP server that plays Serper, Brave and SearXNG and serves test pages.

Routes (all on 127.0.0.1, a free port):
  POST /search                serper: {"q", "num"} -> organic[] (X-API-KEY must be "good-key", else 401)
  GET  /search?format=json    searxng: results[]
  GET  /res/v1/web/search     brave: web.results[] (X-Subscription-Token must be "good-key")
  GET  /page/potassium        an HTML article with a relative link to /page/sodium
  GET  /page/sodium           another HTML article
  GET  /redirect              302 -> /page/potassium
  GET  /redirect-denied       302 -> https://huggingface.co/datasets/UCSC-VLAA/ClinSeek-Bench
  GET  /loop                  302 -> /loop (forever)
  GET  /missing               404
  GET  /slow                  answers after 3 s
  GET  /huge                  5 MB of text/plain
  GET  /image.png             image/png bytes
  GET  /notes.txt             text/plain
  GET  /api-broken/search     500 (a broken search API for SearXNG)
Every request is counted in ``server.hits`` (path -> count), so a test can prove replay hit no network.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ARTICLE = """<html><head><title>Potassium (serum)</title></head><body>
<nav>Home | About | Contact</nav>
<article><h1>Potassium</h1>
<p>The adult reference range of serum potassium is 3.5 to 5.1 mEq/L. Values above 5.1 mEq/L
define hyperkalemia and values below 3.5 mEq/L define hypokalemia. See also <a href="/page/sodium">sodium</a>.</p>
<p>Common causes of hyperkalemia include acute kidney injury, chronic kidney disease and
potassium-sparing diuretics; hemolysis of the sample can raise the measured value falsely.</p>
<p>Hypokalemia is often caused by loop diuretics, vomiting or diarrhea, and can cause arrhythmias.</p>
</article><footer>Copyright</footer></body></html>"""

SODIUM = """<html><head><title>Sodium (serum)</title></head><body><article><h1>Sodium</h1>
<p>The adult reference range of serum sodium is 135 to 145 mEq/L; hyponatremia is below 135 mEq/L.
It is the most common electrolyte disorder in hospitalized patients and has many causes.</p>
<p>Severe hyponatremia can cause seizures and needs careful correction to avoid osmotic demyelination.</p>
</article></body></html>"""

DENIED = "https://huggingface.co/datasets/UCSC-VLAA/ClinSeek-Bench/viewer"


def search_results(base: str) -> list[dict[str, str]]:
    """The canned results every search API returns (one of them on the default deny list)."""
    return [
        {"title": "Potassium (serum)", "url": f"{base}/page/potassium", "text": "Reference range of potassium."},
        {"title": "ClinSeek-Bench answers", "url": DENIED, "text": "The benchmark with its labels."},
        {"title": "Sodium (serum)", "url": f"{base}/page/sodium", "text": "Reference range of sodium."},
    ]


class _Handler(BaseHTTPRequestHandler):
    server: LoopbackServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, payload: Any, status: int = 200) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        self.server.hits[parts.path] += 1
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if parts.path != "/search":
            return self._send(404, b"no")
        if self.headers.get("X-API-KEY") != "good-key":
            return self._json({"message": "Unauthorized"}, 401)
        items = search_results(self.server.base)[: int(body.get("num", 10))]
        self._json({"organic": [{"title": i["title"], "link": i["url"], "snippet": i["text"]} for i in items]})

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        self.server.hits[parts.path] += 1
        base = self.server.base
        if parts.path == "/search" and query.get("format") == ["json"]:
            items = search_results(base)
            return self._json({"results": [{"title": i["title"], "url": i["url"], "content": i["text"]} for i in items]})
        if parts.path == "/res/v1/web/search":
            if self.headers.get("X-Subscription-Token") != "good-key":
                return self._json({"error": "bad token"}, 403)
            items = search_results(base)[: int(query.get("count", ["10"])[0])]
            return self._json({"web": {"results": [{"title": i["title"], "url": i["url"], "description": i["text"]}
                                                   for i in items]}})
        routes = {
            "/page/potassium": lambda: self._send(200, ARTICLE.encode()),
            "/page/sodium": lambda: self._send(200, SODIUM.encode()),
            "/redirect": lambda: self._send(302, b"", headers={"Location": "/page/potassium"}),
            "/redirect-denied": lambda: self._send(302, b"", headers={"Location": DENIED}),
            "/loop": lambda: self._send(302, b"", headers={"Location": "/loop"}),
            "/slow": self._slow,
            "/huge": lambda: self._send(200, b"potassium line of filler text\n" * 180_000, "text/plain"),
            "/image.png": lambda: self._send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png"),
            "/notes.txt": lambda: self._send(200, b"Plain notes.\nPotassium 3.5-5.1 mEq/L.\n", "text/plain"),
            "/api-broken/search": lambda: self._send(500, b"oops"),
        }
        (routes.get(parts.path) or (lambda: self._send(404, b"<html><body>Not found</body></html>")))()

    def _slow(self) -> None:
        time.sleep(3)
        self._send(200, ARTICLE.encode())


class LoopbackServer(ThreadingHTTPServer):
    """The server; ``base`` is its http://127.0.0.1:<port> URL, ``hits`` counts requests by path."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.base = f"http://127.0.0.1:{self.server_address[1]}"
        self.hits: Counter[str] = Counter()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up early (the slow-page timeout test) are expected; stay quiet."""

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)
