"""Bad inputs: each a specific IngestError naming file, column and line, and nothing half-written."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from clinseek.errors import IngestError
from clinseek.store import connect_store, ingest

Replace = Callable[[Path, str, str, bytes], Path]

_LAB_HEADER = (
    "labevent_id,subject_id,hadm_id,specimen_id,itemid,order_provider_id,charttime,storetime,value,valuenum,"
    "valueuom,ref_range_lower,ref_range_upper,flag,priority,comments\n"
)


def _lab_row(i: int, valuenum: str = "1.5", comments: str = "") -> str:
    return f"{i},10000032,,{i},50912,,2180-05-06 22:25:00,2180-05-06 23:00:00,1.5,{valuenum},mg/dL,0.5,1.2,,ROUTINE,{comments}\n"


def _store_tables(out: Path) -> tuple[set[str], set[str]]:
    """(tables in the store's module schemas, tables recorded as complete)."""
    con = connect_store(out)
    try:
        present = {
            f"{s}.{t}"
            for s, t in con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name <> 'clinseek_meta'"
            ).fetchall()
        }
        recorded = {r[0] for r in con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()}
    finally:
        con.close()
    return present, recorded


def test_truncated_gzip_names_the_file_and_leaves_no_table(
    mimic_dir: Path, tmp_path: Path, replace: Replace
) -> None:
    whole = (mimic_dir / "hosp" / "labevents.csv.gz").read_bytes()
    broken = replace(mimic_dir, "hosp/labevents", ".csv.gz", whole[: len(whole) // 2])
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError, match="truncated") as info:
        ingest(out, mimic_iv=mimic_dir, progress=False)
    assert info.value.path == broken
    present, recorded = _store_tables(out)
    assert "hosp.labevents" not in present and "hosp.labevents" not in recorded
    assert not any("staging" in name for name in present)
    assert present == recorded  # every table left in the store is complete


def test_missing_column_fails_before_anything_is_written(
    mimic_dir: Path, tmp_path: Path, replace: Replace
) -> None:
    bad = replace(
        mimic_dir,
        "hosp/patients",
        ".csv",
        b"subject_id,anchor_age,anchor_year,anchor_year_group,dod\n1,50,2150,x,\n",
    )
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError, match="missing column") as info:
        ingest(out, mimic_iv=mimic_dir, progress=False)
    assert (info.value.path, info.value.column, info.value.line) == (bad, "gender", 1)
    assert not out.exists()


def test_renamed_column_is_a_missing_column(mimic_dir: Path, tmp_path: Path, replace: Replace) -> None:
    replace(
        mimic_dir,
        "hosp/patients",
        ".csv",
        b"subject_id,gender,age,anchor_year,anchor_year_group,dod\n1,F,50,2150,x,\n",
    )
    with pytest.raises(IngestError) as info:
        ingest(tmp_path / "s.duckdb", mimic_iv=mimic_dir, progress=False)
    assert info.value.column == "anchor_age"
    assert "age" in info.value.problem  # the header is quoted so the rename is visible


def test_unparsable_value_names_column_and_physical_line(
    mimic_dir: Path, tmp_path: Path, replace: Replace
) -> None:
    # line 1 header, lines 2-4 one row whose quoted comment spans three lines, line 5 fine, line 6 bad
    text = _LAB_HEADER + _lab_row(1, comments='"first\nsecond\nthird"') + _lab_row(2) + _lab_row(3, "abc")
    bad = replace(mimic_dir, "hosp/labevents", ".csv", text.encode())
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError) as info:
        ingest(out, mimic_iv=mimic_dir, progress=False)
    err = info.value
    assert (err.path, err.column, err.line) == (bad, "valuenum", 6)
    assert "abc" in err.problem and "DOUBLE" in err.problem
    assert str(err).startswith(f"{bad}:6: column 'valuenum'")
    present, recorded = _store_tables(out)
    assert "hosp.labevents" not in present and present == recorded


def test_unparsable_value_in_gzip_file(mimic_dir: Path, tmp_path: Path, replace: Replace) -> None:
    text = _LAB_HEADER + _lab_row(1) + _lab_row(2).replace("10000032", "ten")
    bad = replace(mimic_dir, "hosp/labevents", ".csv.gz", gzip.compress(text.encode()))
    with pytest.raises(IngestError) as info:
        ingest(tmp_path / "s.duckdb", mimic_iv=mimic_dir, progress=False)
    assert (info.value.path, info.value.column, info.value.line) == (bad, "subject_id", 3)


def test_row_with_too_few_fields_names_its_line(mimic_dir: Path, tmp_path: Path, replace: Replace) -> None:
    text = _LAB_HEADER + _lab_row(1) + "2,10000032,,2\n"
    bad = replace(mimic_dir, "hosp/labevents", ".csv", text.encode())
    with pytest.raises(IngestError, match="missing columns") as info:
        ingest(tmp_path / "s.duckdb", mimic_iv=mimic_dir, progress=False)
    assert (info.value.path, info.value.line) == (bad, 3)


def test_directory_without_mimic_files_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "downloads"
    empty.mkdir()
    (empty / "notes.txt").write_text("not MIMIC")
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError, match="no hosp/icu files found") as info:
        ingest(out, mimic_iv=empty, progress=False)
    assert info.value.path == empty
    assert "hosp/patients.csv.gz" in str(info.value)
    assert not out.exists()


def test_missing_required_table_is_named(mimic_dir: Path, tmp_path: Path, replace: Replace) -> None:
    (mimic_dir / "hosp" / "admissions.csv.gz").unlink()
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError, match=r"required table file\(s\) missing: hosp\.admissions"):
        ingest(out, mimic_iv=mimic_dir, progress=False)
    assert not out.exists()


def test_no_source_at_all_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="nothing to ingest"):
        ingest(tmp_path / "s.duckdb", progress=False)


def test_not_a_gzip_file(mimic_dir: Path, tmp_path: Path, replace: Replace) -> None:
    bad = replace(mimic_dir, "hosp/d_labitems", ".csv.gz", b"itemid,label,fluid,category\n1,a,b,c\n")
    with pytest.raises(IngestError, match="gzip") as info:
        ingest(tmp_path / "s.duckdb", mimic_iv=mimic_dir, progress=False)
    assert info.value.path == bad


@pytest.mark.parametrize("module", ["hosp", "icu"])
def test_a_module_folder_given_for_its_release_names_the_parent(mimic_dir: Path, tmp_path: Path, module: str) -> None:
    """fixnc21: --mimic-iv .../hosp listed the icu tables as missing (under hosp/icu/) instead of naming the parent."""
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError) as info:
        ingest(out, mimic_iv=mimic_dir / module, progress=False)
    assert str(info.value) == (f"{mimic_dir / module}: looks like the {module}/ folder of MIMIC-IV; "
                               f"give its parent ({mimic_dir})")
    assert not out.exists()


def test_a_folder_of_another_release_keeps_the_plain_message(shared_data: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"no ed files found .*; is this the right directory for --ed\?"):
        ingest(tmp_path / "s.duckdb", ed=shared_data / "mimic-iv-demo-2.2" / "hosp", progress=False)
