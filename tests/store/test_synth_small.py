"""``synthesize`` works for any patient count >= 1 and any seed (a few patients may have no infusion or no CXR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.store import open_store, synthesize


@pytest.mark.parametrize(("patients", "seed"), [(1, 7), (3, 7), (5, 7), (1, 42), (2, 0)])
def test_small_stores_build(tmp_path: Path, patients: int, seed: int) -> None:
    # seed 7 with 1-5 patients had no rate infusion (KeyError 'link'); seed 42 with 1 patient has no CXR study
    out = tmp_path / "s.duckdb"
    report = synthesize(out, patients=patients, seed=seed)
    assert report.patients == patients
    assert report.cxr_root.is_dir()
    store = open_store(out)
    assert store.info["kind"] == "synthetic"
    con = store.connect()
    try:
        assert con.execute("SELECT count(*) FROM hosp.patients").fetchall()[0][0] == patients
    finally:
        con.close()
    assert not list(tmp_path.glob("*.partial*"))
