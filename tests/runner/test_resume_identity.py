"""Resume never keeps an answer to a different question: qids are positions every build reuses.

Reproduces the bug where a rerun over another benchmark build (same qids, other questions) said
"resumed 82" and kept the old answers, and where the printed counts were about the rows in the
file rather than the questions of the run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.runner import (
    RunOptions,
    RunSettings,
    question_hash,
    read_results,
    run_benchmark,
    store_identity,
)

TASKS = ("Inpatient_Mortality", "ED_Hospitalization", "omr")  # as demo_bench (tests/runner/conftest.py)

SETTINGS = RunSettings(run=RunOptions(concurrency=4))


def _run(questions, store: Path, out: Path, mode: str = "agent", model: str = "baseline:null"):
    return anyio.run(lambda: run_benchmark(questions, store, mode, model, out, settings=SETTINGS)).runs[0]  # type: ignore[arg-type]


def _rows(out: Path, mode: str = "agent", model: str = "baseline_null") -> list:
    return read_results(out / "clinseek-bench-text" / mode / model / "results.jsonl").rows


@pytest.fixture(scope="module")
def bench43(demo_store: Path, tmp_path_factory: pytest.TempPathFactory):
    """The same tasks and size as ``demo_bench`` (seed 42) drawn with seed 43: same qids, other questions."""
    from clinseek.bench import build_benchmark, load_questions

    out = tmp_path_factory.mktemp("bench43") / "bench"
    build_benchmark(demo_store, tasks=list(TASKS), per_task=2, seed=43, out=out)
    return out, load_questions(out)


@pytest.fixture(scope="module")
def runs42(demo_bench, demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs42")
    _run(demo_bench[1], demo_store, out)
    return out


def test_the_two_builds_reuse_qids_for_other_questions(demo_bench, bench43) -> None:
    q42 = {q.qid: q for q in demo_bench[1]}
    q43 = {q.qid: q for q in bench43[1]}
    assert set(q42) == set(q43)  # the precondition of the bug: positions as ids
    changed = [k for k in q42 if question_hash(q42[k]) != question_hash(q43[k])]
    assert changed, "seed 43 should draw at least one other question"


def test_a_rerun_over_another_build_reruns_the_changed_questions(runs42: Path, demo_bench, bench43,
                                                                  demo_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs43"
    shutil.copytree(runs42, out)
    questions = bench43[1]
    hashes = {q.qid: question_hash(q) for q in questions}
    same = sum(question_hash(q) == hashes[q.qid] for q in demo_bench[1])
    summary = _run(questions, demo_store, out)
    assert summary.resumed == same and summary.ran == len(questions) - same
    assert summary.superseded == len(questions) - same
    rows = _rows(out)
    assert sorted(r.qid for r in rows) == sorted(hashes)  # one row per question, no duplicate
    assert all(r.question_hash == hashes[r.qid] for r in rows)  # every kept row answers THIS build
    gold = {q.qid: list(q.label) for q in questions}
    assert all(r.gold == gold[r.qid] for r in rows)
    moved = (out / "clinseek-bench-text" / "agent" / "baseline_null" / "superseded.jsonl").read_text().splitlines()
    assert len(moved) == summary.superseded  # the old answers are kept aside, not lost


def test_a_plain_rerun_still_resumes_everything(runs42: Path, demo_bench, demo_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    shutil.copytree(runs42, out)
    summary = _run(demo_bench[1], demo_store, out)
    assert (summary.resumed, summary.ran, summary.superseded) == (len(demo_bench[1]), 0, 0)


def test_counts_are_about_the_questions_of_this_run(runs42: Path, demo_bench, demo_store: Path,
                                                    tmp_path: Path) -> None:
    out = tmp_path / "subset"
    shutil.copytree(runs42, out)
    two = demo_bench[1][:2]
    summary = _run(two, demo_store, out)
    assert summary.total == 2 and summary.resumed == 2 and summary.ran == 0
    assert summary.answered + summary.no_answer + summary.infra_errors == 2
    assert len(_rows(out)) == len(demo_bench[1])  # rows of the other questions stay in the file


def test_rows_without_a_question_hash_are_rerun(runs42: Path, demo_bench, demo_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "legacy"
    shutil.copytree(runs42, out)
    path = out / "clinseek-bench-text" / "agent" / "baseline_null" / "results.jsonl"
    lines = []
    for line in path.read_text().splitlines():  # a results file written before the fields existed
        row = json.loads(line)
        row.pop("question_hash"), row.pop("store_id")
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    assert all(r.question_hash is None for r in read_results(path).rows)  # old files still read
    summary = _run(demo_bench[1], demo_store, out)
    assert summary.resumed == 0 and summary.ran == summary.superseded == len(demo_bench[1])


def test_a_run_on_another_store_is_rerun(synthetic_bench, synthetic_store: Path, tmp_path: Path) -> None:
    questions = [q for q in synthetic_bench[1] if q.benchmark == "clinseek-bench-text"][:2]
    out = tmp_path / "runs"
    _run(questions, synthetic_store, out)
    copy = tmp_path / "copy.duckdb"
    shutil.copy(synthetic_store, copy)
    assert store_identity(copy) == store_identity(synthetic_store)  # content, not path
    assert _run(questions, copy, out).resumed == 2
    from clinseek.store import connect_store

    con = connect_store(copy, read_only=False)
    con.execute("UPDATE clinseek_meta.table_info SET row_count = row_count + 1 WHERE table_name = 'hosp.labevents'")
    con.close()
    assert store_identity(copy) != store_identity(synthetic_store)
    again = _run(questions, copy, out)
    assert again.resumed == 0 and again.superseded == 2 and again.ran == 2
    assert {r.store_id for r in _rows(out)} == {store_identity(copy)}


def test_the_cli_repro(demo_bench, bench43, demo_store: Path, tmp_path: Path) -> None:
    def run(bench: Path, out: Path) -> str:
        result = CliRunner().invoke(app, [
            "run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null", "--mode", "agent",
            "--out", str(out), "--no-progress", "--knowledge", "off",
        ])
        assert result.exit_code == 0, result.output
        return result.output

    run(demo_bench[0], tmp_path / "runs")
    shutil.copytree(tmp_path / "runs", tmp_path / "runs43")
    n = len(bench43[1])
    output = run(bench43[0], tmp_path / "runs43")
    assert f"of {n} (resumed {n})" not in output and f"of {n} (resumed " in output
    assert "superseded: rows of another build or store, kept in superseded.jsonl" in output
    rows = sorted(_rows(tmp_path / "runs43"), key=lambda r: r.qid)
    assert [r.question_hash for r in rows] == [question_hash(q) for q in sorted(bench43[1], key=lambda q: q.qid)]


def test_scoring_against_a_manifest_catches_results_of_another_build(runs42: Path, demo_bench, bench43,
                                                                      demo_store: Path, tmp_path: Path) -> None:
    from clinseek.bench import TEXT_FILE
    from clinseek.errors import ScoringError
    from clinseek.scoring import read_expected, score_path

    own = score_path(runs42, expected=read_expected(demo_bench[0] / TEXT_FILE), n_resamples=50)
    assert {q.question_hash for q in own.questions} == {question_hash(q) for q in demo_bench[1]}
    with pytest.raises(ScoringError, match="answer other questions than the manifest"):
        score_path(runs42, expected=read_expected(bench43[0] / TEXT_FILE), n_resamples=50)
    out = tmp_path / "runs43"
    shutil.copytree(runs42, out)
    _run(bench43[1], demo_store, out)  # resume reruns the changed questions; then the scores are about bench43
    scored = score_path(out, expected=read_expected(bench43[0] / TEXT_FILE), n_resamples=50)
    assert {q.question_hash for q in scored.questions} == {question_hash(q) for q in bench43[1]}


def test_a_smaller_build_run_into_the_same_out_leaves_no_row_of_the_first(demo_bench, demo_store: Path,
                                                                          tmp_path_factory: pytest.TempPathFactory,
                                                                          runs42: Path) -> None:
    """newcomer21: a second build with fewer questions (other seed, ``--per-task 1``) run into the first build's
    out kept the first build's rows of the qids the second lacks: one run's results held both builds (100 rows
    for a 41-question benchmark, scored as one run). Now those rows are superseded too (kept in
    superseded.jsonl), and the results hold exactly the answers to the current benchmark. Rows of qids the
    current manifest holds but ``--limit`` did not select stay (a partial run of the same build resumes)."""
    from clinseek.bench import build_benchmark, load_questions

    small = tmp_path_factory.mktemp("bench_small") / "bench"
    build_benchmark(demo_store, tasks=list(TASKS), per_task=1, seed=7, out=small)
    questions = load_questions(small)
    out = tmp_path_factory.mktemp("runs_mixed")
    shutil.copytree(runs42, out, dirs_exist_ok=True)
    before = len(_rows(out))
    again = _run(questions, demo_store, out)
    rows = _rows(out)
    assert sorted(r.qid for r in rows) == sorted(q.qid for q in questions)
    assert {r.question_hash for r in rows} == {question_hash(q) for q in questions}
    superseded = out / "clinseek-bench-text" / "agent" / "baseline_null" / "superseded.jsonl"
    assert again.superseded == before - again.resumed
    assert len(superseded.read_text().splitlines()) == again.superseded  # nothing lost

    # the first build again, with --limit: the rows of its qids that this call does not select stay
    first = _run(demo_bench[1], demo_store, out)
    assert first.superseded == len(questions) and len(_rows(out)) == len(demo_bench[1])
    partial = anyio.run(lambda: run_benchmark(demo_bench[1], demo_store, "agent", "baseline:null", out,
                                              settings=SETTINGS, limit=2)).runs[0]
    assert (partial.superseded, partial.resumed) == (0, 2) and len(_rows(out)) == len(demo_bench[1])
