"""``ingest --postgres``: a mimic-code PostgreSQL build of the open demo gives the store CSV ingest gives."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinseek.errors import StoreError
from clinseek.store import (
    EVENT_INDEX,
    EVENT_INDEX_VERSION,
    event_index_layout,
    ingest,
    open_store,
    redact_url,
)
from pgserver import READER_PASSWORD, PgDatabase, store_columns, store_hashes, trim

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def pg_store(pg_demo: PgDatabase, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("pg_ingest") / "demo_pg.duckdb"
    report = ingest(out, postgres=pg_demo.reader_url, progress=False)
    return out, report


def test_ingest_from_postgres_gives_the_same_store_as_csv_ingest(pg_store: tuple[Path, object], demo_store: Path) -> None:
    out, _ = pg_store
    assert store_columns(out) == store_columns(demo_store)  # every table, column and type
    from_pg, from_csv = store_hashes(out), store_hashes(demo_store)
    assert from_pg.keys() == from_csv.keys()
    for name, (rows, digest) in from_csv.items():
        assert from_pg[name] == (rows, digest), name  # row counts and content hashes, table by table
    assert open_store(out).row_counts == open_store(demo_store).row_counts


def test_the_store_from_postgres_has_the_event_index_of_csv_ingest(pg_store: tuple[Path, object],
                                                                    demo_store: Path) -> None:
    """The same index layout and rows, microbiology's intervals of the collapse included."""
    out, _ = pg_store
    rows = f"SELECT CAST(table_name AS VARCHAR), * EXCLUDE (table_name) FROM {EVENT_INDEX} ORDER BY ALL"
    with duckdb.connect(str(out), read_only=True) as pg, duckdb.connect(str(demo_store), read_only=True) as csv:
        assert event_index_layout(pg) == event_index_layout(csv) == EVENT_INDEX_VERSION
        assert pg.execute(rows).fetchall() == csv.execute(rows).fetchall()
        assert pg.execute(f"SELECT count(*) FROM {EVENT_INDEX} WHERE table_name = 'hosp.microbiologyevents'").fetchall()[0][0]


def test_the_report_and_provenance_name_the_database_never_its_password(pg_store: tuple[Path, object],
                                                                        pg_demo: PgDatabase) -> None:
    out, report = pg_store
    assert report.absent_tables == ("icu.chartevents",)  # type: ignore[attr-defined]
    assert report.absent_modules == ("note", "cxr")  # type: ignore[attr-defined]
    assert [t.status for t in report.tables] == ["ingested"] * 36  # type: ignore[attr-defined]
    info = open_store(out).info
    url = pg_demo.reader_url.replace(f":{READER_PASSWORD}", "")
    assert info["source.postgres"] == url
    assert info["source.postgres.role"] == "clinseek_reader"
    assert info["source.postgres.schemas"] == "hosp=mimiciv_hosp,icu=mimiciv_icu,ed=mimiciv_ed"
    con = duckdb.connect(str(out), read_only=True)
    rows = con.execute("SELECT table_name, source_file, source_sha256 FROM clinseek_meta.table_info").fetchall()
    con.close()
    for name, source, sha in rows:
        module, table = name.split(".")
        assert source == f"{url}#mimiciv_{module}.{table}"
        assert len(sha) == 64
    assert READER_PASSWORD.encode() not in out.read_bytes()


def test_a_mimic_code_build_with_partitioned_chartevents_note_and_cxr(pg_synthetic: PgDatabase, synthetic_store: Path,
                                                                       tmp_path: Path) -> None:
    with psycopg.connect(pg_synthetic.admin_url) as con:
        kind = con.execute("SELECT relkind FROM pg_class WHERE oid = 'mimiciv_icu.chartevents'::regclass").fetchone()
        parts = con.execute("SELECT count(*) FROM pg_inherits WHERE inhparent = 'mimiciv_icu.chartevents'::regclass").fetchone()
    assert kind == ("p",) and parts is not None and parts[0] > 1
    report = ingest(tmp_path / "s.duckdb", postgres=pg_synthetic.reader_url, progress=False)
    assert report.absent_tables == () and report.absent_modules == ()
    # the synthetic store may hold '' where ingest stores NULL; everything else is the same
    assert store_hashes(tmp_path / "s.duckdb") == store_hashes(synthetic_store, blank_is_null=True)
    assert store_columns(tmp_path / "s.duckdb") == store_columns(synthetic_store)


