"""``clinseek knowledge build`` and ``clinseek knowledge search`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from _tool_cases import pick_case
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.knowledge import Knowledge

from ._server import LoopbackServer

runner = CliRunner()


def test_build_reports_the_cached_corpus(full_knowledge: Knowledge, kb_cache: Path, demo_store: Path) -> None:
    result = runner.invoke(app, ["knowledge", "build", "--cache-dir", str(kb_cache), "--store", str(demo_store)])
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    assert described["corpus_version"] == full_knowledge.describe()["corpus_version"]  # loaded, not rebuilt
    assert described["backend"] == "offline" and described["documents"] > 90_000


def test_search_prints_the_browser_view(full_knowledge: Knowledge, kb_cache: Path, demo_store: Path) -> None:
    result = runner.invoke(app, ["knowledge", "search", "CCS category of ICD-10 I50.23", "--topn", "3",
                                 "--cache-dir", str(kb_cache), "--store", str(demo_store)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("[0] Search results: CCS category of ICD-10 I50.23")
    assert "【0†ICD-10-CM I50.23: Acute on chronic systolic (congestive) heart" in result.output


def test_search_a_web_backend_then_replay_it(web_server: LoopbackServer, tmp_path: Path) -> None:
    args = ["knowledge", "search", "potassium", "--backend", "searxng", "--base-url", web_server.base,
            "--cache-dir", str(tmp_path)]
    live = runner.invoke(app, args)
    assert live.exit_code == 0 and "Potassium (serum)" in live.output and "1 result(s) hidden" in live.output
    web_server.stop()
    replay = runner.invoke(app, [*args, "--cache-mode", "replay"])
    assert replay.exit_code == 0 and replay.output == live.output


def test_the_tool_command_offers_the_offline_index_and_web_pages(
        full_knowledge: Knowledge, kb_cache: Path, demo_store: Path, web_server: LoopbackServer) -> None:
    """``clinseek tool browser.*``: the offline index by default (the one a run uses), a web backend on request."""
    case = pick_case(demo_store)
    episode = ["--store", str(demo_store), "--subject-id", str(case.subject_id),
               "--prediction-time", str(case.prediction_time), "--knowledge-cache", str(kb_cache)]
    offline = runner.invoke(app, ["tool", "browser.search", *episode, "--arg", "query=CCS category of ICD-10 I50.23"])
    assert offline.exit_code == 0, offline.output
    assert "ICD-10-CM I50.23: Acute on chronic systolic (congestive) heart" in offline.output
    page = runner.invoke(app, ["tool", "browser.open", *episode, "--knowledge", "web", "--search-backend", "searxng",
                               "--search-url", web_server.base, "--arg", f"id={web_server.base}/page/potassium"])
    assert page.exit_code == 0, page.output
    assert "reference range of serum potassium is 3.5 to 5.1 mEq/L" in page.output  # cleaned by trafilatura
