"""The same seed gives byte-identical table contents and images; another seed gives other data."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clinseek.schema import tables
from clinseek.store import connect_store, synthesize


@functools.cache
def _table_hashes(path: Path) -> dict[str, str]:
    """md5 of each table's sorted rows (once per store file: the twins are built once and never changed)."""
    con = connect_store(path)
    try:
        out = {}
        for t in tables():
            got = con.execute(
                f"SELECT md5(coalesce(string_agg(r, chr(10) ORDER BY r), '')) FROM (SELECT CAST(x AS VARCHAR) AS r FROM {t.qualified} x)"
            ).fetchall()
            out[t.qualified] = got[0][0]
        return out
    finally:
        con.close()


def _image_hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.*"))}


def _synthesize_in_subprocess(out: Path, patients: int, seed: int, hash_seed: str) -> None:
    """Build in a fresh interpreter with its own string-hash seed (set iteration order differs)."""
    code = "import sys; from pathlib import Path; from clinseek.store import synthesize; " \
           "synthesize(Path(sys.argv[1]), patients=int(sys.argv[2]), seed=int(sys.argv[3]))"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run([sys.executable, "-c", code, str(out), str(patients), str(seed)], check=True, env=env)


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("twins")
    a, b, c = base / "a.duckdb", base / "b.duckdb", base / "c.duckdb"
    _synthesize_in_subprocess(a, 60, 3, hash_seed="1")
    _synthesize_in_subprocess(b, 60, 3, hash_seed="2")
    synthesize(c, patients=60, seed=4)
    return a, b, c


def test_same_seed_gives_identical_tables(twins: tuple[Path, Path, Path]) -> None:
    a, b, _ = twins
    assert _table_hashes(a) == _table_hashes(b)


def test_same_seed_gives_identical_images(twins: tuple[Path, Path, Path]) -> None:
    a, b, _ = twins
    images = _image_hashes(a.parent / "a_cxr")
    assert images and images == _image_hashes(b.parent / "b_cxr")


def test_another_seed_gives_other_patient_tables(twins: tuple[Path, Path, Path]) -> None:
    a, _, c = twins
    ha, hc = _table_hashes(a), _table_hashes(c)
    for name in ("hosp.patients", "hosp.admissions", "hosp.labevents", "icu.chartevents", "cxr.metadata"):
        assert ha[name] != hc[name], name
    assert ha["hosp.d_icd_diagnoses"] == hc["hosp.d_icd_diagnoses"]


def test_rebuilding_replaces_the_store_and_leaves_no_partial_files(twins: tuple[Path, Path, Path]) -> None:
    a, _, _ = twins
    leftovers = [p.name for p in a.parent.iterdir() if "partial" in p.name or p.suffix == ".wal"]
    assert leftovers == []
