"""``clinseek report DIR... --out FILE`` on fabricated runs; errors become one message and exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from clinseek.cli import app


def test_report_writes_the_file_and_prints_its_path(fabricated: Path, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "r.html"
    result = CliRunner().invoke(app, ["report", str(fabricated), "--out", str(out), "--title", "Fabricated"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == str(out)
    # fixnc21: "2 runs, 4 question rows, 8 trajectories" named none of what it counted
    assert result.output.startswith("2 runs (benchmark x mode x model), 4 rows (question x model), "
                                    "8 trajectories (row x mode x repeat), ")
    assert "<title>Fabricated</title>" in out.read_text(encoding="utf-8")


def test_a_folder_without_runs_is_a_clear_error(tmp_path: Path) -> None:
    code = "from clinseek.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code, "report", str(tmp_path), "--out", str(tmp_path / "r.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "error:" in done.stderr and "neither summary.json" in done.stderr
    assert not (tmp_path / "r.html").exists()


def test_every_option_of_the_command_is_documented() -> None:
    import re

    result = CliRunner().invoke(app, ["report", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    options = set(re.findall(r"--[a-z][a-z-]+", result.output)) - {"--help"}
    text = (Path(__file__).resolve().parents[2] / "docs" / "report.md").read_text(encoding="utf-8")
    assert options >= {"--out", "--image-root", "--title"}
    assert sorted(o for o in options if o not in text) == []


def test_demo_ends_with_the_report_path(synthetic_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--store", str(synthetic_store), "--per-task", "1",
                                      "--tasks", "ED_Hospitalization", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].strip() == str(out / "report.html")
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!doctype html>")
