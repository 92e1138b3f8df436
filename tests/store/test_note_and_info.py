"""MIMIC-IV-Note files given directly (no ``note/`` folder), the progress bar path, and store_info errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.errors import StoreError
from clinseek.store import connect_store, ingest, store_info

_DISCHARGE = (
    "note_id,subject_id,hadm_id,note_type,note_seq,charttime,storetime,text\n"
    '10000032-DS-22,10000032,22841357,DS,22,2180-06-27 00:00:00,2180-07-01 10:15:00,"Name: ___\n\n'
    'Chief Complaint:\nabdominal ""fullness""\n"\n'
    "10000032-DS-21,10000032,22595853,DS,21,2180-05-07 00:00:00,2180-05-09 15:26:00,short note\n"
)
_RADIOLOGY = (
    "note_id,subject_id,hadm_id,note_type,note_seq,charttime,storetime,text\n"
    "10000032-RR-14,10000032,,RR,14,2180-05-06 21:19:00,2180-05-06 23:32:00,EXAMINATION: CHEST (PA AND LAT)\n"
)


@pytest.fixture()
def note_dir(tmp_path: Path) -> Path:
    root = tmp_path / "mimic-iv-note"
    root.mkdir()
    (root / "discharge.csv").write_text(_DISCHARGE)
    (root / "radiology.csv").write_text(_RADIOLOGY)
    return root


def test_note_files_given_directly_with_multiline_text(note_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.duckdb"
    report = ingest(out, note=note_dir, progress=True)  # the progress bar path (worker thread + polling)
    assert report.table("note.discharge").rows == 2
    assert set(report.absent_tables) == {"note.discharge_detail", "note.radiology_detail"}
    con = connect_store(out)
    try:
        ids = con.execute("SELECT note_id FROM note.discharge ORDER BY rowid").fetchall()
        text = con.execute("SELECT text FROM note.discharge WHERE note_seq = 22").fetchall()[0][0]
        hadm = con.execute("SELECT hadm_id FROM note.radiology").fetchall()
    finally:
        con.close()
    assert ids == [("10000032-DS-21",), ("10000032-DS-22",)]  # sorted by charttime within the subject
    assert text == 'Name: ___\n\nChief Complaint:\nabdominal "fullness"\n'
    assert hadm == [(None,)]
    info = store_info(out)
    assert info.modules == ("note",) and info.patients == 1


def test_store_info_refuses_a_file_that_is_not_a_store(tmp_path: Path) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"definitely not duckdb")
    with pytest.raises(StoreError, match="is not a DuckDB database"):
        store_info(junk)
    with pytest.raises(StoreError, match="no such store"):
        store_info(tmp_path / "missing.duckdb")
    plain = tmp_path / "plain.duckdb"
    con = connect_store(plain, read_only=False)
    con.execute("CREATE TABLE t (a INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a clinseek store"):
        store_info(plain)
