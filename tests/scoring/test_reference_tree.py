"""``clinseek score`` on a tree in the reference's layout (text, multimodal with symbolic links and
``merged_unique.jsonl``, AgentEHR-Bench): every model read once and named by the path the user sees, the card's
13 + 6 categories in card order, and per-category F1 equal to the hand-computed values of ``_reference_tree``
under clinseek's scorer and under the reference's rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from _reference_tree import (
    AGENTEHR_EXPECTED,
    GLM,
    GLM_MM_MORTALITY,
    MM_AGENT_EXPECTED,
    MM_ORDER,
    MM_QUESTIONS,
    MM_TITLES,
    OPUS,
    RISK,
    TEXT_EXPECTED,
    TEXT_ORDER,
    build_tree,
    mm_question,
    mm_rows,
    write_jsonl,
)
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ScoringError
from clinseek.scoring import (
    ReferenceRules,
    ScoredResults,
    ScoreReport,
    card_cells,
    card_tables,
    category_title,
    read_expected,
    score_path,
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("evaluation_results") / "ClinSeek-Evaluation-Results")


@pytest.fixture(scope="module")
def scored(tree: Path) -> ScoredResults:
    return score_path(tree, scorer="reference", n_resamples=500)


def _runs(report: ScoreReport) -> dict[tuple[str, str, str], object]:
    return {(r.benchmark, r.mode, r.model): r for r in report.runs}


def test_every_model_is_read_once_named_by_the_visible_path(scored: ScoredResults, tree: Path) -> None:
    report = scored.report
    assert sorted(_runs(report)) == [
        ("agent_ehr_bench", "agent", OPUS),
        ("ehr_bench", "agent", OPUS), ("ehr_bench", "agent", GLM),
        ("ehr_bench", "curated", OPUS), ("ehr_bench", "curated", GLM),
        ("mm_bench", "agent", OPUS), ("mm_bench", "agent", GLM),
        ("mm_bench", "curated", OPUS), ("mm_bench", "curated", GLM),
    ]
    read = {s.path: s for s in report.sources}
    glm = read[str(tree / f"mm_bench/agentic/full2703/{GLM}/merged_unique.jsonl")]  # through the link, merged file
    assert glm.format == "raw" and glm.runs == [f"mm_bench/agent/{GLM}"] and glm.rows == 12
    assert all("_multi_eval_raw" not in path for path in read)
    skipped = "\n".join(report.skipped_sources)
    for left_out in ("smoke20", "_archive", f"scored/{GLM}/rescored.jsonl", "_multi_eval_raw"):
        assert left_out in skipped
    assert report.layout == "reference" and report.bad_rows == []
    only_scored = score_path(tree / "mm_bench/agentic/scored", n_resamples=50).report  # its models are all links
    assert [(r.benchmark, r.mode, r.model) for r in only_scored.runs] == [("mm_bench", "agent", GLM)]
    assert [s.format for s in only_scored.sources] == ["scored"]


def test_categories_are_the_cards_in_card_order(scored: ScoredResults) -> None:
    for run in scored.report.runs:
        if run.benchmark == "ehr_bench":
            assert list(run.per_category) == TEXT_ORDER  # all 13, in card order
        elif run.benchmark == "mm_bench":
            assert list(run.per_category) == MM_ORDER  # all 6; EHRXQA split into presence/enumeration/change
    assert [category_title(c) for c in MM_ORDER] == [MM_TITLES[c] for c in MM_ORDER]


def test_per_category_f1_equals_hand_values_for_both_scorers(scored: ScoredResults) -> None:
    runs = _runs(scored.report)
    checked = 0
    for (model, mode), kinds in TEXT_EXPECTED.items():
        run = runs[("ehr_bench", mode, model)]
        for slug in TEXT_ORDER:
            clinseek, reference = kinds["risk" if slug in RISK else "decision"]
            stats = run.per_category[slug]  # type: ignore[attr-defined]
            assert stats.f1 == pytest.approx(clinseek), (model, mode, slug)
            assert stats.f1_reference == pytest.approx(reference), (model, mode, slug)
            checked += 1
    for model in (OPUS, GLM):
        for slug in MM_ORDER:
            want = GLM_MM_MORTALITY if (model, slug) == (GLM, "mm_mortality") else MM_AGENT_EXPECTED[slug]
            stats = runs[("mm_bench", "agent", model)].per_category[slug]  # type: ignore[attr-defined]
            assert (stats.f1, stats.f1_reference) == pytest.approx(want), (model, slug)
            curated = runs[("mm_bench", "curated", model)].per_category[slug]  # type: ignore[attr-defined]
            assert (curated.f1, curated.f1_reference) == pytest.approx((0.5, 0.5)), (model, slug)
            checked += 2
    agentehr = runs[("agent_ehr_bench", "agent", OPUS)].per_category  # type: ignore[attr-defined]
    assert list(agentehr) == list(AGENTEHR_EXPECTED)  # card order
    for slug, want in AGENTEHR_EXPECTED.items():
        assert (agentehr[slug].f1, agentehr[slug].f1_reference) == pytest.approx(want), slug
    # the infrastructure error: left out by clinseek, 0 for the reference
    decision = runs[("ehr_bench", "agent", GLM)].per_category["diagnosis"]  # type: ignore[attr-defined]
    assert (decision.n_questions, decision.n_reference, decision.n_infra_error) == (1, 2, 1)
    assert checked == 4 * 13 + 2 * 2 * 6


def test_the_reference_vocabulary_mapping_runs_only_when_configured(tree: Path) -> None:
    vectors = {"effusion": [1.0, 0.0, 0.0], "pleural effusion": [0.9, 0.1, 0.0], "cardiomegaly": [0.0, 1.0, 0.0]}

    def embed(texts: list[str]) -> np.ndarray:
        return np.array([vectors.get(t.strip().lower(), [0.0, 0.0, 1.0]) for t in texts])

    mm = tree / "mm_bench" / "agentic" / "full2703" / OPUS
    plain = score_path(mm, scorer="reference", n_resamples=50)
    mapped = score_path(mm, scorer="reference", n_resamples=50,
                        reference_rules=ReferenceRules(embed=embed, embed_name="test-embedding"))
    qid = MM_QUESTIONS["cxr_finding_enumeration"][0][0]  # "effusion" → "Pleural Effusion" only when mapped
    f1 = {s.report.reference_rules: next(q.f1_reference for q in s.questions if q.qid == qid) for s in (plain, mapped)}
    assert list(f1.values()) == [0.5, 1.0]
    assert "no vocabulary mapping" in str(plain.report.reference_rules)
    assert "test-embedding" in str(mapped.report.reference_rules)
    assert [q.f1 for q in plain.questions] == [q.f1 for q in mapped.questions]  # clinseek's F1 untouched


def test_card_table_for_two_models_printed_by_score(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores"
    result = CliRunner().invoke(app, ["score", str(tree / "ehr_bench"), "--out", str(out), "--resamples", "500"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(f"read {tree / 'ehr_bench'}" in line and "reference results" in line for line in lines)
    header = next(line for line in lines if "Category" in line and f"{OPUS} Curated" in line)
    assert f"{GLM} Curated" in header and f"{GLM} Agent" in header and header.count("Δ") == 2
    rows = [line for line in lines if line.startswith("│")]
    titles = [r.split("│")[1].strip() for r in rows]
    card = [category_title(c) for c in TEXT_ORDER]
    assert [t for t in titles if t in card] [:13] == card
    assert "Overall" in titles
    mortality = rows[titles.index("Mortality")].split("│")
    assert [c.strip() for c in mortality[2:9]] == ["2", "50.0", "50.0", "0.0", "50.0", "100.0", "+50.0"]
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    (table,) = card_tables(report.runs, report.paired)
    summary = (out / "summary.md").read_text().splitlines()
    assert "## By category: ehr_bench" in summary
    head = summary.index(f"| Category | N | {OPUS} Curated | {OPUS} Agent | Δ | {GLM} Curated | {GLM} Agent | Δ |")
    body = [line.strip("|").split("|") for line in summary[head + 2 : head + 2 + len(table.rows)]]
    assert [cells[0].strip() for cells in body] == [*card, "Overall"]
    for row, cells in zip(table.rows, body, strict=True):
        for j, model in enumerate((OPUS, GLM)):
            delta = cells[2 + 3 * j + 2].strip()
            assert delta.startswith("**") == row.cells[model].significant, (row.title, model, delta)
    assert any(c.significant for row in table.rows for c in row.cells.values())  # bold is exercised


def _release_mm_manifest(path: Path, *, extra_qid: str) -> Path:
    """A release-format ClinSeek-Bench_multimodal.jsonl (§1.3; the card's v1: no category) for the MM questions
    of the tree, plus one question no run answered."""
    rows = []
    for slug in MM_ORDER:
        for qid, task, text, gold in MM_QUESTIONS[slug]:
            rows.append({"qid": qid, "task": task, "task_family": "qa",
                         "source_benchmark": "ehrxqa" if task.startswith("ehrxqa") else "medmod",
                         "subject_id": 18880001, "hadm_id": 28880001, "stay_id": None,
                         "prediction_time": "2105-06-01 10:00:00", "question": mm_question(qid, text),
                         "answer_type": "list", "ground_truth": [{"name": g} for g in gold],
                         "modalities": ["cxr_table", "cxr_image"], "study_ids": [51111111],
                         "dicom_ids": ["aaaa-bbbb"], "image_paths": [
                             "EHRXQAOriginalLinked_v1/mimic-cxr/2.0.0/files/p18/p18880001/s51111111/aaaa-bbbb.jpg"],
                         "report_paths": [], "scope": "patient_scope",
                         "snapshot_spec": {"cutoff_time": "2105-06-01 10:00:00", "time_policy": "inclusive_leq_cutoff",
                                           "cxr_policy": "linked_studies_only",
                                           "table_policy": "rows_visible_if_event_time_leq_cutoff",
                                           "cohort_materialization": None},
                         "leakage_policy_version": "multimodal-strict-temporal-scope-v1"})
    extra = {**rows[0], "qid": extra_qid, "question": mm_question(extra_qid, "Is there any edema?"),
             "ground_truth": [{"name": "no"}]}
    return write_jsonl(path, [*rows, extra])


def test_score_manifest_with_a_release_format_multimodal_manifest(tree: Path, tmp_path: Path) -> None:
    manifest = _release_mm_manifest(tmp_path / "ClinSeek-Bench_multimodal.jsonl", extra_qid="ehrxqa_test_99")
    templates = read_expected(manifest)
    assert {t.task_type for t in templates} == {"multimodal"}  # no task_type in multimodal rows
    assert {t.qid: t.category for t in templates}["ehrxqa_test_99"] == "cxr_finding_presence"
    out = tmp_path / "scores"
    result = CliRunner().invoke(app, ["score", str(tree / "mm_bench"), "--manifest", str(manifest), "--out", str(out),
                                      "--resamples", "200", "--scorer", "reference"])
    assert result.exit_code == 0, result.output
    assert "1 questions of the manifest have no result row (scored 0): ehrxqa_test_99" in result.output
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    assert report.missing == {f"mm_bench/{m}/{model}": ["ehrxqa_test_99"]
                              for model in (OPUS, GLM) for m in ("agent", "curated")}
    presence = _runs(report)[("mm_bench", "agent", OPUS)].per_category["cxr_finding_presence"]  # type: ignore[attr-defined]
    # the missing question scores 0 for clinseek (3 questions) and is dropped by the reference (2)
    assert (presence.n_questions, presence.f1, presence.n_missing) == (3, pytest.approx(2 / 3), 1)
    assert (presence.n_reference, presence.f1_reference) == (2, pytest.approx(0.5))
    assert "ehrxqa_test_99" in (out / "summary.md").read_text()


def test_score_manifest_with_a_clinseek_built_multimodal_manifest(synthetic_store: Path, tmp_path: Path) -> None:
    from clinseek.bench import MM_FILE, build_benchmark, load_questions

    bench = tmp_path / "bench"
    build_benchmark(synthetic_store, tasks=["cxr_finding_presence", "cxr_change_comparison", "phenotype"],
                    per_task=2, seed=42, out=bench)
    questions = load_questions(bench / MM_FILE)
    answered, never_run = questions[:-1], questions[-1]
    rows = [{"qid": q.qid, "run_index": 0, "task": q.task, "task_type": q.task_type, "category": q.category,
             "status": "answered", "gold": list(q.label), "answer": list(q.label)} for q in answered]
    runs = tmp_path / "runs"
    write_jsonl(runs / "clinseek-bench-mm/agent/baseline_evidence/results.jsonl", rows)
    out = tmp_path / "scores"
    result = CliRunner().invoke(app, ["score", str(runs), "--manifest", str(bench / MM_FILE), "--out", str(out),
                                      "--resamples", "100"])
    assert result.exit_code == 0, result.output
    report = ScoreReport.model_validate_json((out / "summary.json").read_text())
    (run,) = report.runs
    assert list(run.per_category) == [c for c in MM_ORDER if c in {q.category for q in questions}]
    assert report.missing == {"clinseek-bench-mm/agent/baseline_evidence": [never_run.qid]}
    assert run.overall.f1 == pytest.approx(len(answered) / len(questions))


def test_multimodal_rows_of_a_symlinked_run_are_read_once(tmp_path: Path) -> None:
    """Two links to one raw folder: the run is read once, under the first visible name."""
    raw = write_jsonl(tmp_path / "mm_bench/agentic/full2703/_raw/m/merged_unique.jsonl",
                      mm_rows(GLM, "agentic", with_category=False))
    os.symlink("_raw/m", tmp_path / "mm_bench/agentic/full2703/glm_4_7")
    os.symlink("_raw/m", tmp_path / "mm_bench/agentic/full2703/zz_copy")
    scored = score_path(tmp_path / "mm_bench", n_resamples=50)
    assert [r.model for r in scored.report.runs] == [GLM]
    assert any("zz_copy" in s and "read once" in s for s in scored.report.skipped_sources)
    assert json.loads(raw.read_text().splitlines()[0])["qid"] == MM_QUESTIONS[MM_ORDER[0]][0][0]


def test_score_manifest_with_an_agentehr_manifest(tree: Path, tmp_path: Path) -> None:
    from _reference_tree import AGENTEHR, agentehr_rows

    rows = [{k: r[k] for k in ("qid", "task", "subject_id", "timestamp", "label")} for r in agentehr_rows()]
    never_run = {**rows[2], "qid": "agentehr_labevents_2", "label": [{"name": "Sodium"}]}
    manifest = write_jsonl(tmp_path / "agentehr_subset.jsonl", [*rows, never_run])
    scored = score_path(tree / "agent_ehr_bench", expected=read_expected(manifest), n_resamples=50, scorer="reference")
    (run,) = scored.report.runs
    assert scored.report.missing == {f"agent_ehr_bench/agent/{OPUS}": ["agentehr_labevents_2"]}
    labs = run.per_category["laboratory_microbiology"]
    assert (labs.n_questions, labs.f1, labs.n_reference, labs.f1_reference) == (
        3, pytest.approx(1 / 3), 2, pytest.approx(0.5))
    assert run.overall.n_questions == len(AGENTEHR) + 1


def test_compare_card_prints_the_models_of_both_folders(tree: Path, tmp_path: Path) -> None:
    import shutil

    for model, side in ((OPUS, "a"), (GLM, "b")):
        for mode in ("agentic", "oneshot"):
            shutil.copytree(tree / f"ehr_bench/{mode}/full1800/{model}", tmp_path / side / f"ehr_bench/{mode}/full1800/{model}")
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--card",
                                      "--resamples", "500"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if "Category" in line)
    assert f"{OPUS} Curated" in header and f"{GLM} Agent" in header
    scored = score_path(tree / "ehr_bench", n_resamples=500)
    (table,) = card_tables(scored.report.runs, scored.report.paired)
    overall = next(line for line in result.output.splitlines() if line.startswith("│ Overall"))
    cells = [c.strip() for c in overall.split("│")[1:-1]]
    assert cells == card_cells(table, table.rows[-1], bold=("", ""))  # the same numbers as score's table
    same = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "a"), "--card"])
    assert isinstance(same.exception, ScoringError) and "in both" in str(same.exception)  # main() exits 2 on it


def test_score_manifest_with_a_release_format_text_manifest(tree: Path, tmp_path: Path) -> None:
    """The released text split (a JSON array with ``category``): its questions, under its categories (here one
    question is filed under another card category than its task's, and the manifest wins)."""
    from _reference_tree import text_rows

    keys = ("qid", "subject_id", "hadm_id", "prediction_time", "latest_event_time", "task", "task_type", "category",
            "instruction", "candidates", "label", "output", "source_file", "source_idx")
    rows = [{k: r[k] for k in keys} for r in text_rows(OPUS, "agentic", with_category=True)]
    moved = rows[0]["qid"]  # an Inpatient_Mortality question
    rows[0]["category"] = "Readmission"
    manifest = tmp_path / "ClinSeek-Bench_text.json"
    manifest.write_text(json.dumps(rows))
    scored = score_path(tree / "ehr_bench", expected=read_expected(manifest), n_resamples=50)
    assert {q.category for q in scored.questions if q.qid == moved} == {"readmission"}
    run = _runs(scored.report)[("ehr_bench", "agent", GLM)]
    assert list(run.per_category) == TEXT_ORDER  # type: ignore[attr-defined]
    assert run.per_category["mortality"].n_questions == 1  # type: ignore[attr-defined]
    assert run.per_category["readmission"].n_questions == 3  # type: ignore[attr-defined]
    assert scored.report.missing == {}
