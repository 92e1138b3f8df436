"""``clinseek tools`` / ``clinseek tasks`` list every name with one line; unknown names get the closest
ones; ``clinseek tool`` can enable the browser and image tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tool_cases import pick_case
from typer.testing import CliRunner

from clinseek.bench import AGENTEHR_TASKS, MM_TASKS, TEXT_TASKS
from clinseek.cli import app
from clinseek.tools import tool_names


def _invoke(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


def test_tools_lists_every_registered_tool_with_one_line() -> None:
    result = _invoke(["tools", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert sorted(r["name"] for r in rows) == sorted(tool_names())
    assert all(r["description"] and "\n" not in r["description"] for r in rows)
    needs = {r["name"]: r["needs"] for r in rows}
    assert "--knowledge" in needs["browser.search"] and "[imaging]" in needs["image.chest_xray_classifier"]
    assert needs["ehr.run_sql_query"] == "" and "[imaging]" not in needs["image.dicom_processor"]
    table = _invoke(["tools"]).output
    assert "ehr.run_sql_query" in table and "Run one read-only SQL query" in table


def test_tasks_lists_every_task_of_the_registry() -> None:
    rows = json.loads(_invoke(["tasks", "--json"]).output)
    assert [r["name"] for r in rows] == [t.name for t in (*TEXT_TASKS, *MM_TASKS, *AGENTEHR_TASKS)]
    assert [r["benchmark"] for r in rows] == ["clinseek"] * 51 + ["agentehr"] * 6
    assert rows[-1]["description"] == "The medications that will be prescribed next"
    by_name = {r["name"]: r for r in rows if r["benchmark"] == "clinseek"}
    assert by_name["ICU_Mortality_1day"]["description"] == "Whether the patient will die within 1 day of ICU admission"
    assert by_name["phenotype"]["kind"] == "multimodal"


@pytest.mark.parametrize(("given", "needle"), [
    ("2150-01-01", "'2150-01-01' is a date without a time: give the cutoff's time too ('2150-01-01 00:00:00' is the "
                   "day's start, '2150-01-01 23:59:59' its end)"),
    ("2150-01-01T12:00:00+02:00", "has a time zone"),
    ("yesterday", "expected 'YYYY-MM-DD HH:MM:SS'"),
])
@pytest.mark.parametrize("command", [["tool", "ehr.get_table_names"], ["mcp", "serve"]])
def test_a_prediction_time_without_a_time_or_with_a_zone_is_refused(command: list[str], given: str, needle: str,
                                                                   tmp_path: Path) -> None:
    """newcomer20: ``--prediction-time 2150-01-01`` was read silently as the day's start."""
    (tmp_path / "x").write_text("")
    result = _invoke([*command, "--store", str(tmp_path / "x"), "--subject-id", "1", "--prediction-time", given])
    assert result.exit_code == 2
    assert needle in result.output, result.output


@pytest.mark.parametrize(("args", "needle"), [
    (["tol"], "Did you mean 'tool'"),
    (["run", "--limt", "3"], "--limit"),
    (["tool", "ehr.run_sql", "--store", "x", "--subject-id", "1", "--prediction-time", "2150-01-01"],
     "did you mean 'ehr.run_sql_query'?"),
    (["demo", "--tasks", "ICU_Mortality_1", "--no-progress"], "did you mean 'ICU_Mortality_1day'"),
])
def test_unknown_names_get_the_closest_known_ones(args: list[str], needle: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").write_text("")  # an existing --store file: the name is checked before the store is read
    result = _invoke(args)
    assert result.exit_code != 0
    assert needle in result.output + str(result.exception)


def test_the_tool_command_without_a_knowledge_source_says_the_browser_is_off(synthetic_store: Path) -> None:
    case = pick_case(synthetic_store)
    off = _invoke(["tool", "browser.search", "--store", str(synthetic_store), "--subject-id", str(case.subject_id),
                   "--prediction-time", str(case.prediction_time), "--knowledge", "off", "--arg", "query=sodium"])
    assert off.exit_code == 1 and "the browser tools are not enabled" in off.output
