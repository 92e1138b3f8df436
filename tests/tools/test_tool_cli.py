"""``clinseek tool ...`` through typer's CliRunner on the ingested demo store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tool_cases import pick_case
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.cli._tool import parse_tool_args

runner = CliRunner()


def _base(store: Path) -> list[str]:
    case = pick_case(store)
    return [
        "tool",
        "--store",
        str(store),
        "--subject-id",
        str(case.subject_id),
        "--prediction-time",
        case.prediction_time.isoformat(sep=" "),
    ]


def test_cli_runs_one_tool_and_prints_its_output(demo_store: Path) -> None:
    out = runner.invoke(app, [*_base(demo_store), "ehr.get_latest_records", "--arg", "table_name=labevents"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("hosp.labevents latest:")


def test_cli_json_output_and_sql(demo_store: Path) -> None:
    args = [
        *_base(demo_store),
        "ehr.run_sql_query",
        "--arg",
        "sql_query=SELECT count(*) AS n FROM patients",
        "--json",
    ]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert payload["ok"] is True and payload["data"]["rows"] == [[1]]


def test_cli_refusal_exits_1(demo_store: Path) -> None:
    out = runner.invoke(
        app, [*_base(demo_store), "ehr.run_sql_query", "--arg", "sql_query=DROP TABLE hosp.patients"]
    )
    assert out.exit_code == 1
    assert "Error (read_only)" in out.output


def test_cli_candidates_file(demo_store: Path, tmp_path: Path) -> None:
    cands = tmp_path / "ccs.txt"
    cands.write_text("Acute renal failure\nEssential hypertension\n", encoding="utf-8")
    args = [
        *_base(demo_store),
        "ehr.get_candidates_by_fuzzy_matching",
        "--candidates",
        f"diagnoses_ccs={cands}",
        "--arg",
        "table_name=diagnoses_ccs_candidates",
        "--arg",
        'keywords=["renal failure"]',
    ]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "Acute renal failure|" in out.output


def test_arg_parsing() -> None:
    assert parse_tool_args(["a=1", 'b=["x", "y"]', "c=x=y"]) == {"a": "1", "b": ["x", "y"], "c": "x=y"}
    import typer

    with pytest.raises(typer.BadParameter):
        parse_tool_args(["novalue"])


def test_the_readme_sql_example_shows_values(demo_store: Path) -> None:
    """fixnc21: the README's example printed 5 rows of an itemid and a blank valuenum (NULLs, kept in the grid)."""
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("clinseek tool --store mimic.duckdb")
    command = readme[start:readme.index("\n\n", start)].replace("\\\n", " ")
    args = shlex.split(command)[1:]
    args[args.index("mimic.duckdb")] = str(demo_store)
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == [
        "charttime|itemid|valuenum|valueuom",
        "2180-07-23 06:50|51491|6|units",
        "06:50|51498|1.013|",
        "06:48|50813|1.6|mmol/L",
        "06:39|51200|2.5|%",
        "06:39|51221|41.1|%",
    ]
