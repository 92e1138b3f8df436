"""A bad PostgreSQL source gets one clear error each (the server, the relation, the column, what was expected),
never the password; checks that fail before the first table write nothing."""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

import pytest

from clinseek.errors import IngestError, StoreError
from clinseek.store import ingest, open_store
from pgserver import READER, READER_PASSWORD, PgDatabase, PgServer, trim

psycopg = pytest.importorskip("psycopg")


def _refused(url: str, tmp_path: Path, error: type[Exception] = StoreError) -> str:
    out = tmp_path / "s.duckdb"
    with pytest.raises(error) as caught:
        ingest(out, postgres=url, progress=False)
    message = str(caught.value)
    assert "\n" not in message and READER_PASSWORD not in message and "secret" not in message
    assert not out.exists()
    return message


def _admin(db: PgDatabase, *sql: str) -> None:
    with psycopg.connect(db.admin_url, autocommit=True) as con:
        for statement in sql:
            con.execute(statement)


def test_a_wrong_password(pg_server: PgServer, pg_demo: PgDatabase, tmp_path: Path) -> None:
    message = _refused(pg_server.url("mimiciv_demo", READER, "not-the-secret"), tmp_path)
    assert message == (f"postgresql://{READER}@127.0.0.1:{pg_server.port}/mimiciv_demo: cannot connect: password "
                       f'authentication failed for user "{READER}"; check the user and password in the URL '
                       "(or PGPASSWORD / ~/.pgpass)")


