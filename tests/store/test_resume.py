"""Resumable ingest: finished tables are skipped, a failed table is redone, a changed source is refused."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from clinseek.errors import IngestError, StoreError
from clinseek.store import StoreLimits, connect_store, ingest

Replace = Callable[[Path, str, str, bytes], Path]


def test_rerun_on_a_complete_store_skips_every_table(
    demo_store: Path, shared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "demo.duckdb"
    shutil.copyfile(demo_store, out)
    report = ingest(
        out,
        mimic_iv=shared_data / "mimic-iv-demo-2.2",
        ed=shared_data / "mimic-iv-ed-demo-2.2",
        progress=False,
    )
    assert report.ingested == ()
    assert len(report.skipped) == 36
    assert report.absent_tables == ("icu.chartevents",)
    assert report.table("hosp.labevents").rows == 107_727
    assert report.table("hosp.labevents").seconds == 0.0


def test_failed_table_is_redone_and_finished_ones_are_not(
    mimic_dir: Path, tmp_path: Path, replace: Replace
) -> None:
    good = (mimic_dir / "hosp" / "labevents.csv.gz").resolve()
    replace(mimic_dir, "hosp/labevents", ".csv", b"labevent_id,subject_id\n")  # header only: missing columns
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError):
        ingest(out, mimic_iv=mimic_dir, progress=False)
    assert not out.exists()  # header problems are found before the store is created

    whole = good.read_bytes()
    replace(mimic_dir, "hosp/labevents", ".csv.gz", whole[: len(whole) // 3])  # fails while loading
    with pytest.raises(IngestError, match="truncated"):
        ingest(out, mimic_iv=mimic_dir, progress=False)

    (mimic_dir / "hosp" / "labevents.csv.gz").unlink()
    (mimic_dir / "hosp" / "labevents.csv.gz").symlink_to(good)
    report = ingest(out, mimic_iv=mimic_dir, progress=False)
    # tables before labevents (registry order) were finished by the failed run; the rest are done now
    assert report.ingested[0] == "hosp.labevents"
    assert report.skipped == ("hosp.patients", "hosp.admissions", "hosp.transfers", "hosp.diagnoses_icd")
    assert report.table("hosp.labevents").rows == 107_727


def test_a_changed_source_file_is_refused(mimic_dir: Path, tmp_path: Path, replace: Replace) -> None:
    out = tmp_path / "s.duckdb"
    ingest(out, mimic_iv=mimic_dir, progress=False)
    replace(mimic_dir, "hosp/d_labitems", ".csv", b"itemid,label,fluid,category\n1,a,b,c\n")
    with pytest.raises(StoreError, match=r"hosp\.d_labitems in this store was built from"):
        ingest(out, mimic_iv=mimic_dir, progress=False)


def test_a_synthetic_store_is_not_extended(mimic_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.duckdb"
    con = connect_store(out, read_only=False)
    con.execute("CREATE SCHEMA clinseek_meta")
    con.execute("CREATE TABLE clinseek_meta.store_info (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT INTO clinseek_meta.store_info VALUES ('kind', 'synthetic')")
    con.close()
    with pytest.raises(StoreError, match="synthetic store"):
        ingest(out, mimic_iv=mimic_dir, progress=False)


def test_a_build_connection_keeps_freed_blocks_up_to_its_memory_limit(tmp_path: Path) -> None:
    con = connect_store(tmp_path / "s.duckdb", read_only=False, limits=StoreLimits(memory_limit="300MB"))
    try:
        ((limit, kept),) = con.execute(
            "SELECT current_setting('memory_limit'), current_setting('block_allocator_memory')"
        ).fetchall()
    finally:
        con.close()
    assert limit == "286.1 MiB"
    assert kept.endswith(" MiB") and abs(float(kept.split()[0]) - 286.1) < 1  # DuckDB rounds it to its block size


@pytest.mark.parametrize("read_only", [True, False])
def test_a_file_of_another_format_is_refused_before_duckdb_opens_it(tmp_path: Path, read_only: bool) -> None:
    import sqlite3

    lite = tmp_path / "lite.duckdb"
    con = sqlite3.connect(lite)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    with pytest.raises(StoreError, match="is a SQLite database; a clinseek store is a DuckDB file"):
        connect_store(lite, read_only=read_only)  # DuckDB would try to download sqlite_scanner
    with pytest.raises(StoreError, match="is not a DuckDB database"):
        connect_store(text, read_only=read_only)
    assert text.read_text() == "my notes\n"


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (StoreLimits(memory_limit="1KB"), "too small"),
        (StoreLimits(memory_limit="bogus"), "expected a size"),
        (StoreLimits(memory_limit="-1GB"), "positive size"),
        (StoreLimits(threads=-1), "threads -1"),
    ],
)
def test_build_limits_are_checked_before_a_file_is_made(tmp_path: Path, limits: StoreLimits, message: str) -> None:
    out = tmp_path / "s.duckdb"
    with pytest.raises(StoreError, match=message):
        connect_store(out, read_only=False, limits=limits)
    assert not out.exists()
