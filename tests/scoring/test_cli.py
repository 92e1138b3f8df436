"""``clinseek score`` and ``clinseek compare`` on small handmade results directories, in both layouts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _scoring_helpers import row_dict, write_jsonl
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.scoring import ScoreReport, score_path

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """The golden run as ``agent`` plus a ``curated`` run that gets every risk question wrong."""
    root = tmp_path / "results"
    shutil.copytree(GOLDEN, root)
    rows = [
        json.loads(line) for line in (root / "synthetic/agent/model-a/results.jsonl").read_text().splitlines()
    ]
    for row in rows:
        if row["task_type"] == "risk_prediction":
            row["answer"] = ["no" if row["gold"] in ("yes", ["yes"]) else "yes"]
    write_jsonl(root / "synthetic/curated/model-a/results.jsonl", rows)
    return root


def test_score_writes_the_three_outputs(runs: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(runs), "--resamples", "500"])
    assert result.exit_code == 0, result.output
    report = ScoreReport.model_validate_json((runs / "summary.json").read_text())
    assert [(r.mode, r.model) for r in report.runs] == [("agent", "model-a"), ("curated", "model-a")]
    (paired,) = report.paired
    assert (paired.a, paired.b) == ("synthetic/agent/model-a", "synthetic/curated/model-a")
    risk = next(g for g in paired.groups if g.group == "task_type:risk_prediction")
    assert risk.mcnemar_b is not None and risk.mcnemar_c == 0 and risk.delta > 0
    lines = (runs / "per_question.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(rows_in(runs / "synthetic/agent/model-a/results.jsonl"))
    assert "Δ = A − B" in (runs / "summary.md").read_text()


def test_score_counts_manifest_questions_without_results(runs: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.jsonl"
    rows = [json.loads(x) for x in (runs / "synthetic/agent/model-a/results.jsonl").read_text().splitlines()]
    questions = [{k: r[k] for k in ("qid", "task", "task_type", "gold")} for r in rows]
    write_jsonl(manifest, [*questions, row_dict(qid="never-run", gold=["X"])])
    out = tmp_path / "scores"
    result = CliRunner().invoke(app, ["score", str(runs), "--manifest", str(manifest), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    assert all(run.overall.n_missing == 1 for run in report.runs)
    header = next(line for line in result.output.splitlines() if "no answer" in line)
    assert "missing" in header  # the console separates never-run questions from unanswered ones


def test_compare_prints_the_paired_table(runs: Path) -> None:
    a, b = runs / "synthetic/agent/model-a", runs / "synthetic/curated/model-a"
    result = CliRunner().invoke(
        app, ["compare", str(a), str(b), "--resamples", "300"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    for group in ("overall", "task_type:risk_prediction", "category:escalation_of_care"):
        assert group in result.output


def test_compare_says_how_many_questions_had_no_partner(runs: Path, tmp_path: Path) -> None:
    """newcomer21: comparing a 10-question run with an 82-question one printed n = 10 and nothing about the 72
    questions of B without a partner; now the table says so (and the summary's comparisons count them)."""
    a, b = runs / "synthetic/agent/model-a", runs / "synthetic/curated/model-a"
    rows = (a / "results.jsonl").read_text().splitlines()
    short = tmp_path / "short" / "synthetic" / "agent" / "model-a" / "results.jsonl"
    short.parent.mkdir(parents=True)
    short.write_text("\n".join(rows[:3]) + "\n")
    result = CliRunner().invoke(app, ["compare", str(short.parent), str(b), "--resamples", "300"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    qids_b = {row["qid"] for row in map(json.loads, (b / "results.jsonl").read_text().splitlines())
              if row["status"] != "infra_error"}  # an infrastructure error is not scored
    only_b = len(qids_b - {json.loads(line)["qid"] for line in rows[:3]})
    assert f"Not paired (the other side did not score them): {only_b} of B's questions." in result.output
    full = CliRunner().invoke(app, ["compare", str(a), str(b), "--resamples", "300"], env={"COLUMNS": "200"})
    assert "Not paired" not in full.output


def _finish(response: object) -> dict[str, object]:
    call = {"function": {"name": "ehr.finish", "arguments": json.dumps({"response": response})}}
    return {"role": "assistant", "tool_calls": [call]}


def _reference_tree(root: Path) -> Path:
    for mode, answers in (("agentic", ["yes", ["Glucose", "Sodium"]]), ("oneshot", ["no", ["Glucose"]])):
        write_jsonl(
            root / f"ehr_bench/{mode}/full1800/model_x/results.jsonl",
            [
                {
                    "qid": "ehr_bench_risk_prediction_1",
                    "task": "ICU_Mortality_1day",
                    "task_type": "risk_prediction",
                    "label": "yes",
                    "candidates": ["yes", "no"],
                    "status": "success",
                    "messages": [_finish(answers[0])],
                },
                {
                    "qid": "ehr_bench_decision_making_2",
                    "task": "labevents",
                    "task_type": "decision_making",
                    "label": ["Glucose", "Sodium"],
                    "status": "success",
                    "messages": [_finish(answers[1])],
                },
            ],
        )
    write_jsonl(
        root / "mm_bench/agentic/scored/model_x/scored.jsonl",
        [
            {
                "qid": "medmod_radiology_test_1",
                "task": "medmod_radiology",
                "gold_names": ["Edema", "Pleural Effusion"],
                "prediction_strs": ["pulmonary edema"],
                "note": "ok",
            },
        ],
    )
    return root


def test_score_reads_the_reference_layout(tmp_path: Path) -> None:
    root = _reference_tree(tmp_path / "ClinSeek-Evaluation-Results")
    out = tmp_path / "scores"
    result = CliRunner().invoke(app, ["score", str(root), "--layout", "reference", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    runs = {(r.benchmark, r.mode): r for r in report.runs}
    assert runs[("ehr_bench", "agent")].overall.f1 == pytest.approx(1.0)
    assert runs[("ehr_bench", "curated")].overall.f1 == pytest.approx((0 + 2 / 3) / 2)
    assert runs[("mm_bench", "agent")].overall.f1 == pytest.approx(2 / 3)
    assert [p.a for p in report.paired] == ["ehr_bench/agent/model_x"]


def test_compare_across_layouts(tmp_path: Path, runs: Path) -> None:
    root = _reference_tree(tmp_path / "ref")
    result = CliRunner().invoke(
        app,
        [
            "compare",
            str(root / "ehr_bench/agentic"),
            str(root / "ehr_bench/oneshot"),
            "--layout",
            "reference",
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "ehr_bench/agent/model_x" in result.output


def test_score_of_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "no such file or directory" in str(result.exception)


def test_unknown_layout_is_refused(runs: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(runs), "--layout", "odd"])
    assert result.exit_code != 0


def test_score_with_an_llm_judge_over_loopback(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.llm_servers import OpenAIFake

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    server = OpenAIFake()
    server.responder = lambda request: server.text('{"match": true}')
    out = tmp_path / "judged"
    with server:
        result = CliRunner().invoke(
            app,
            [
                "score",
                str(runs / "synthetic/agent"),
                "--out",
                str(out),
                "--resamples",
                "200",
                "--judge",
                "openai:judge-test",
                "--judge-base-url",
                server.url,
            ],
        )
    assert result.exit_code == 0, result.output
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    (run,) = report.runs
    assert report.judge_model == "openai:judge-test"
    assert run.overall.n_judged == len(server.requests) > 0
    assert run.overall.judge_accuracy == 1.0
    (plain,) = score_path(runs / "synthetic/agent", n_resamples=200).report.runs
    assert plain.overall == run.overall.model_copy(update={"judge_accuracy": None, "n_judged": 0})


def rows_in(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_score_with_a_manifest_scores_its_questions_only(runs: Path, tmp_path: Path) -> None:
    rows = [json.loads(x) for x in (runs / "synthetic/agent/model-a/results.jsonl").read_text().splitlines()]
    keep = rows[0]
    manifest = tmp_path / "manifest.jsonl"
    write_jsonl(manifest, [{k: keep[k] for k in ("qid", "task", "task_type", "gold")}])
    out = tmp_path / "scores"
    result = CliRunner().invoke(app, ["score", str(runs), "--manifest", str(manifest), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    assert all(run.overall.n_questions == 1 for run in report.runs)
    assert report.outside_manifest["synthetic/agent/model-a"] == len(rows) - 1
    assert "left out (their question is not in the manifest)" in (out / "summary.md").read_text()
    assert "result rows left out" in result.output


@pytest.mark.parametrize("kind", ["missing", "empty", "folder"])
def test_a_bad_manifest_path_is_one_clear_error(runs: Path, tmp_path: Path, kind: str) -> None:
    from clinseek.errors import ScoringError
    from clinseek.scoring import read_expected

    path = tmp_path / kind
    if kind == "empty":
        path.write_text("")
    elif kind == "folder":
        path.mkdir()
    expected = {"missing": "no such manifest", "empty": "holds no questions", "folder": "without ClinSeek-Bench"}
    with pytest.raises(ScoringError, match=expected[kind]):
        read_expected(path)
