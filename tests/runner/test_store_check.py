"""The runner checks up front that the store holds the questions' patients."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ClinseekError
from clinseek.runner import RunSettings, run_benchmark


def test_a_store_without_the_patients_fails_fast(synthetic_bench, demo_store: Path, tmp_path: Path) -> None:
    _, questions = synthetic_bench
    with pytest.raises(ClinseekError) as info:
        anyio.run(lambda: run_benchmark(questions, demo_store, "agent", "baseline:null", tmp_path))
    message = str(info.value)
    assert str(demo_store) in message and "none of the" in message
    assert str(questions[0].subject_id) in message or "..." in message
    assert not any(tmp_path.iterdir())


def test_a_store_lacking_some_patients_warns_and_runs(synthetic_bench, synthetic_store: Path, tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    _, questions = synthetic_bench
    ghost = questions[0].model_copy(update={"qid": "ghost", "subject_id": 1})
    with caplog.at_level(logging.WARNING, logger="clinseek.runner"):
        summary = anyio.run(lambda: run_benchmark([ghost, questions[0]], synthetic_store, "agent", "baseline:null",
                                                  tmp_path, settings=RunSettings()))
    assert summary.infra_errors == 1
    assert any("1 of 2 patients" in r.getMessage() and "subject_id 1" in r.getMessage() for r in caplog.records)


def test_clinseek_run_reports_the_wrong_store_without_a_traceback(synthetic_bench, demo_store: Path,
                                                                  tmp_path: Path) -> None:
    bench, _ = synthetic_bench
    result = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null",
        "--mode", "agent", "--out", str(tmp_path), "--no-progress", "--knowledge", "off",
    ])
    assert result.exit_code != 0 and isinstance(result.exception, ClinseekError)
    assert "none of the" in str(result.exception)  # main() prints it on stderr, exit code 2
