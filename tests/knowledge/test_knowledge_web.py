"""Web backends against a real loopback server (search APIs and pages), the response cache, and replay
with the server stopped."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from clinseek.errors import ClinseekError, MissingExtraError, ToolError
from clinseek.knowledge import (
    DenyList,
    DuckDuckGoBackend,
    Knowledge,
    KnowledgeConfig,
    WebResponseCache,
    open_knowledge,
)
from clinseek.tools import PageBrowserLimits, ToolContext, ToolResult, attach_browser, call_tool

from ._server import DENIED, LoopbackServer


def _web(server: LoopbackServer, tmp_path: Path, backend: str = "serper", mode: str = "read_write",
         **extra: Any) -> Knowledge:
    base = extra.pop("base_url", server.base + extra.pop("path", ""))
    config = KnowledgeConfig(backend=backend, api_key=extra.pop("api_key", "good-key"), base_url=base,  # type: ignore[arg-type]
                             cache_dir=tmp_path / "cache", cache_mode=mode, fetch_timeout_s=0.5,  # type: ignore[arg-type]
                             max_page_bytes=100_000, **extra)
    return open_knowledge(config)


def _call(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return anyio.run(call_tool, ctx, name, args)


def _ctx(knowledge: Knowledge) -> ToolContext:
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]
    attach_browser(ctx, knowledge, PageBrowserLimits())
    return ctx


@pytest.mark.parametrize("backend", ["serper", "brave", "searxng"])
def test_each_search_api_is_parsed_and_denied_results_are_hidden(
    web_server: LoopbackServer, tmp_path: Path, backend: str
) -> None:
    knowledge = _web(web_server, tmp_path, backend)
    results, hidden = knowledge.search("potassium reference range", 5)
    assert [r.title for r in results] == ["Potassium (serum)", "Sodium (serum)"]
    assert results[0].url == f"{web_server.base}/page/potassium" and results[0].snippet
    assert hidden == 1 and all(r.url != DENIED for r in results)


def test_duckduckgo_goes_through_ddgs(tmp_path: Path) -> None:
    seen: list[tuple[str, int]] = []

    def fake_text(query: str, max_results: int) -> list[dict[str, str]]:  # ddgs talks to the real web: faked
        seen.append((query, max_results))
        return [{"title": "K", "href": "https://example.org/k", "body": "potassium"}, {"title": "no url"}]

    backend = DuckDuckGoBackend(text_search=fake_text)
    assert [r.url for r in backend.search("potassium", 3)] == ["https://example.org/k"]
    assert seen == [("potassium", 3)]


def test_missing_ddgs_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ddgs", None)
    with pytest.raises(MissingExtraError, match=r"\[web\]"):
        DuckDuckGoBackend().search("potassium", 3)


def test_a_failing_ddgs_search_is_a_model_visible_error() -> None:
    def broken(query: str, max_results: int) -> list[dict[str, str]]:
        raise RuntimeError("ratelimited")

    with pytest.raises(ToolError) as err:
        DuckDuckGoBackend(text_search=broken).search("potassium", 3)
    assert err.value.kind == "backend"


def test_a_page_is_cleaned_and_its_links_numbered(web_server: LoopbackServer, tmp_path: Path) -> None:
    ctx = _ctx(_web(web_server, tmp_path))
    search = _call(ctx, "browser.search", query="potassium")
    assert "hidden" in search.content and search.data["hidden"] == 1
    page = _call(ctx, "browser.open", id=0)
    assert page.ok and page.data["title"].startswith("Potassium")
    assert "3.5 to 5.1 mEq/L" in page.content
    assert "Home | About" not in page.content  # boilerplate removed by trafilatura
    assert "【0†sodium†127.0.0.1】" in page.content  # the relative link, resolved and numbered
    sodium = _call(ctx, "browser.open", id=0)
    assert sodium.data["url"] == f"{web_server.base}/page/sodium"


def test_view_source_shows_the_html_in_short_lines(web_server: LoopbackServer, tmp_path: Path) -> None:
    ctx = _ctx(_web(web_server, tmp_path))
    raw = _call(ctx, "browser.open", id=f"{web_server.base}/page/potassium", view_source=True)
    assert raw.ok and "Home | About | Contact" in raw.content
    assert all(len(line) <= 80 for line in ctx.state["browser"].pages[0].lines)


def test_redirects_are_followed_and_checked(web_server: LoopbackServer, tmp_path: Path) -> None:
    knowledge = _web(web_server, tmp_path)
    assert knowledge.fetch(f"{web_server.base}/redirect").url == f"{web_server.base}/page/potassium"
    with pytest.raises(ToolError) as blocked:
        knowledge.fetch(f"{web_server.base}/redirect-denied")
    assert blocked.value.kind == "blocked"
    with pytest.raises(ToolError) as loop:
        knowledge.fetch(f"{web_server.base}/loop")
    assert loop.value.kind == "http_error" and "redirects" in loop.value.message


@pytest.mark.parametrize(
    ("path", "kind"),
    [("/missing", "http_error"), ("/slow", "timeout"), ("/image.png", "unsupported_content")],
)
def test_failing_pages_are_model_visible_errors(web_server: LoopbackServer, tmp_path: Path, path: str, kind: str) -> None:
    result = _call(_ctx(_web(web_server, tmp_path)), "browser.open", id=f"{web_server.base}{path}")
    assert not result.ok and result.error_kind == kind


def test_a_huge_page_is_cut_at_the_byte_cap_and_says_so(web_server: LoopbackServer, tmp_path: Path) -> None:
    knowledge = _web(web_server, tmp_path)
    page = knowledge.fetch(f"{web_server.base}/huge")
    assert page.truncated and len(page.text.encode()) <= 100_000
    ctx = _ctx(knowledge)
    _call(ctx, "browser.open", id=f"{web_server.base}/huge")
    total = ctx.state["browser"].pages[0].lines
    assert total[-1] == "[page cut: only the first 100,000 bytes were read]"


def test_plain_text_is_shown_as_it_is(web_server: LoopbackServer, tmp_path: Path) -> None:
    page = _web(web_server, tmp_path).fetch(f"{web_server.base}/notes.txt")
    assert page.text == "Plain notes.\nPotassium 3.5-5.1 mEq/L.\n" and page.content_type == "text/plain"


def test_non_http_urls_are_refused(web_server: LoopbackServer, tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        _web(web_server, tmp_path).fetch("file:///etc/passwd")
    assert err.value.kind == "bad_argument"


def test_a_refused_api_key_is_an_infrastructure_error(web_server: LoopbackServer, tmp_path: Path) -> None:
    ctx = _ctx(_web(web_server, tmp_path, api_key="bad-key"))
    with pytest.raises(ClinseekError, match="credentials"):
        _call(ctx, "browser.search", query="potassium")


def test_a_broken_search_api_is_a_model_visible_error(web_server: LoopbackServer, tmp_path: Path) -> None:
    ctx = _ctx(_web(web_server, tmp_path, "searxng", path="/api-broken"))
    result = _call(ctx, "browser.search", query="potassium")
    assert result.error_kind == "backend" and "HTTP 500" in result.content


def test_the_manifest_entry_never_holds_credentials(web_server: LoopbackServer, tmp_path: Path) -> None:
    host = web_server.base.removeprefix("http://")
    knowledge = _web(web_server, tmp_path, "searxng", base_url=f"http://user:secret@{host}/?token=abc")
    described = knowledge.describe()
    assert described["base_url"] == f"http://{host}/"
    assert "secret" not in repr(described) and "abc" not in repr(described)


def test_missing_configuration_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ClinseekError, match="API key"):
        open_knowledge(KnowledgeConfig(backend="serper"))
    with pytest.raises(ClinseekError, match="base_url"):
        open_knowledge(KnowledgeConfig(backend="searxng"))
    with pytest.raises(ValueError, match="replay needs a cache directory"):
        WebResponseCache(None, "replay")


def test_missing_trafilatura_names_the_extra(web_server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    with pytest.raises(MissingExtraError, match=r"\[web\]"):
        _web(web_server, tmp_path, mode="off").fetch(f"{web_server.base}/page/potassium")


SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("browser.search", {"query": "potassium reference range", "topn": 5}),
    ("browser.open", {"id": 0}),
    ("browser.find", {"pattern": "hyperkalemia"}),
    ("browser.open", {"id": 0}),
    ("browser.open", {"id": "/missing"}),
    ("browser.open", {"id": "/redirect"}),
    ("browser.search", {"query": "sodium", "topn": 2}),
]


def _run_script(knowledge: Knowledge, base: str) -> list[tuple[bool, str | None, str]]:
    ctx = _ctx(knowledge)
    out = []
    for name, args in SCRIPT:
        args = {k: (base + v if isinstance(v, str) and v.startswith("/") else v) for k, v in args.items()}
        r = _call(ctx, name, **args)
        out.append((r.ok, r.error_kind, r.content))
    return out


def test_a_run_replays_exactly_with_the_server_stopped(tmp_path: Path) -> None:
    server = LoopbackServer().start()
    base = server.base
    try:
        recorded = _run_script(_web(server, tmp_path), base)
        hits_after_record = sum(server.hits.values())
        again = _web(server, tmp_path)
        assert _run_script(again, base) == recorded  # served from the cache ...
        assert sum(server.hits.values()) == hits_after_record  # ... with no request at all
        assert again.cache.counts["misses"] == 0 and again.cache.counts["hits"] > 0
    finally:
        server.stop()
    replay = _web(server, tmp_path, mode="replay")
    assert _run_script(replay, base) == recorded
    assert [ok for ok, _, _ in recorded] == [True, True, True, True, False, True, True]
    described = replay.describe()
    assert described["cache"]["path"] == str(tmp_path / "cache" / "web") and described["cache"]["mode"] == "replay"
    assert described["cache"]["entries"] >= 5 and described["backend"] == "serper"
    assert "good-key" not in repr(described) and "good-key" not in repr(KnowledgeConfig(api_key="good-key"))


def test_a_replay_miss_says_it_is_not_cached(tmp_path: Path) -> None:
    server = LoopbackServer()  # never started: nothing listens
    replay = _web(server, tmp_path, mode="replay")
    with pytest.raises(ToolError) as err:
        replay.search("never recorded", 3)
    assert err.value.kind == "not_cached"
    server.server_close()


def test_transient_failures_are_retried_live_but_replayed_as_recorded(web_server: LoopbackServer, tmp_path: Path) -> None:
    url = f"{web_server.base}/slow"
    with pytest.raises(ToolError):
        _web(web_server, tmp_path).fetch(url)
    assert web_server.hits["/slow"] == 1
    with pytest.raises(ToolError) as replayed:
        _web(web_server, tmp_path, mode="replay").fetch(url)
    assert replayed.value.kind == "timeout" and web_server.hits["/slow"] == 1
    with pytest.raises(ToolError):
        _web(web_server, tmp_path).fetch(url)  # read_write tries the network again
    assert web_server.hits["/slow"] == 2


def test_the_deny_list_is_configurable(web_server: LoopbackServer, tmp_path: Path) -> None:
    knowledge = _web(web_server, tmp_path, deny=("127.0.0.1/page/sodium",))
    results, hidden = knowledge.search("potassium", 5)
    assert [r.title for r in results] == ["Potassium (serum)", "ClinSeek-Bench answers"] and hidden == 1
    assert DenyList().blocks("https://www.github.com/UCSC-VLAA/ClinSeekAgent/blob/main/x.json")
    assert DenyList().blocks("https://physionet.org/files/mimic-iv-demo/2.2/hosp/admissions.csv.gz")
    assert not DenyList().blocks("https://www.ncbi.nlm.nih.gov/books/NBK234/")
