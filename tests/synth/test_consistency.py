"""Whole-store consistency of synthetic stores, and that the checks do catch broken data."""

from __future__ import annotations

import shutil
from pathlib import Path

from clinseek.store import check_consistency, connect_store


def test_small_store_is_consistent(synthetic_store: Path) -> None:
    assert check_consistency(synthetic_store) == []


def test_medium_store_is_consistent(medium_store: Path) -> None:
    assert check_consistency(medium_store) == []


def test_checks_catch_a_broken_store(synthetic_store: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.duckdb"
    shutil.copy(synthetic_store, broken)
    con = connect_store(broken, read_only=False)
    try:
        con.execute("UPDATE icu.icustays SET los = los + 1")
        con.execute("UPDATE hosp.admissions SET hospital_expire_flag = 1 WHERE deathtime IS NULL")
        con.execute("DELETE FROM hosp.admissions WHERE hadm_id = (SELECT min(hadm_id) FROM hosp.admissions)")
        con.execute("UPDATE cxr.chexpert SET study_id = study_id + 1")
    finally:
        con.close()
    problems = "\n".join(check_consistency(broken))
    assert "los differs" in problems
    assert "without a deathtime" in problems
    assert "hadm_id without an admission" in problems
    assert "metadata and chexpert" in problems
