"""``clinseek score`` and ``clinseek compare`` list each unreadable row (file:line: problem)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.cli import app

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """The golden agent run, a curated copy, and two broken lines in the agent file."""
    root = tmp_path / "results"
    shutil.copytree(GOLDEN, root)
    agent = root / "synthetic/agent/model-a/results.jsonl"
    text = agent.read_text()
    (root / "synthetic/curated/model-a").mkdir(parents=True)
    (root / "synthetic/curated/model-a/results.jsonl").write_text(text)
    agent.write_text(text + "{not json\n" + json.dumps({"qid": "x"}) + "\n")
    return root


def test_score_prints_each_unreadable_row(runs: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(runs), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "2 unreadable rows skipped:" in result.output
    n = len((runs / "synthetic/agent/model-a/results.jsonl").read_text().splitlines())
    assert f"results.jsonl:{n - 1}" in result.output and f"results.jsonl:{n}" in result.output


def test_compare_reports_unreadable_rows(runs: Path) -> None:
    a, b = runs / "synthetic/agent/model-a", runs / "synthetic/curated/model-a"
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "2 unreadable rows skipped:" in result.output
