"""MIMIC-CXR: metadata/label CSVs and report text from ``files/`` or ``mimic-cxr-reports.zip`` (tiny fixtures)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from clinseek.schema import CHEXPERT_LABELS
from clinseek.store import connect_store, ingest

_REPORTS = {
    (10000032, 50414267): "FINDINGS: No focal consolidation.\nIMPRESSION: No acute process.\n",
    (10000032, 53189527): "IMPRESSION: Small left pleural effusion.\n",
    (10000764, 57375967): "FINDINGS: Cardiomegaly.\n",
}


def _write_cxr(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "mimic-cxr-2.0.0-metadata.csv").write_text(
        "dicom_id,subject_id,study_id,PerformedProcedureStepDescription,ViewPosition,Rows,Columns,StudyDate,"
        "StudyTime,ProcedureCodeSequence_CodeMeaning,ViewCodeSequence_CodeMeaning,"
        "PatientOrientationCodeSequence_CodeMeaning\n"
        "d3,10000764,57375967,CHEST (PA AND LAT),PA,3056,2544,21321015,101512.375,CHEST (PA AND LAT),"
        "postero-anterior,Erect\n"
        "d1,10000032,50414267,CHEST (PA AND LAT),PA,3056,2544,21800506,213014.531,CHEST (PA AND LAT),"
        "postero-anterior,Erect\n"
        "d2,10000032,53189527,CHEST (PORTABLE AP),AP,2539,3050,21800626,165500.312,CHEST (PORTABLE AP),"
        "antero-posterior,\n"
    )
    values = ["1.0" if label == "Pleural Effusion" else "" for label in CHEXPERT_LABELS]
    (root / "mimic-cxr-2.0.0-chexpert.csv").write_text(
        f"subject_id,study_id,{','.join(CHEXPERT_LABELS)}\n10000032,50414267,{','.join(values)}\n"
    )
    return root


def _write_report_files(root: Path) -> None:
    for (subject_id, study_id), text in _REPORTS.items():
        folder = root / "files" / f"p{str(subject_id)[:2]}" / f"p{subject_id}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"s{study_id}.txt").write_text(text)


def _stored(out: Path, sql: str) -> list[tuple[object, ...]]:
    con = connect_store(out)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_cxr_csvs_and_report_files(tmp_path: Path) -> None:
    root = _write_cxr(tmp_path / "cxr")
    _write_report_files(root)
    out = tmp_path / "s.duckdb"
    report = ingest(out, cxr=root, progress=False)
    assert report.table("cxr.metadata").rows == 3
    assert report.table("cxr.reports").rows == 3
    assert set(report.absent_tables) == {"cxr.negbio", "cxr.split"}
    rows = _stored(out, "SELECT subject_id, study_id, text FROM cxr.reports ORDER BY rowid")
    assert [(s, st) for s, st, _ in rows] == sorted(_REPORTS)  # sorted by subject then study
    assert {(s, st): t for s, st, t in rows} == _REPORTS
    first = _stored(out, "SELECT subject_id FROM cxr.metadata ORDER BY rowid LIMIT 1")
    assert first == [(10000032,)]
    chexpert = _stored(out, 'SELECT "Pleural Effusion", "No Finding" FROM cxr.chexpert')
    assert chexpert == [(1.0, None)]


def test_cxr_reports_from_zip(tmp_path: Path) -> None:
    root = _write_cxr(tmp_path / "cxr")
    with zipfile.ZipFile(root / "mimic-cxr-reports.zip", "w") as zf:
        for (subject_id, study_id), text in _REPORTS.items():
            zf.writestr(f"files/p{str(subject_id)[:2]}/p{subject_id}/s{study_id}.txt", text)
        zf.writestr("files/README", "not a report")
    out = tmp_path / "s.duckdb"
    report = ingest(out, cxr=root, progress=False)
    assert report.table("cxr.reports").rows == 3
    assert report.table("cxr.reports").source_file.endswith("mimic-cxr-reports.zip")
    assert _stored(out, "SELECT count(*) FROM cxr.reports WHERE text LIKE '%IMPRESSION%'") == [(2,)]


def test_cxr_without_reports_is_an_absent_optional_table(tmp_path: Path) -> None:
    root = _write_cxr(tmp_path / "cxr")
    report = ingest(tmp_path / "s.duckdb", cxr=root, progress=False)
    assert "cxr.reports" in report.absent_tables


def test_corrupt_report_zip_is_a_clear_error(tmp_path: Path) -> None:
    from clinseek.errors import IngestError

    root = _write_cxr(tmp_path / "cxr")
    (root / "mimic-cxr-reports.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(IngestError, match="report archive") as info:
        ingest(tmp_path / "s.duckdb", cxr=root, progress=False)
    assert info.value.path == root / "mimic-cxr-reports.zip"
