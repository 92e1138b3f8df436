"""Building a store never overwrites someone else's file: ingest and synth refuse what they did not build."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import StoreError
from clinseek.store import ingest, synthesize
from clinseek.store._existing import existing_file


def _user_duckdb(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA hosp")
    con.execute("CREATE TABLE hosp.patients AS SELECT 42 AS subject_id")
    con.close()
    return path


def _patients(path: Path) -> list[tuple[int]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT subject_id FROM hosp.patients").fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def synth_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthesize(tmp_path_factory.mktemp("guard") / "syn.duckdb", patients=2, seed=3).path


def test_existing_file_kinds(tmp_path: Path, synth_store: Path) -> None:
    assert existing_file(tmp_path / "none.duckdb").kind == "absent"
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    assert existing_file(empty).kind == "empty"
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    assert existing_file(text).kind == "other"
    user = existing_file(_user_duckdb(tmp_path / "mine.duckdb"))
    assert user.kind == "other" and "hosp.patients" in user.what
    found = existing_file(synth_store)
    assert found.kind == "synthetic" and found.cxr_root == "syn_cxr"


def test_ingest_refuses_a_users_duckdb_file(tmp_path: Path, mimic_dir: Path) -> None:
    mine = _user_duckdb(tmp_path / "f2.duckdb")
    with pytest.raises(StoreError, match=r"f2\.duckdb: is a DuckDB file that is not a clinseek store \(holds hosp\.patients\)"):
        ingest(mine, mimic_iv=mimic_dir, progress=False)
    assert _patients(mine) == [(42,)]


def test_ingest_refuses_a_text_file_and_a_synthetic_store(tmp_path: Path, mimic_dir: Path, synth_store: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    with pytest.raises(StoreError, match="a file DuckDB cannot open"):
        ingest(text, mimic_iv=mimic_dir, progress=False)
    assert text.read_text() == "my notes\n"
    with pytest.raises(StoreError, match="clinseek synthetic store"):
        ingest(synth_store, mimic_iv=mimic_dir, progress=False)


def test_ingest_cli_refusal_is_one_line(tmp_path: Path, mimic_dir: Path) -> None:
    mine = _user_duckdb(tmp_path / "f2.duckdb")
    result = CliRunner().invoke(app, ["data", "ingest", "--mimic-iv", str(mimic_dir), "--out", str(mine), "--no-progress"])
    assert result.exit_code != 0
    assert isinstance(result.exception, StoreError) and "give a new --out file" in str(result.exception)
    assert _patients(mine) == [(42,)]


def test_synth_refuses_a_text_file(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    with pytest.raises(StoreError, match="synthesize replaces only a synthetic store"):
        synthesize(text, patients=1, seed=7)
    assert text.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_synth_refuses_an_ingest_store_and_a_users_duckdb(tmp_path: Path, demo_store: Path) -> None:
    mine = _user_duckdb(tmp_path / "mine.duckdb")
    with pytest.raises(StoreError, match="not a clinseek store"):
        synthesize(mine, patients=1, seed=7)
    assert _patients(mine) == [(42,)]
    before = demo_store.stat().st_mtime_ns
    with pytest.raises(StoreError, match="clinseek ingest store"):
        synthesize(demo_store, patients=1, seed=7)
    assert demo_store.stat().st_mtime_ns == before


def test_synth_refuses_a_foreign_image_folder(tmp_path: Path) -> None:
    folder = tmp_path / "s_cxr"
    folder.mkdir()
    (folder / "keep.jpg").write_bytes(b"x")
    with pytest.raises(StoreError, match="s_cxr: exists and is not the image folder"):
        synthesize(tmp_path / "s.duckdb", patients=1, seed=7)
    assert (folder / "keep.jpg").exists()


def test_synth_replaces_a_synthetic_store(tmp_path: Path) -> None:
    out = tmp_path / "s.duckdb"
    synthesize(out, patients=1, seed=7)
    report = synthesize(out, patients=2, seed=7)
    assert report.patients == 2 and report.cxr_root.is_dir()


def test_synth_keeps_a_users_file_in_its_own_image_folder(tmp_path: Path) -> None:
    out = tmp_path / "s.duckdb"
    report = synthesize(out, patients=1, seed=7)
    mine = report.cxr_root / "mine.txt"
    mine.write_text("notes")
    with pytest.raises(StoreError, match=r"holds mine\.txt, which synthesize did not write"):
        synthesize(out, patients=2, seed=7)
    assert mine.read_text() == "notes"
