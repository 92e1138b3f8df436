"""``clinseek distill export|render|prompts`` and the trained-vs-served prompt check; tool-call parsers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.distill import check_serving, compare_calls, parse_tool_calls, read_card, serving_prompts


@pytest.fixture(scope="module")
def cli_dataset(distill_runs: Path, distill_bench, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "ds"
    result = CliRunner().invoke(app, ["distill", "export", str(distill_runs), "--out", str(out), "--min-f1", "0", "--include-baselines"])
    assert result.exit_code == 0, result.output
    assert "samples exported" in result.output
    return out


def test_cli_export_reports_every_leakage_refusal(distill_runs: Path, distill_bench, tmp_path: Path) -> None:
    bench, _ = distill_bench
    args = ["distill", "export", str(distill_runs), "--out", str(tmp_path / "ds"), "--min-f1", "0", "--include-baselines",
            "--exclude-bench", str(bench)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    card = read_card(tmp_path / "ds")
    assert card.samples == 0 and card.refused_by_reason["in_excluded_benchmark"] == len(card.leakage_refusals)
    lines = [line for line in result.output.splitlines() if line.startswith("refused (in an excluded benchmark)")]
    assert len(lines) == len(card.leakage_refusals) > 0


def test_cli_render_with_a_local_tokenizer(cli_dataset: Path, hermes_tokenizer: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["distill", "render", str(cli_dataset), "--tokenizer", str(hermes_tokenizer),
                                      "--out", str(tmp_path / "r"), "--tool-parser", "hermes"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "render_report.json").read_text())
    assert report["rendered"] == report["samples_in"] > 0 and report["round_trip_failures"] == []


def test_cli_prompts_writes_the_trained_prompts_and_checks_them(cli_dataset: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["distill", "prompts", str(cli_dataset), "--out", str(tmp_path), "--check"])
    assert result.exit_code == 0, result.output
    record = serving_prompts(cli_dataset)[0]
    assert (tmp_path / "system_1.txt").read_text() == record.system
    assert json.loads((tmp_path / "tools_1.json").read_text()) == record.tools
    assert "match the trained ones" in result.output


def test_the_served_prompts_are_the_trained_ones(cli_dataset: Path) -> None:
    from clinseek.agent import SYSTEM_AGENT

    records = serving_prompts(cli_dataset)
    assert [r.system for r in records] == [SYSTEM_AGENT]
    assert check_serving(cli_dataset) == []


def test_a_dataset_trained_on_other_prompts_fails_the_check(cli_dataset: Path, tmp_path: Path) -> None:
    card = json.loads((cli_dataset / "card.json").read_text())
    card["prompts"][0]["system_sha256"] = "0" * 64
    card["prompts"][0]["tools_sha256"] = "1" * 64
    card["prompts"][0]["tools"] = card["prompts"][0]["tools"][:-1]
    (tmp_path / "card.json").write_text(json.dumps(card))
    problems = check_serving(tmp_path)
    assert len(problems) == 2 and "only served" in problems[1]
    result = CliRunner().invoke(app, ["distill", "prompts", str(tmp_path), "--check"])
    assert result.exit_code == 1


def test_hermes_and_xml_calls_parse_back() -> None:
    hermes = '<tool_call>\n{"name": "ehr__finish", "arguments": {"response": ["yes"]}}\n</tool_call>'
    xml = ("<tool_call>\n<function=ehr__run_sql_query>\n<parameter=sql_query>\nSELECT 1\n</parameter>\n"
           "<parameter=limit>\n5\n</parameter>\n</function>\n</tool_call>")
    assert parse_tool_calls(hermes) == [("ehr__finish", {"response": ["yes"]})]
    assert parse_tool_calls(xml) == [("ehr__run_sql_query", {"sql_query": "SELECT 1", "limit": "5"})]
    call = {"function": {"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT 1", "limit": 5}}}
    assert compare_calls(parse_tool_calls(xml), [call]) == []
    other = {"function": {"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT 2", "limit": 5}}}
    assert compare_calls(parse_tool_calls(xml), [other]) != []
    assert compare_calls([], [call]) == ["0 calls parsed, 1 in the sample"]
