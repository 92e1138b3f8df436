"""``clinseek data synth`` through typer's CliRunner."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.store import open_store


def test_synth_command_builds_a_store(tmp_path: Path) -> None:
    out = tmp_path / "cli.duckdb"
    result = CliRunner().invoke(app, ["data", "synth", "--patients", "4", "--seed", "2", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    store = open_store(out)
    assert store.info["kind"] == "synthetic" and store.info["patients"] == "4"
    assert "4 patients" in result.output


def test_synth_command_refuses_zero_patients(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["data", "synth", "--patients", "0", "--out", str(tmp_path / "x.duckdb")])
    assert result.exit_code != 0
    assert not (tmp_path / "x.duckdb").exists()
