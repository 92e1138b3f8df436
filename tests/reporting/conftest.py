"""Report fixtures: fabricated runs scored on disk (fast), and a small real demo run (both baselines,
both modes) built once per session on the shared synthetic store."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _report_helpers import write_fabricated
from PIL import Image

from clinseek.reporting import ReportStats, build_report, load_inputs
from clinseek.scoring import score_path, write_scores

DEMO_TASKS = ["ED_Hospitalization", "labevents", "cxr_finding_presence"]
"""One risk-prediction, one decision-making and one multimodal task: every task type of the demo."""


@pytest.fixture(scope="session")
def cxr_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1024 × 800 grey image standing in for a chest X-ray (written with Pillow)."""
    path = tmp_path_factory.mktemp("images") / "cxr.png"
    Image.linear_gradient("L").resize((1024, 800)).save(path)
    return path


@pytest.fixture(scope="session")
def fabricated(tmp_path_factory: pytest.TempPathFactory, cxr_png: Path) -> Path:
    """Four questions in agent and curated mode, scored with ``clinseek score`` into the results folder."""
    root = write_fabricated(tmp_path_factory.mktemp("fabricated") / "runs", image=cxr_png)
    write_scores(score_path(root, n_resamples=200), root)
    return root


@pytest.fixture(scope="session")
def fabricated_report(fabricated: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[ReportStats, str]:
    """The report of ``fabricated`` and its HTML text."""
    stats = build_report(load_inputs([fabricated]), tmp_path_factory.mktemp("fab_report") / "report.html")
    return stats, stats.path.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def demo_dir(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``clinseek demo`` at a small size: both baselines in both modes on three tasks, two questions each."""
    from clinseek.demo import DemoSettings, run_demo

    out = tmp_path_factory.mktemp("demo") / "demo"
    settings = DemoSettings(per_task=2, n_resamples=500, concurrency=4)
    anyio.run(lambda: run_demo(out, settings=settings, store=synthetic_store, tasks=DEMO_TASKS))
    return out


@pytest.fixture(scope="session")
def demo_report(demo_dir: Path) -> ReportStats:
    """The report of the small demo run, written into the demo folder."""
    return build_report(load_inputs([demo_dir]), demo_dir / "report.html")


CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
"""The flags this machine needs (docs/report.md); Playwright adds --headless and a fresh profile."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, one per test module: module scope, so the session fixtures a test also asks for
    (the demo run, which runs its own event loop) are built before Playwright's loop starts."""
    if not CHROMIUM.is_file() and shutil.which("chromium") is None:
        pytest.skip("Chromium not installed (apt-get install chromium; .ci/run does it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (the dev extra has it)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM if CHROMIUM.is_file() else shutil.which("chromium")),
                                    args=LAUNCH_ARGS)
        yield browser
        browser.close()
