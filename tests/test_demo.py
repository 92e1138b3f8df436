"""``clinseek demo`` end to end on a small synthetic store: rows, scores, paired tables, resume, next steps.

The demo runs once per module (40 patients, 1 question per task: every text subtask the builder
supports and every multimodal category); the other tests read what it wrote or rerun it (which
reuses everything).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.bench import MM_TASKS, TEXT_TASKS, load_questions
from clinseek.cli import app
from clinseek.demo import (
    CONFIG_FILE,
    DEMO_DOC,
    DEMO_MODELS,
    DemoResult,
    DemoSettings,
    find_delta,
    next_steps,
    numbers_note,
    replay_command,
    run_demo,
)
from clinseek.errors import ClinseekError
from clinseek.runner import read_results
from clinseek.scoring import QuestionScore, RunScores, ScoreReport

SETTINGS = DemoSettings(patients=40, per_task=1, seed=7, concurrency=4, n_resamples=1000)
EVIDENCE, NULL = DEMO_MODELS
BUILDER_SKIPS = {"prescriptions_atc", "medrecon_atc"}
"""Text subtasks the builder cannot label offline (no ATC mapping; docs/benchmarks.md)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    out = tmp_path_factory.mktemp("demo") / "out"
    return anyio.run(lambda: run_demo(out, settings=SETTINGS))


def _rows(result: DemoResult):
    return [row for path in sorted(result.runs.rglob("results.jsonl")) for row in read_results(path).rows]


def test_every_question_runs_once_per_model_and_mode_without_infra_errors(demo: DemoResult) -> None:
    rows = _rows(demo)
    assert demo.questions > 0 and len(rows) == 4 * demo.questions
    keys = {(r.model, r.mode, r.qid) for r in rows}
    assert len(keys) == len(rows)
    assert {(r.model, r.mode) for r in rows} == {(m, mode) for m in DEMO_MODELS for mode in ("agent", "curated")}
    assert demo.infra_errors == 0 and [r for r in rows if r.status == "infra_error"] == []


def test_the_benchmark_has_every_buildable_text_subtask_and_every_multimodal_category(demo: DemoResult) -> None:
    counts = demo.build.counts
    text = {t.name for t in TEXT_TASKS}
    assert {t for t in text if counts.get(t, 0) > 0} == text - BUILDER_SKIPS
    assert {c.category for c in MM_TASKS} <= {name for name, n in counts.items() if n > 0}
    assert set(demo.build.skipped) >= BUILDER_SKIPS


def test_evidence_beats_null_on_decision_making_by_a_clear_margin(demo: DemoResult) -> None:
    for mode in ("agent", "curated"):
        a, b = (f"clinseek-bench-text/{mode}/{m}" for m in DEMO_MODELS)
        delta = find_delta(demo.report, a, b, "task_type:decision_making")
        assert delta is not None and delta.n >= 20
        assert delta.mean_b == 0.0  # the null baseline names no item
        assert delta.delta >= 0.10 and delta.ci_low > 0.0, (mode, delta)


def test_answered_rows_have_items_and_carry_the_gold_aliases_field(demo: DemoResult) -> None:
    rows = _rows(demo)
    assert all(r.answer for r in rows if r.status == "answered")
    null_decision = [r for r in rows if r.model == NULL and r.task_type == "decision_making"]
    assert null_decision and all(r.status == "no_answer" for r in null_decision)
    raw = json.loads((demo.runs / "clinseek-bench-text" / "agent" / "baseline_null" / "results.jsonl")
                     .read_text().splitlines()[0])
    assert "gold_aliases" in raw


