"""``clinseek data ingest`` / ``data info`` through typer's CliRunner and the console entry point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.cli import app, main
from clinseek.store import StoreLimits

runner = CliRunner()


def test_info_prints_tables_patients_and_provenance(demo_store: Path) -> None:
    result = runner.invoke(app, ["data", "info", str(demo_store)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "patients: 100" in result.output
    assert "hosp.labevents" in result.output and "107,727" in result.output
    assert "source.mimic_iv" in result.output


def test_info_json(demo_store: Path, demo_counts: dict[str, int]) -> None:
    result = runner.invoke(app, ["data", "info", str(demo_store), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["kind"] == "ingest"
    assert info["patients"] == 100
    assert info["modules"] == ["hosp", "icu", "ed"]
    assert {t["table"]: t["rows"] for t in info["tables"]} == demo_counts
    assert info["time_min"] < info["time_max"]
    labs = next(t for t in info["tables"] if t["table"] == "hosp.labevents")
    assert labs["time_min"] is not None and len(labs["source_sha256"]) == 64
    assert labs["registry_release"] == "MIMIC-IV 3.1"  # the registry's schema release, not the files' (a 2.2 demo)
    diagnoses = next(t for t in info["tables"] if t["table"] == "hosp.diagnoses_icd")
    # fixnc21: a table inheriting its parent's time showed no range; the event index holds its rows' times
    assert (diagnoses["time_min"], diagnoses["time_max"], diagnoses["time_from"]) == (
        "2110-04-14T15:00:00", "2201-12-17T13:45:00", "hosp.admissions")
    assert all(t["time_min"] for t in info["tables"] if t["time_from"])


def test_info_without_an_event_index_says_where_inherited_times_come_from(demo_store: Path, tmp_path: Path) -> None:
    import shutil

    import duckdb

    copy = tmp_path / "old.duckdb"
    shutil.copyfile(demo_store, copy)
    con = duckdb.connect(str(copy))
    con.execute("DROP TABLE clinseek_meta.event_index")
    con.close()
    result = runner.invoke(app, ["data", "info", str(copy)], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "hosp.diagnoses_icd" in line)
    assert " ".join(row.replace("│", " ").split()) == (
        "hosp.diagnoses_icd 4,506 time of hosp.admissions (no current event index) diagnoses_icd.csv.gz")


def test_ingest_command_builds_and_resumes(mimic_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.duckdb"
    args = ["data", "ingest", "--mimic-iv", str(mimic_dir), "--out", str(out), "--no-progress"]
    first = runner.invoke(app, args, terminal_width=200)
    assert first.exit_code == 0, first.output
    assert "11 ingested, 0 already done" in first.output  # the required hosp/icu tables (pharmacy since leak14b)
    assert "absent optional tables:" in first.output and "icu.chartevents" in first.output
    second = runner.invoke(app, [*args, "--memory-limit", "256MB", "--threads", "1"], terminal_width=200)
    assert second.exit_code == 0, second.output
    assert "0 ingested, 11 already done" in second.output


def test_ingest_help_names_the_default_memory_limit() -> None:
    result = runner.invoke(app, ["data", "ingest", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"(default {StoreLimits().memory_limit})" in result.output


def test_bad_directory_is_one_error_line_and_exit_code_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = ["clinseek", "data", "ingest", "--mimic-iv", str(empty), "--out", str(tmp_path / "s.duckdb")]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exit_info:
        main()  # the console entry point: a ClinseekError becomes one line on stderr, exit code 2
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {empty}: no hosp/icu files found")
    assert "Traceback" not in err