def test_char_codes_lose_their_trailing_spaces_in_a_mimic_code_build(pg_scratch: PgDatabase, demo_store: Path,
                                                                      tmp_path: Path) -> None:
    """mimic-code types d_hcpcs.code CHAR(5): PostgreSQL drops the padding the release gives 2-letter codes."""
    trim(pg_scratch.admin_url, keep={"hosp.d_hcpcs"})
    with psycopg.connect(pg_scratch.admin_url, autocommit=True) as con:
        con.execute("ALTER TABLE mimiciv_hosp.d_hcpcs ALTER COLUMN code TYPE CHAR(5)")
    ingest(tmp_path / "s.duckdb", postgres=pg_scratch.reader_url, progress=False)
    con = duckdb.connect()
    con.execute(f"ATTACH '{tmp_path / 's.duckdb'}' AS pg (READ_ONLY); ATTACH '{demo_store}' AS csv (READ_ONLY)")
    padded = con.execute("SELECT count(*) FROM csv.hosp.d_hcpcs WHERE code LIKE '% '").fetchall()
    changed = con.execute("SELECT count(*) FROM (SELECT * FROM csv.hosp.d_hcpcs EXCEPT ALL SELECT * FROM pg.hosp.d_hcpcs)").fetchall()
    same_after_rstrip = con.execute(
        "SELECT count(*) FROM (SELECT rtrim(code), category, long_description, short_description FROM csv.hosp.d_hcpcs "
        "EXCEPT ALL SELECT code, category, long_description, short_description FROM pg.hosp.d_hcpcs)").fetchall()
    con.close()
    assert padded == [(360,)] and changed == [(360,)] and same_after_rstrip == [(0,)]


def test_modules_given_as_files_are_not_read_from_the_database(pg_scratch: PgDatabase, shared_data: Path,
                                                               tmp_path: Path) -> None:
    trim(pg_scratch.admin_url)
    report = ingest(tmp_path / "s.duckdb", ed=shared_data / "mimic-iv-ed-demo-2.2", postgres=pg_scratch.reader_url,
                    progress=False)
    sources = {t.table: t.source_file for t in report.tables}
    assert sources["ed.edstays"].endswith("edstays.csv.gz")
    assert sources["hosp.labevents"].endswith("#mimiciv_hosp.labevents")
    assert report.table("hosp.labevents").rows == 0 and report.table("hosp.patients").rows == 100  # an empty relation
    assert report.absent_modules == ("note", "cxr")
    info = open_store(tmp_path / "s.duckdb").info
    assert info["source.postgres.schemas"] == "hosp=mimiciv_hosp,icu=mimiciv_icu" and "source.ed" in info


def test_resume_skips_done_tables_and_refuses_a_relation_that_changed(pg_scratch: PgDatabase, tmp_path: Path) -> None:
    trim(pg_scratch.admin_url, keep={"hosp.omr"})
    out = tmp_path / "s.duckdb"
    first = ingest(out, postgres=pg_scratch.reader_url, progress=False)
    again = ingest(out, postgres=pg_scratch.reader_url, progress=False)
    assert again.ingested == () and again.skipped == first.ingested
    with psycopg.connect(pg_scratch.admin_url, autocommit=True) as con:
        con.execute("DELETE FROM mimiciv_hosp.omr WHERE ctid IN (SELECT ctid FROM mimiciv_hosp.omr LIMIT 1)")
    with pytest.raises(StoreError, match=r"hosp\.omr in this store holds 2,964 rows, but postgresql://.*#mimiciv_hosp\.omr "
                                         r"has 2,963 now; ingest into a new --out file"):
        ingest(out, postgres=pg_scratch.reader_url, progress=False)


def test_urls_are_recorded_and_shown_without_password() -> None:
    assert redact_url("postgresql://u:p%40ss@h:5432/db?sslmode=require&password=x") == "postgresql://u@h:5432/db?sslmode=require"
    assert redact_url("postgres://u@h/db") == "postgres://u@h/db"
    assert redact_url("postgresql://[bad:secret@x") == "postgresql://[bad@x"