def test_a_port_nothing_listens_on(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: refused
        message = _refused(f"postgresql://{READER}:{READER_PASSWORD}@127.0.0.1:{port}/mimiciv", tmp_path)
    assert message == (f"postgresql://{READER}@127.0.0.1:{port}/mimiciv: cannot connect: Connection refused; "
                       "is the server running and reachable at that host and port?")


def test_a_malformed_url_and_a_database_that_does_not_exist(pg_server: PgServer, pg_demo: PgDatabase,
                                                            tmp_path: Path) -> None:
    message = _refused("postgresql://[::1:5432/db", tmp_path)
    assert "not a PostgreSQL URL libpq accepts" in message and "expected postgresql://user:password@host:port/database" in message
    message = _refused(pg_server.url("mimic_nope", READER, READER_PASSWORD), tmp_path)
    assert 'database "mimic_nope" does not exist; check the database name at the end of the URL' in message


def test_a_database_without_mimic_schemas(pg_server: PgServer, tmp_path: Path) -> None:
    pg_server.create_database("empty")
    message = _refused(pg_server.url("empty"), tmp_path, IngestError)
    assert message == (f"postgresql://postgres@127.0.0.1:{pg_server.port}/empty: no MIMIC schema found (looked for "
                       "mimiciv_hosp, mimiciv_icu, mimiciv_ed, mimiciv_note, mimiciv_cxr and the older mimic_* names); "
                       "is this a database built with mimic-code's buildmimic/postgres scripts?")


def test_a_missing_module_schema_and_a_missing_required_table(pg_scratch: PgDatabase, tmp_path: Path) -> None:
    trim(pg_scratch.admin_url)
    _admin(pg_scratch, "DROP TABLE mimiciv_hosp.labevents", "ALTER SCHEMA mimiciv_icu RENAME TO icu_old")
    message = _refused(pg_scratch.reader_url, tmp_path, IngestError)
    assert message.endswith("/scratch_" + pg_scratch.name.split("_")[1] + ": required module(s) or table(s) missing: "
                            "hosp.labevents (mimiciv_hosp.labevents); icu (schema mimiciv_icu or mimic_icu)")


def test_a_missing_required_column(pg_scratch: PgDatabase, tmp_path: Path) -> None:
    trim(pg_scratch.admin_url)
    _admin(pg_scratch, "ALTER TABLE mimiciv_hosp.patients DROP COLUMN anchor_age")
    message = _refused(pg_scratch.reader_url, tmp_path, IngestError)
    assert message.endswith(f"/{pg_scratch.name}#mimiciv_hosp.patients: column 'anchor_age': missing column(s) "
                            "'anchor_age' of hosp.patients; the table has subject_id, gender, anchor_year, "
                            "anchor_year_group, dod")


def test_a_role_without_the_grants(pg_scratch: PgDatabase, tmp_path: Path) -> None:
    trim(pg_scratch.admin_url)
    _admin(pg_scratch, f"REVOKE SELECT ON mimiciv_hosp.admissions FROM {READER}")
    message = _refused(pg_scratch.reader_url, tmp_path)
    assert message.endswith(f"/{pg_scratch.name}#mimiciv_hosp.admissions: role '{READER}' may not read "
                            f"mimiciv_hosp.admissions (GRANT SELECT ON ALL TABLES IN SCHEMA mimiciv_hosp TO {READER})")
    _admin(pg_scratch, f"GRANT SELECT ON mimiciv_hosp.admissions TO {READER}", f"REVOKE USAGE ON SCHEMA mimiciv_icu FROM {READER}")
    message = _refused(pg_scratch.reader_url, tmp_path)
    assert message.endswith(f"#mimiciv_icu.icustays: role '{READER}' may not use schema mimiciv_icu "
                            f"(GRANT USAGE ON SCHEMA mimiciv_icu TO {READER})")


def test_a_value_that_does_not_convert_names_the_relation_and_column(pg_scratch: PgDatabase, tmp_path: Path) -> None:
    trim(pg_scratch.admin_url, keep={"hosp.omr", "hosp.diagnoses_icd"})
    _admin(pg_scratch, "ALTER TABLE mimiciv_hosp.omr ALTER COLUMN seq_num TYPE text",
           "UPDATE mimiciv_hosp.omr SET seq_num = '1b' WHERE ctid IN (SELECT ctid FROM mimiciv_hosp.omr LIMIT 1)")
    out = tmp_path / "s.duckdb"
    with pytest.raises(IngestError) as caught:  # the server's cast refuses it
        ingest(out, postgres=pg_scratch.reader_url, progress=False)
    assert str(caught.value).endswith(f"/{pg_scratch.name}#mimiciv_hosp.omr: column 'seq_num': a value does not "
                                      'convert to INTEGER: invalid input syntax for type integer: "1b"')
    assert "hosp.omr" not in open_store(out).row_counts and "hosp.patients" in open_store(out).row_counts  # the rest stays
    _admin(pg_scratch, "UPDATE mimiciv_hosp.omr SET seq_num = '1' WHERE seq_num = '1b'",
           "ALTER TABLE mimiciv_hosp.diagnoses_icd ALTER COLUMN icd_version TYPE integer",
           "UPDATE mimiciv_hosp.diagnoses_icd SET icd_version = 70000 WHERE ctid IN (SELECT ctid FROM mimiciv_hosp.diagnoses_icd LIMIT 1)")
    with pytest.raises(IngestError) as caught:  # the server's cast refuses it (out of SMALLINT's range)
        ingest(tmp_path / "again.duckdb", postgres=pg_scratch.reader_url, progress=False)
    assert str(caught.value).endswith(f"/{pg_scratch.name}#mimiciv_hosp.diagnoses_icd: column 'icd_version': a value "
                                      "does not convert to SMALLINT: smallint out of range")
    _admin(pg_scratch, "UPDATE mimiciv_hosp.diagnoses_icd SET icd_version = 9 WHERE icd_version = 70000",
           "ALTER TABLE mimiciv_hosp.omr ALTER COLUMN subject_id TYPE bigint",
           "UPDATE mimiciv_hosp.omr SET subject_id = 3000000000 WHERE ctid IN (SELECT ctid FROM mimiciv_hosp.omr LIMIT 1)")
    with pytest.raises(IngestError) as caught:  # read as it is (an index serves it), refused by Arrow: not an INTEGER
        ingest(tmp_path / "third.duckdb", postgres=pg_scratch.reader_url, progress=False)
    assert re.search(f"/{pg_scratch.name}#mimiciv_hosp.omr: column 'subject_id': a value does not convert to INTEGER: "
                     r"invalid value '3000000000' \(row [\d,]+ in the order the server sent them\)$", str(caught.value))


def test_a_connection_lost_while_a_table_streams(pg_scratch: PgDatabase, tmp_path: Path) -> None:
    trim(pg_scratch.admin_url, keep={"hosp.omr"})
    _admin(pg_scratch, "ALTER TABLE mimiciv_hosp.omr RENAME TO omr_rows",
           "CREATE FUNCTION mimiciv_hosp.stall() RETURNS boolean LANGUAGE sql AS 'SELECT true FROM pg_sleep(120)'",
           "CREATE VIEW mimiciv_hosp.omr AS SELECT * FROM mimiciv_hosp.omr_rows WHERE mimiciv_hosp.stall()",
           f"GRANT SELECT ON mimiciv_hosp.omr TO {READER}")
    out = tmp_path / "s.duckdb"
    caught: list[BaseException] = []

    def run() -> None:
        try:
            ingest(out, postgres=pg_scratch.reader_url, progress=False)
        except BaseException as err:
            caught.append(err)

    worker = threading.Thread(target=run)
    worker.start()
    with psycopg.connect(pg_scratch.admin_url, autocommit=True) as con:
        for _ in range(600):  # until the COPY of omr is running on the server
            found = con.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'clinseek ingest' "
                                "AND state = 'active' AND query LIKE 'COPY%omr%'").fetchall()
            if found:
                break
            time.sleep(0.1)
        assert found
        con.execute("SELECT pg_terminate_backend(%s)", [found[0][0]])
    worker.join(60)
    assert len(caught) == 1 and isinstance(caught[0], StoreError), caught
    assert str(caught[0]).endswith(f"/{pg_scratch.name}: cannot read mimiciv_hosp.omr: the connection to the server was "
                                   "lost (terminating connection due to administrator command)")
    assert "hosp.omr" not in open_store(out).row_counts and "hosp.patients" in open_store(out).row_counts