def test_scores_are_written_for_every_run_and_question(demo: DemoResult) -> None:
    report = ScoreReport.model_validate_json((demo.scores / "summary.json").read_text())
    assert report == demo.report
    assert {(r.benchmark, r.mode, r.model) for r in report.runs} == {
        (b, mode, m) for b in ("clinseek-bench-text", "clinseek-bench-mm") for mode in ("agent", "curated")
        for m in DEMO_MODELS
    }
    lines = (demo.scores / "per_question.jsonl").read_text().splitlines()
    scored = [QuestionScore.model_validate_json(line) for line in lines]
    assert len(scored) == 4 * demo.questions and all(q.scored for q in scored)
    assert sum(r.overall.n_questions for r in report.runs) == 4 * demo.questions
    assert f"A = clinseek-bench-text/agent/{EVIDENCE}, B = clinseek-bench-text/agent/{NULL}" in (
        demo.scores / "summary.md").read_text()


def test_paired_comparisons_are_evidence_minus_null_then_agent_minus_curated(demo: DemoResult) -> None:
    pairs = [(c.a, c.b) for c in demo.report.paired]
    benches = ("clinseek-bench-mm", "clinseek-bench-text")
    by_model = [(f"{b}/{mode}/{EVIDENCE}", f"{b}/{mode}/{NULL}") for b in benches for mode in ("agent", "curated")]
    by_mode = [(f"{b}/agent/{m}", f"{b}/curated/{m}") for b in benches for m in DEMO_MODELS]
    assert pairs[:4] == by_model and sorted(pairs[4:]) == sorted(by_mode)
    assert all(c.n_resamples == SETTINGS.n_resamples and c.seed == SETTINGS.seed for c in demo.report.paired)


def _invoke(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "160"})


def test_the_cli_rerun_resumes_and_prints_tables_and_next_steps(demo: DemoResult) -> None:
    before = {p: p.read_bytes() for p in demo.runs.rglob("results.jsonl")}
    result = _invoke(["demo", "--out", str(demo.out), "--patients", "40", "--per-task", "1", "--seed", "7",
                      "--no-progress"])
    assert result.exit_code == 0, result.output
    assert {p: p.read_bytes() for p in demo.runs.rglob("results.jsonl")} == before  # nothing redone
    out = result.output
    assert "store: reusing" in out and "benchmark: reusing" in out
    assert re.search(r"\brun \d+ s \(reused\)", out), out  # seconds vary with the machine's load
    assert f"{EVIDENCE} − {NULL} (Δ F1, percentage points)" in out and "agent − curated" in out
    assert f"Decision-making, text, agent mode: {EVIDENCE} − {NULL} = +" in out
    assert "Where to look next" in out and str(demo.scores / "summary.md") in out
    note = numbers_note(demo.report)
    assert note is not None and out.index("F1 (%) per run") < out.index(note) < out.index("(Δ F1")  # under the table


def test_another_configuration_in_the_same_out_is_refused(demo: DemoResult) -> None:
    config = (demo.out / CONFIG_FILE).read_text()
    other = DemoSettings(patients=40, per_task=2, seed=7)
    with pytest.raises(ClinseekError, match=r"per_task=1.*asks for 2"):
        anyio.run(lambda: run_demo(demo.out, settings=other))
    assert (demo.out / CONFIG_FILE).read_text() == config


