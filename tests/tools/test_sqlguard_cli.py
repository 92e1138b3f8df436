"""``clinseek tool ehr.run_sql_query`` with the adversarial tester's queries: short refusals, no tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest
from _tool_cases import pick_case
from typer.testing import CliRunner

from clinseek.cli import app


def _sql(store: Path, query: str) -> list[str]:
    case = pick_case(store)
    return [
        "tool", "--store", str(store), "--subject-id", str(case.subject_id),
        "--prediction-time", case.prediction_time.isoformat(sep=" "),
        "ehr.run_sql_query", "--arg", f"sql_query={query}",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("SELECT " + "(" * 400 + "1" + ")" * 400, "sql_syntax"),
        ("EXPLAIN SELECT 1", "read_only"),
        ("SELECT list(range(1000000000))", "too_large"),
        ("SELECT now()", "clock"),
    ],
)
def test_refusals_are_short_and_without_traceback(demo_store: Path, query: str, kind: str) -> None:
    out = CliRunner().invoke(app, _sql(demo_store, query))
    assert out.exit_code == 1, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert kind in out.output and "Traceback" not in out.output and "Falling back" not in out.output
    assert len(out.output) < 1_000
