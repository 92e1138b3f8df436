"""Regressions of the session-20 scoring audit (/work/audit20): each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _scoring_helpers import write_jsonl

from clinseek.errors import ScoringError
from clinseek.scoring import read_expected, score_path


def _bench_folder(root: Path) -> tuple[list[dict], list[dict]]:
    """A benchmark folder with 4 text and 3 multimodal questions, and both benchmarks' runs answering all."""
    text_q = [dict(qid=f"t{i}", task="labevents", task_type="decision_making", label=["Glucose"],
                   candidates=["Glucose", "Sodium"]) for i in range(4)]
    mm_q = [dict(qid=f"m{i}", task="ehrxqa_image", label=[{"name": "yes"}]) for i in range(3)]
    bench = root / "bench"
    bench.mkdir(parents=True)
    (bench / "ClinSeek-Bench_text.json").write_text(json.dumps(text_q))
    (bench / "ClinSeek-Bench_multimodal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mm_q))
    for name, qs, answer in (("clinseek-bench-text", text_q, ["Glucose"]), ("clinseek-bench-multimodal", mm_q, ["yes"])):
        write_jsonl(root / "runs" / name / "agent" / "m" / "results.jsonl",
                    [dict(q, gold=q["label"], status="answered", answer=answer) for q in qs])
    return text_q, mm_q


def test_benchmark_folder_manifest_holds_each_run_to_its_own_benchmark(tmp_path: Path) -> None:
    # finding 1: the text run got the 3 multimodal questions as missing (n 7, F1 0.571) and the reverse
    _bench_folder(tmp_path)
    scored = score_path(tmp_path / "runs", expected=read_expected(tmp_path / "bench"), n_resamples=50)
    runs = {r.benchmark: r for r in scored.report.runs}
    text, mm = runs["clinseek-bench-text"], runs["clinseek-bench-multimodal"]
    assert (text.overall.n_questions, text.overall.n_missing, text.overall.f1) == (4, 0, 1.0)
    assert (mm.overall.n_questions, mm.overall.n_missing, mm.overall.f1) == (3, 0, 1.0)
    assert list(text.per_category) == ["laboratory_microbiology"]
    assert list(mm.per_category) == ["cxr_finding_presence"]
    assert scored.report.missing == {}


def test_benchmark_folder_manifest_still_counts_a_runs_own_missing_questions(tmp_path: Path) -> None:
    text_q, _ = _bench_folder(tmp_path)
    results = tmp_path / "runs" / "clinseek-bench-text" / "agent" / "m" / "results.jsonl"
    write_jsonl(results, [dict(q, gold=q["label"], status="answered", answer=["Glucose"]) for q in text_q[:3]])
    scored = score_path(tmp_path / "runs", expected=read_expected(tmp_path / "bench"), n_resamples=50)
    text = next(r for r in scored.report.runs if r.benchmark == "clinseek-bench-text")
    assert (text.overall.n_questions, text.overall.n_missing, text.overall.f1) == (4, 1, 0.75)
    assert scored.report.missing == {"clinseek-bench-text/agent/m": ["t3"]}


def test_benchmark_folder_whose_files_share_a_qid_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    row = dict(qid="q0", task="labevents", task_type="decision_making", label=["Glucose"])
    (bench / "ClinSeek-Bench_text.json").write_text(json.dumps([row]))
    (bench / "ClinSeek-Bench_multimodal.jsonl").write_text(json.dumps(dict(qid="q0", task="ehrxqa_image",
                                                                            label=[{"name": "yes"}])) + "\n")
    with pytest.raises(ScoringError, match="qid q0 is in both"):
        read_expected(bench)


def _released_text_row(idx: int) -> dict:
    """A row of the released text manifest (read by ``clinseek.bench.read_manifest``: templates get hashes)."""
    return {"qid": f"ehr_bench_risk_prediction_{idx}", "subject_id": 19990000 + idx, "hadm_id": 29990000 + idx,
            "prediction_time": "2150-03-02 08:00:01", "latest_event_time": "2150-03-02 08:00:00",
            "task": "ED_Hospitalization", "task_type": "risk_prediction", "category": "Escalation of care",
            "instruction": "Predict whether the patient is hospitalized.", "candidates": ["yes", "no"],
            "label": "yes", "output": "yes", "task_info": {"task": "ED_Hospitalization", "source_idx": idx,
                                                           "target": "[]"},
            "source_file": "ehr_bench_risk_prediction.jsonl", "source_idx": idx}


def test_a_missing_question_stays_in_the_paired_delta_against_rows_without_a_hash(tmp_path: Path) -> None:
    # finding 2: curated lacks 2 of 6 questions and the rows record no question_hash (the reference's files):
    # the 2 missing qids were excluded as "different questions" (n 4, Δ 0.0) instead of pairing as 0
    qs = [_released_text_row(i) for i in range(6)]
    manifest = tmp_path / "ClinSeek-Bench_text.json"
    manifest.write_text(json.dumps(qs))
    expected = read_expected(manifest)
    assert all(t.question_hash for t in expected)
    for mode, rows in (("agent", qs), ("curated", qs[:4])):
        write_jsonl(tmp_path / "runs" / "clinseek-bench-text" / mode / "m" / "results.jsonl",
                    [{"qid": q["qid"], "task": q["task"], "task_type": q["task_type"], "gold": q["label"],
                      "candidates": q["candidates"], "status": "answered", "answer": ["yes"]} for q in rows])
    scored = score_path(tmp_path / "runs", expected=expected, n_resamples=200)
    runs = {r.mode: r.overall for r in scored.report.runs}
    assert (runs["agent"].f1, runs["curated"].n_missing, runs["curated"].f1) == (1.0, 2, pytest.approx(4 / 6))
    [paired] = scored.report.paired
    overall = paired.groups[0]
    assert (overall.n, overall.delta, paired.excluded_qids) == (6, pytest.approx(2 / 6), [])
    assert overall.delta == pytest.approx(runs["agent"].f1 - runs["curated"].f1)


def test_a_missing_question_does_not_pair_with_a_row_of_another_question() -> None:
    from _scoring_helpers import question

    from clinseek.scoring import compare_questions

    answered = question("q1", 1.0).model_copy(update={"question_hash": "b" * 64})
    missing = question("q1", 0.0).model_copy(update={"status": "missing", "runs": [], "question_hash": "a" * 64})
    with pytest.raises(ScoringError, match="name different questions"):
        compare_questions([answered], [missing], label_a="a", label_b="b", n_resamples=10)
    unrecorded = answered.model_copy(update={"question_hash": None})
    result = compare_questions([unrecorded], [missing], label_a="a", label_b="b", n_resamples=10)
    assert (result.groups[0].n, result.groups[0].delta) == (1, 1.0)


def test_f1_raw_averages_the_same_questions_as_f1(tmp_path: Path) -> None:
    # finding 4: a no-answer run and a single-answer question dropped out of f1_raw (0.75) but counted in f1 (0.5)
    gold = ["Pleural Effusion", "Atelectasis"]
    write_jsonl(tmp_path / "clinseek-bench-multimodal" / "agent" / "m" / "results.jsonl", [
        {"qid": "a", "task": "medmod_radiology", "gold": gold, "status": "answered", "answer": ["effusion", "atelectasis"]},
        {"qid": "b", "task": "medmod_radiology", "gold": gold, "status": "no_answer", "answer": None},
        {"qid": "c", "task": "medmod_radiology", "gold": gold, "status": "answered",
         "answer": ["pleural effusion", "atelectasis"]},
        {"qid": "d", "task": "medmod_in_hospital_mortality", "gold": ["no"], "status": "answered", "answer": ["yes"]},
    ])
    overall = score_path(tmp_path, n_resamples=10).report.runs[0].overall
    assert overall.f1 == pytest.approx((1 + 0 + 1 + 0) / 4)
    assert overall.f1_raw == pytest.approx((0.5 + 0 + 1 + 0) / 4)  # unmapped: "effusion" misses "pleural effusion"


def test_f1_raw_is_none_where_no_question_went_through_the_mapping(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "clinseek-bench-text" / "agent" / "m" / "results.jsonl",
                [{"qid": "t", "task": "labevents", "task_type": "decision_making", "gold": ["Glucose"],
                  "status": "answered", "answer": ["Glucose"]}])
    assert score_path(tmp_path, n_resamples=10).report.runs[0].overall.f1_raw is None


def test_the_judge_keeps_the_strict_scores(tmp_path: Path) -> None:
    # finding 5: judge_scored rebuilt the runs with summarize_run and dropped runs[].strict (0.0 -> None)
    import anyio

    from clinseek.scoring import judge_scored

    write_jsonl(tmp_path / "clinseek-bench-multimodal" / "agent" / "m" / "results.jsonl",
                [{"qid": "a", "task": "ehrxqa_image", "gold": ["yes"], "status": "answered", "answer": ["yes"],
                  "parse_mode": "response_json"}])
    scored = score_path(tmp_path, strict=True, n_resamples=10)
    before = scored.report.runs[0]
    assert before.strict is not None and before.strict.f1 == 0.0

    async def judge(messages: list[dict[str, str]]) -> str:
        return '{"match": true, "reason": "same"}'

    after = anyio.run(lambda: judge_scored(scored, judge, judge_name="fake")).report.runs[0]
    assert after.strict == before.strict
    assert after.overall.judge_accuracy == 1.0
    assert after.overall.model_copy(update={"judge_accuracy": None, "n_judged": 0}) == before.overall


@pytest.mark.parametrize(("gold", "answer", "f1"), [
    ("1.5", "1.500001", 0.0),        # finding 7: 6 significant digits made these equal
    ("123456.5", "123456.4", 0.0),
    ("1,000,000", "1000004", 0.0),
    ("12345678901234567", "12345678901234568", 0.0),  # beyond a float's precision too
    ("0.1", "0.1000000000000000001", 0.0),
    ("2.25", "2.25", 1.0),
    ("1,200", "1200.0 ml", 1.0),      # the format and the units do not matter
    ("1000000", "1,000,000", 1.0),
    ("3", "three", 1.0),
    ("0", "none", 1.0),
])
def test_a_count_is_compared_exactly(gold: str, answer: str, f1: float) -> None:
    from clinseek.scoring import score_input_from_row, score_sample

    fields = {"qid": "q", "task": "ehrxqa_image", "status": "answered", "gold": [gold], "answer": [answer]}
    defaults = {"benchmark": "mm", "mode": "agent", "model": "m"}
    declared = score_sample(score_input_from_row({**fields, "answer_type": "count"}, defaults))
    assert (declared.route, declared.f1) == ("count", f1)
    read = score_sample(score_input_from_row(fields, defaults))  # the route read from the gold
    if read.route == "count":
        assert read.f1 == f1


def test_compare_card_pairs_a_models_agent_and_curated_folders(tmp_path: Path) -> None:
    # finding 3: `clinseek compare AGENT_DIR CURATED_DIR --card` showed every Δ as "–"
    from clinseek.scoring import card_tables_of

    golds = [["Glucose"], ["Sodium"], ["Glucose"], ["Sodium"]]
    for mode, answers in (("agent", [["Glucose"], ["Sodium"], ["Glucose"], ["Glucose"]]),
                          ("curated", [["Sodium"], ["Sodium"], ["Sodium"], ["Glucose"]])):
        write_jsonl(tmp_path / "runs" / "clinseek-bench-text" / mode / "m" / "results.jsonl",
                    [{"qid": f"q{i}", "task": "labevents", "task_type": "decision_making", "gold": g,
                      "status": "answered", "answer": a} for i, (g, a) in enumerate(zip(golds, answers, strict=True))])
    together = score_path(tmp_path / "runs", n_resamples=300, seed=3).report.paired[0].groups[0]
    base = tmp_path / "runs" / "clinseek-bench-text"
    [table] = card_tables_of([base / "agent" / "m", base / "curated" / "m"], n_resamples=300, seed=3)
    overall = next(r for r in table.rows if r.group == "overall")
    cell = overall.cells["m"]
    assert cell.delta is not None
    assert cell.delta == together  # the same comparison as scoring both modes from one folder
    assert (cell.agent, cell.curated, cell.delta.delta) == (0.75, 0.25, 0.5)
    assert all(r.cells["m"].delta is not None for r in table.rows)


@pytest.mark.parametrize("score_infra_errors", [False, True])
def test_no_answer_counts_runs_and_never_an_infra_error(tmp_path: Path, score_infra_errors: bool) -> None:
    # finding 6: the legend says "runs with no valid answer" but questions were counted (1 answered run + 2
    # unanswered runs gave 0), and with --score-infra-errors an infra error counted as no answer too
    base = {"task": "labevents", "task_type": "decision_making", "gold": ["A"]}
    write_jsonl(tmp_path / "clinseek-bench-text" / "agent" / "m" / "results.jsonl", [
        dict(base, qid="q1", run_index=0, status="answered", answer=["A"]),
        dict(base, qid="q1", run_index=1, status="no_answer", answer=None),
        dict(base, qid="q1", run_index=2, status="answered", answer=[" "]),  # no non-empty item: no answer
        dict(base, qid="q2", run_index=0, status="infra_error", answer=None),
        dict(base, qid="q3", run_index=0, status="no_answer", answer=None),
    ])
    scored = score_path(tmp_path, score_infra_errors=score_infra_errors, n_resamples=10)
    overall = scored.report.runs[0].overall
    assert (overall.n_runs, overall.n_no_answer, overall.n_infra_error, overall.n_answered) == (5, 3, 1, 1)
    assert overall.n_questions == (3 if score_infra_errors else 2)
    statuses = {q.qid: (q.status, q.scored) for q in scored.questions}
    assert statuses == {"q1": ("answered", True), "q2": ("infra_error", score_infra_errors), "q3": ("no_answer", True)}


def test_a_delta_over_fewer_than_five_questions_is_never_marked_significant() -> None:
    """newcomer21: ``next_event n=2 +31.8 [31.8, 31.8]`` was bold (and green in the report): two questions with the
    same Δ give the bootstrap interval [Δ, Δ]. The t-interval's n >= 5 applies to the bold too."""
    from clinseek.scoring import GroupDelta
    from clinseek.scoring._card import CardCell

    def delta(n: int) -> GroupDelta:
        return GroupDelta(group="overall", n=n, mean_a=0.8, mean_b=0.5, delta=0.3, ci_low=0.3, ci_high=0.3,
                          t_low=None, t_high=None, p_t=None)

    assert [CardCell(0.5, 0.8, delta(n)).significant for n in (1, 2, 4, 5, 40)] == [False, False, False, True, True]
    from clinseek.reporting._tables import _delta_cell
    from clinseek.scoring import PairedComparison

    pair = PairedComparison.model_construct(a="a", b="b")
    assert 'class="num delta "' in _delta_cell(pair, "overall", delta(2))
    assert 'class="num delta pos"' in _delta_cell(pair, "overall", delta(5))