def test_a_directory_that_is_not_a_demo_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = _invoke(["demo", "--out", str(tmp_path), "--no-progress"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ClinseekError) and "not a demo directory" in str(result.exception)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_the_replay_command_opens_the_questions_episode(demo: DemoResult) -> None:
    question = next(q for q in load_questions(demo.bench) if q.task_type == "decision_making")
    args = shlex.split(replay_command(demo.store, question))
    assert args[:2] == ["clinseek", "tool"]
    result = _invoke(args[1:])
    assert result.exit_code == 0, result.output
    assert f"subject_id {question.subject_id}" in result.output


def test_the_replay_command_of_a_multimodal_question_offers_its_linked_images(demo: DemoResult) -> None:
    question = next(q for q in load_questions(demo.bench) if q.task_type == "multimodal" and q.dicom_ids)
    args = shlex.split(replay_command(demo.store, question, "image.dicom_processor"))
    assert f"--dicom-id {question.dicom_ids[0]}" in " ".join(args)
    result = _invoke([*args[1:], "--arg", f"dicom_path={question.dicom_ids[0]}"])  # images: the store's own folder
    assert result.exit_code == 0, result.output
    assert f"dicom_id: {question.dicom_ids[0]}" in result.output


def test_the_printed_score_and_compare_commands_run(demo: DemoResult, tmp_path: Path) -> None:
    steps = dict(next_steps(demo.out, demo.store))
    score = shlex.split(steps["rescore"])[1:]
    score[score.index("--out") + 1] = str(tmp_path)  # leave the demo's own scores as they are
    assert _invoke([*score, "--resamples", "200"]).exit_code == 0
    assert (tmp_path / "summary.json").is_file()
    compare = _invoke([*shlex.split(steps["one paired table"])[1:], "--resamples", "200"])
    assert compare.exit_code == 0, compare.output
    assert "task_type:decision_making" in compare.output


def test_every_demo_option_and_setting_is_documented() -> None:
    import dataclasses
    import inspect

    from clinseek.cli._demo import demo_cmd

    text = (Path(__file__).resolve().parents[1] / "docs" / "demo.md").read_text()
    options = [f"--{name.replace('_', '-')}" for name in inspect.signature(demo_cmd).parameters]
    assert [o for o in options if o not in text] == []
    assert [f.name for f in dataclasses.fields(DemoSettings) if f"`{f.name}`" not in text] == []


def test_a_missing_store_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(ClinseekError, match="no such store file"):
        anyio.run(lambda: run_demo(out, store=tmp_path / "absent.duckdb"))
    assert not out.exists()


def test_failed_options_do_not_lock_the_folder(demo: DemoResult, tmp_path: Path) -> None:
    out = tmp_path / "d"
    with pytest.raises(ClinseekError, match=r"unknown task.*NoSuchTask"):
        anyio.run(lambda: run_demo(out, settings=SETTINGS, store=demo.store, tasks=["NoSuchTask"]))
    assert not out.exists()
    out.mkdir()  # a folder an older version left with only the demo.json of a failed run is re-used
    (out / CONFIG_FILE).write_text(json.dumps({"store": "x", "synthesized": False, "patients": None, "per_task": 1,
                                               "seed": 7, "tasks": ["NoSuchTask"], "models": list(DEMO_MODELS)}))
    result = anyio.run(lambda: run_demo(out, settings=SETTINGS, store=demo.store, tasks=["labevents"]))
    assert result.questions > 0
    assert json.loads((out / CONFIG_FILE).read_text())["tasks"] == ["labevents"]


def test_a_store_that_is_not_a_clinseek_store_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    import duckdb

    mine = tmp_path / "mine.duckdb"
    con = duckdb.connect(str(mine))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    with pytest.raises(ClinseekError, match="not a clinseek store"):
        anyio.run(lambda: run_demo(tmp_path / "out", store=mine))
    assert not (tmp_path / "out").exists()


def test_a_crash_of_the_store_stage_does_not_lock_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import clinseek.demo._demo as demo_module

    def crash(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("synthesis crashed")

    monkeypatch.setattr(demo_module, "synthesize", crash)
    out = tmp_path / "d"
    for patients in (3, 5):  # the second run is not refused as "made with patients=3": it reaches the store stage
        with pytest.raises(RuntimeError, match="synthesis crashed"):
            anyio.run(lambda p=patients: run_demo(out, settings=DemoSettings(patients=p)))
        assert not (out / CONFIG_FILE).exists()


def test_a_demo_folder_resumes_from_another_directory_and_after_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clinseek.demo._config import CONFIG_FILE, DemoConfig, check_config
    from clinseek.demo._demo import _config

    out = tmp_path / "d"
    settings = DemoSettings(patients=2, per_task=1, seed=7)
    config = _config(out / "store.duckdb", True, settings, None)
    assert config.store == "store.duckdb"
    out.mkdir()
    (out / CONFIG_FILE).write_text(config.model_dump_json())
    (out / "store.duckdb").write_text("")  # a stage's output: the folder is no longer free
    monkeypatch.chdir(tmp_path.parent)
    check_config(out, _config(out / "store.duckdb", True, settings, None))  # another cwd: same
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    check_config(copy, _config(copy / "store.duckdb", True, settings, None))  # a copy resumes
    legacy = config.model_copy(update={"store": "d/store.duckdb"})  # written by an older version
    (out / CONFIG_FILE).write_text(legacy.model_dump_json())
    check_config(out, _config(out / "store.duckdb", True, settings, None))
    with pytest.raises(ClinseekError, match="tasks=every task"):
        check_config(out, _config(out / "store.duckdb", True, settings, ["labevents"]))
    assert DemoConfig.model_validate_json((out / CONFIG_FILE).read_text()).store == "d/store.duckdb"


def test_everything_the_demo_writes_has_the_modes_of_the_users_umask(demo: DemoResult, tmp_path: Path) -> None:
    """Colleagues on a shared server read what the user's umask lets them (no private 0600/0700 files)."""
    import os
    import stat

    from clinseek.reporting import write_report
    from clinseek.scoring import score_path, write_scores

    umask = os.umask(0o022)
    os.umask(umask)
    write_report([demo.out], tmp_path / "report.html")
    write_scores(score_path(demo.runs, n_resamples=100), tmp_path / "scores")
    paths = [*demo.out.rglob("*"), tmp_path / "report.html", *(tmp_path / "scores").iterdir()]
    wrong = [(str(p), oct(stat.S_IMODE(p.stat().st_mode))) for p in paths
             if stat.S_IMODE(p.stat().st_mode) != (0o777 if p.is_dir() else 0o666) & ~umask]
    assert wrong == []


def _with_mm_f1(report: ScoreReport, evidence: float, null: float) -> ScoreReport:
    def run(r: RunScores) -> RunScores:
        f1 = {EVIDENCE: evidence, NULL: null}[r.model]
        return r.model_copy(update={"overall": r.overall.model_copy(update={"f1": f1})})

    return report.model_copy(update={"runs": [run(r) if r.benchmark == "clinseek-bench-mm" else r for r in report.runs]})


def test_the_line_under_the_f1_table_points_to_the_doc_section_that_explains_its_numbers(demo: DemoResult) -> None:
    """newcomer21, small22: the count of text questions (129 with the defaults) and baseline:evidence below
    baseline:null on the multimodal questions surprise a newcomer; the line beside them names the doc section
    that explains both (the pointer used to sit at the end, under "Where to look next")."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "demo.md").read_text(encoding="utf-8")
    section = DEMO_DOC.split('"')[1]
    assert f"\n## {section}\n" in text
    subtasks = len({t.name for t in TEXT_TASKS} - BUILDER_SKIPS)
    assert f"each of the {subtasks} EHR-Bench subtasks" in text and f"{3 * subtasks} with the defaults" in text
    n_text = {r.overall.n_questions for r in demo.report.runs if r.benchmark == "clinseek-bench-text"}
    assert n_text == {subtasks}
    below, even = _with_mm_f1(demo.report, 0.1, 0.3), _with_mm_f1(demo.report, 0.3, 0.3)
    assert numbers_note(below) == f"Why {subtasks} text questions and why {EVIDENCE} scores below {NULL} on mm: {DEMO_DOC}"
    assert numbers_note(even) == f"Why {subtasks} text questions: {DEMO_DOC}"
    mm_only = even.model_copy(update={"runs": [r for r in even.runs if r.benchmark == "clinseek-bench-mm"]})
    assert numbers_note(mm_only) is None
    assert all("what these numbers mean" not in what for what, _ in next_steps(demo.out, demo.store))
