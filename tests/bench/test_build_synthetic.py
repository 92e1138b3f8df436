"""The builder on the shipped synthetic store (40 patients, seed 7): every supported task, text and multimodal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench._bench_oracle import NEXT_BATCH_SQL, coding_sql, expected_next_event, expected_risk
from clinseek.bench import (
    MM_TASKS,
    TEXT_TASKS,
    Question,
    build_benchmark,
    episode_key,
    load_questions,
    render_curated,
    validate_benchmark,
)
from clinseek.episode import build_episode
from clinseek.store import open_store

PER_TASK = 3
NO_MAPPING = {"prescriptions_atc", "medrecon_atc"}


@pytest.fixture(scope="module")
def synthetic_built(
    synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[Question]]:
    out = tmp_path_factory.mktemp("synthetic_built") / "bench"
    build_benchmark(synthetic_store, per_task=PER_TASK, seed=11, out=out)
    return out, load_questions(out)


def test_every_task_with_a_mapping_yields_rows(synthetic_built: tuple[Path, list[Question]]) -> None:
    out, qs = synthetic_built
    skipped = json.loads((out / "build_manifest.json").read_text())["skipped"]
    tasks = {q.task for q in qs}
    for spec in TEXT_TASKS:
        assert (spec.name in tasks) != (spec.name in NO_MAPPING), spec.name
    assert set(NO_MAPPING) <= set(skipped)
    assert {q.category for q in qs if q.task_type == "multimodal"} == {m.category for m in MM_TASKS}


def test_synthetic_build_validates_against_its_store(
    synthetic_built: tuple[Path, list[Question]], synthetic_store: Path
) -> None:
    report = validate_benchmark(synthetic_built[0], store=synthetic_store)
    assert report.ok, report.problems


def test_labels_match_hand_written_sql(
    synthetic_built: tuple[Path, list[Question]], synthetic_store: Path
) -> None:
    store = open_store(synthetic_store)
    present = set(store.row_counts)
    con: Any = store.connect()
    checked = 0
    try:
        for q in synthetic_built[1]:
            if q.task_type == "risk_prediction":
                assert q.label == (("yes",) if expected_risk(con, q) else ("no",)), q.qid
            elif q.task in NEXT_BATCH_SQL:
                found = con.execute(NEXT_BATCH_SQL[q.task], [q.subject_id, q.prediction_time]).fetchall()
                assert set(q.label) == {r[0].strip() for r in found if r[0] is not None and r[0].strip()}, (
                    q.qid
                )
            elif q.task == "next_event":
                assert set(q.label) == expected_next_event(con, q, present), q.qid
            elif (sql := coding_sql(q.task)) is not None:
                params: list[Any] = [q.target_hadm_id or q.target_stay_id or q.hadm_id]
                if q.task == "procedures_icd":
                    params.append(q.prediction_time.date())
                assert set(q.label) == {r[0] for r in con.execute(sql, params).fetchall()}, q.qid
            else:
                continue
            checked += 1
    finally:
        con.close()
    assert checked >= 30 * PER_TASK


def test_radiology_and_chartevents_answers_are_hidden(
    synthetic_built: tuple[Path, list[Question]], synthetic_store: Path
) -> None:
    for q in synthetic_built[1]:
        if q.task not in ("radiology", "chartevents"):
            continue
        table, col = (
            ("note.radiology", "charttime") if q.task == "radiology" else ("icu.chartevents", "charttime")
        )
        with build_episode(synthetic_store, episode_key(q)) as ep:
            assert ep.execute(f"SELECT count(*) FROM {table} WHERE {col} >= ?", [q.prediction_time]).rows == [
                (0,)
            ]


def test_curated_text_renders_for_a_synthetic_question(
    synthetic_built: tuple[Path, list[Question]], synthetic_store: Path
) -> None:
    q = next(q for q in synthetic_built[1] if q.task == "LengthOfStay_7day")
    curated = render_curated(q, synthetic_store, budget_tokens=1_500)
    assert curated.text.startswith("## Patient Demographics [None]")
    assert curated.blocks_shown > 0
