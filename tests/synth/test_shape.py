"""The synthetic store has every registry table with the registry's columns and types, like an ingested store."""

from __future__ import annotations

from pathlib import Path

import duckdb

from clinseek.schema import tables
from clinseek.store import connect_store, open_store, stored_instants


def _columns(path: Path) -> dict[str, list[tuple[str, str]]]:
    con = connect_store(path)
    try:
        got = con.execute(
            "SELECT table_schema || '.' || table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema <> 'clinseek_meta' ORDER BY table_schema, table_name, ordinal_position"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, type_ in got:
        out.setdefault(table, []).append((column, type_))
    return out


def test_every_registry_table_has_registry_columns_and_types(synthetic_store: Path) -> None:
    got = _columns(synthetic_store)
    present = set(open_store(synthetic_store).row_counts)
    for t in tables():
        registered = [(c.name, c.type) for c in t.columns]
        columns = got.get(t.qualified, [])
        assert columns[: len(registered)] == registered, t.qualified
        # then the store's own row instants, reserved names only, as an ingested store has them
        instants = stored_instants(t, present)
        expected = [] if instants is None else list(instants.columns)
        assert [c for c, _ in columns[len(registered):]] == expected, t.qualified


def test_every_patient_table_has_rows(synthetic_store: Path) -> None:
    counts = open_store(synthetic_store).row_counts
    assert set(counts) == {t.qualified for t in tables()}
    empty = [name for name, n in counts.items() if n == 0]
    assert not empty, f"empty tables: {empty}"


def test_same_tables_columns_and_types_as_the_ingested_demo(synthetic_store: Path, demo_store: Path) -> None:
    synthetic, demo = _columns(synthetic_store), _columns(demo_store)
    assert set(demo) <= set(synthetic)
    absent = {t.qualified for t in tables()} - set(demo)
    assert absent <= {t.qualified for t in tables() if t.module in ("note", "cxr")} | {"icu.chartevents"}
    for table, cols in demo.items():
        assert synthetic[table] == cols, table


def test_store_info_records_kind_seed_patients_and_cxr_root(synthetic_store: Path) -> None:
    info = open_store(synthetic_store).info
    assert info["kind"] == "synthetic"
    assert (info["seed"], info["patients"]) == ("7", "40")
    assert (synthetic_store.parent / info["cxr_root"]).is_dir()


def test_ids_are_in_mimic_ranges(con: duckdb.DuckDBPyConnection) -> None:
    checks = {
        "SELECT min(subject_id), max(subject_id) FROM hosp.patients": (10_000_000, 19_999_999),
        "SELECT min(hadm_id), max(hadm_id) FROM hosp.admissions": (20_000_000, 29_999_999),
        "SELECT min(stay_id), max(stay_id) FROM icu.icustays": (30_000_000, 39_999_999),
        "SELECT min(stay_id), max(stay_id) FROM ed.edstays": (30_000_000, 39_999_999),
        "SELECT min(study_id), max(study_id) FROM cxr.metadata": (50_000_000, 59_999_999),
        "SELECT min(year(admittime)), max(year(dischtime)) FROM hosp.admissions": (2110, 2210),
    }
    for sql, (lo, hi) in checks.items():
        low, high = con.execute(sql).fetchall()[0]
        assert lo <= low <= high <= hi, sql


def test_admissions_happen_after_the_anchor_year(con: duckdb.DuckDBPyConnection) -> None:
    bad = con.execute(
        "SELECT count(*) FROM hosp.admissions a JOIN hosp.patients p USING (subject_id) WHERE year(a.admittime) < p.anchor_year"
    ).fetchall()[0][0]
    assert bad == 0


def test_dictionaries_come_from_packages_with_real_mimic_items(con: duckdb.DuckDBPyConnection) -> None:
    assert con.execute("SELECT label, fluid FROM hosp.d_labitems WHERE itemid = 50971").fetchall() == [("Potassium", "Blood")]
    assert con.execute("SELECT label, linksto FROM icu.d_items WHERE itemid = 220045").fetchall() == [("Heart Rate", "chartevents")]
    versions = dict(con.execute("SELECT icd_version, count(*) FROM hosp.d_icd_diagnoses GROUP BY ALL").fetchall())
    assert versions[9] > 14_000 and versions[10] > 70_000
    assert con.execute(
        "SELECT long_title FROM hosp.d_icd_diagnoses WHERE icd_code = '4280' AND icd_version = 9"
    ).fetchall() == [("Congestive heart failure, unspecified",)]
    assert con.execute("SELECT count(*) FROM hosp.d_icd_procedures WHERE icd_code = '5A1955Z'").fetchall()[0][0] == 1


def test_potassium_has_its_unit_and_reference_range(con: duckdb.DuckDBPyConnection) -> None:
    got = con.execute(
        "SELECT DISTINCT valueuom, ref_range_lower, ref_range_upper FROM hosp.labevents WHERE itemid = 50971"
    ).fetchall()
    assert got == [("mEq/L", 3.3, 5.1)]


def test_every_generated_code_and_item_is_in_its_dictionary(con: duckdb.DuckDBPyConnection) -> None:
    missing = {
        "diagnoses": "SELECT count(*) FROM hosp.diagnoses_icd x ANTI JOIN hosp.d_icd_diagnoses d USING (icd_code, icd_version)",
        "procedures": "SELECT count(*) FROM hosp.procedures_icd x ANTI JOIN hosp.d_icd_procedures d USING (icd_code, icd_version)",
        "ed diagnoses": "SELECT count(*) FROM ed.diagnosis x ANTI JOIN hosp.d_icd_diagnoses d USING (icd_code, icd_version)",
        "labs": "SELECT count(*) FROM hosp.labevents x ANTI JOIN hosp.d_labitems d USING (itemid)",
        "hcpcs": "SELECT count(*) FROM hosp.hcpcsevents x ANTI JOIN hosp.d_hcpcs d ON d.code = x.hcpcs_cd",
        "providers": "SELECT count(*) FROM hosp.labevents x ANTI JOIN hosp.provider p ON p.provider_id = x.order_provider_id",
        "caregivers": "SELECT count(*) FROM icu.chartevents x ANTI JOIN icu.caregiver c USING (caregiver_id)",
    }
    for table in ("chartevents", "datetimeevents", "inputevents", "ingredientevents", "outputevents", "procedureevents"):
        missing[table] = f"SELECT count(*) FROM icu.{table} x ANTI JOIN icu.d_items d USING (itemid)"
    bad = {name: con.execute(sql).fetchall()[0][0] for name, sql in missing.items()}
    assert not any(bad.values()), bad
    titled = con.execute("SELECT count(*) FROM ed.diagnosis WHERE icd_title IS NULL").fetchall()[0][0]
    assert titled == 0


def test_keys_are_unique(con: duckdb.DuckDBPyConnection) -> None:
    for table, key in (("hosp.admissions", "hadm_id"), ("icu.icustays", "stay_id"), ("ed.edstays", "stay_id"),
                       ("hosp.transfers", "transfer_id"), ("hosp.poe", "poe_id"), ("hosp.emar", "emar_id"),
                       ("hosp.labevents", "labevent_id"), ("cxr.metadata", "dicom_id"), ("note.discharge", "note_id"),
                       ("note.radiology", "note_id"), ("hosp.pharmacy", "pharmacy_id")):
        total, distinct = con.execute(f"SELECT count(*), count(DISTINCT {key}) FROM {table}").fetchall()[0]
        assert total == distinct, table
