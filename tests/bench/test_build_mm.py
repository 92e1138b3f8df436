"""Multimodal questions from CXR studies: a copy of the demo store with fake CXR studies placed in its ICU stays."""

from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from clinseek.bench import (
    MM_FILE,
    MM_LEAKAGE_POLICY,
    Question,
    build_benchmark,
    episode_key,
    load_questions,
    render_curated,
    validate_benchmark,
)
from clinseek.episode import build_episode
from clinseek.schema import CHEXPERT_LABELS, get_table
from clinseek.store import connect_store, open_store, record_table, table_ddl

CATEGORIES = (
    "cxr_finding_presence",
    "cxr_finding_enumeration",
    "cxr_change_comparison",
    "clinical_deterioration",
    "mm_mortality",
    "phenotype",
)


def _studies(con: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Two fake studies per ICU stay (intime + 2 h and + 3 h), with seeded CheXpert labels."""
    rng = random.Random(5)
    meta: list[tuple[Any, ...]] = []
    labels: list[tuple[Any, ...]] = []
    stays = con.execute("SELECT subject_id, stay_id, intime FROM icu.icustays ORDER BY stay_id").fetchall()
    for n, (subject_id, _, intime) in enumerate(stays):
        for k, hours in enumerate((2, 3)):
            t = intime + dt.timedelta(hours=hours)
            study = 50_000_000 + 10 * n + k
            date, time = int(t.strftime("%Y%m%d")), float(t.strftime("%H%M%S"))
            meta.append(
                (
                    f"d{study}",
                    subject_id,
                    study,
                    "CHEST (PA AND LAT)",
                    "PA",
                    100,
                    100,
                    date,
                    time,
                    None,
                    None,
                    None,
                )
            )
            labels.append((subject_id, study, *[rng.choice([1.0, 0.0, -1.0, None]) for _ in CHEXPERT_LABELS]))
    return meta, labels


@pytest.fixture(scope="module")
def cxr_store(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cxr_store") / "demo_cxr.duckdb"
    shutil.copy(demo_store, path)
    con = connect_store(path, read_only=False)
    try:
        meta, labels = _studies(con)
        for name, rows in (("cxr.metadata", meta), ("cxr.chexpert", labels)):
            table = get_table(name)
            con.execute(table_ddl(table))
            con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(table.columns))})", rows)
            record_table(con, table, row_count=len(rows))
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def mm_questions(cxr_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Question]]:
    out = tmp_path_factory.mktemp("mm") / "bench"
    build_benchmark(cxr_store, tasks=list(CATEGORIES), per_task=4, seed=1, out=out)
    return out, load_questions(out)


def test_every_category_yields_rows_and_validates(
    mm_questions: tuple[Path, list[Question]], cxr_store: Path
) -> None:
    out, qs = mm_questions
    assert (out / MM_FILE).exists()
    assert {q.category for q in qs} == set(CATEGORIES)
    assert all(q.policy == MM_LEAKAGE_POLICY and q.study_ids and q.dicom_ids for q in qs)
    report = validate_benchmark(out, store=cxr_store)
    assert report.ok, report.problems


def _chexpert(con: Any, study_id: int) -> dict[str, Any]:
    row = con.execute("SELECT * FROM cxr.chexpert WHERE study_id = ?", [study_id]).fetchall()[0]
    return dict(zip([d[0] for d in con.description], row, strict=True))


def _positives(labels: dict[str, Any]) -> set[str]:
    return {f for f in CHEXPERT_LABELS if f != "No Finding" and labels[f] == 1.0}


def test_cxr_labels_match_hand_written_sql(
    mm_questions: tuple[Path, list[Question]], cxr_store: Path
) -> None:
    con = open_store(cxr_store).connect()
    try:
        for q in mm_questions[1]:
            if q.category == "cxr_finding_enumeration":
                assert set(q.label) == (_positives(_chexpert(con, q.study_ids[0])) or {"No Finding"})
            elif q.category == "cxr_change_comparison":
                before, after = (_positives(_chexpert(con, s)) for s in q.study_ids)
                assert set(q.label) == ((after - before) or {"none"})
            elif q.category == "mm_mortality":
                death, outtime = con.execute(
                    "SELECT a.deathtime, i.outtime FROM icu.icustays i JOIN hosp.admissions a USING (hadm_id) "
                    "WHERE i.stay_id = ?",
                    [q.stay_id],
                ).fetchall()[0]
                assert q.label == (("yes",) if death is not None and death <= outtime else ("no",))
    finally:
        con.close()


def test_mm_episode_sees_only_linked_studies_and_no_labels(
    mm_questions: tuple[Path, list[Question]], cxr_store: Path
) -> None:
    q = next(q for q in mm_questions[1] if q.category == "cxr_finding_presence")
    with build_episode(cxr_store, episode_key(q)) as ep:
        assert not ep.has_table("cxr.chexpert")
        studies = {r[0] for r in ep.execute("SELECT DISTINCT study_id FROM cxr.metadata").rows}
        assert studies == set(q.study_ids)


def test_mm_curated_context_lists_tables_and_images(
    mm_questions: tuple[Path, list[Question]], cxr_store: Path
) -> None:
    q = next(q for q in mm_questions[1] if q.category == "clinical_deterioration")
    curated = render_curated(q, cxr_store)
    assert curated.source == "rendered"
    assert "<ehr_context>" in curated.text and "### hosp.admissions" in curated.text
    assert f"- {q.image_paths[0]}" in curated.text
    assert "chexpert" not in curated.text
