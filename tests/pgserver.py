"""A throwaway PostgreSQL server for tests and benchmarks, and mimic-code-shaped databases loaded into it.

The server binaries (``initdb``, ``pg_ctl``, ``postgres``) come from the machine: ``PATH`` or Debian's
``/usr/lib/postgresql/<version>/bin`` (``apt-get install postgresql``). :class:`PgServer` makes a new
cluster in a temporary folder, listens on a free loopback port (password authentication over TCP),
and is removed with its folder when closed. PostgreSQL refuses to run as root: under root the
server runs as the unprivileged user ``nobody``.

The databases are shaped as MIT-LCP/mimic-code's ``buildmimic/postgres`` scripts build them (written
here from that layout, not copied): one schema per module (``mimiciv_hosp``, ``mimiciv_icu``,
``mimiciv_ed``, ``mimiciv_note``; CXR tables in ``mimiciv_cxr``), table and column names as in the
release files (unquoted, so lower case), mimic-code's column types where they differ from the plain
mapping (``CHAR(n)`` codes, ``TIMESTAMP(0)`` dates, ``REAL`` and ``NUMERIC`` amounts), and optionally
``chartevents`` partitioned by ``itemid`` ranges. Rows are loaded with ``COPY ... FROM STDIN``.
"""

from __future__ import annotations

import concurrent.futures
import glob
import gzip
import itertools
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from clinseek.schema import Column, Table, get_table, tables

PG_SKIP = "PostgreSQL server binaries not found"
"""Start of the skip reason of every test that needs a PostgreSQL server (the session summary counts them)."""

ADMIN = "postgres"
ADMIN_PASSWORD = "admin-secret"
READER = "clinseek_reader"
READER_PASSWORD = "reader-secret"

MIMIC_CODE_SCHEMAS = {
    "hosp": "mimiciv_hosp",
    "icu": "mimiciv_icu",
    "ed": "mimiciv_ed",
    "note": "mimiciv_note",
    "cxr": "mimiciv_cxr",
}
"""Where a mimic-code build keeps each module (written out here, independently of clinseek's own mapping)."""

# mimic-code's column types where they are not the plain mapping of the registry type (below)
_MIMIC_CODE_TYPES = {
    ("patients", "gender"): "CHAR(1)",
    ("diagnoses_icd", "icd_code"): "CHAR(7)",
    ("d_icd_diagnoses", "icd_code"): "CHAR(7)",
    ("d_icd_procedures", "icd_code"): "CHAR(7)",
    # d_hcpcs.code is CHAR(5) in mimic-code, which drops the trailing spaces of the 360 two-letter modifier
    # codes the release pads to five characters ('EA   '): tests/postgres/test_ingest.py shows that difference
    # on its own; here it is VARCHAR(5) so that the database holds exactly what the files hold
    ("d_hcpcs", "code"): "VARCHAR(5)",
    ("hcpcsevents", "hcpcs_cd"): "CHAR(5)",
    ("hcpcsevents", "chartdate"): "TIMESTAMP(0)",
    ("procedures_icd", "chartdate"): "TIMESTAMP(0)",
    ("omr", "chartdate"): "TIMESTAMP(0)",
    ("microbiologyevents", "chartdate"): "TIMESTAMP(0)",
    ("microbiologyevents", "storedate"): "TIMESTAMP(0)",
    ("emar_detail", "parent_field_ordinal"): "NUMERIC(3, 2)",
    ("prescriptions", "doses_per_24_hrs"): "REAL",
    ("pharmacy", "doses_per_24_hrs"): "REAL",
    ("pharmacy", "basal_rate"): "REAL",
    ("pharmacy", "duration"): "REAL",
    ("triage", "temperature"): "NUMERIC",
    ("triage", "heartrate"): "NUMERIC",
    ("triage", "acuity"): "NUMERIC",
    ("vitalsign", "resprate"): "NUMERIC(10, 4)",
    ("vitalsign", "temperature"): "NUMERIC",
    ("icustays", "los"): "FLOAT",
    ("labevents", "comments"): "TEXT",
}
_PLAIN_TYPES = {
    "SMALLINT": "SMALLINT",
    "INTEGER": "INTEGER",
    "BIGINT": "BIGINT",
    "DOUBLE": "DOUBLE PRECISION",
    "VARCHAR": "VARCHAR",
    "TIMESTAMP": "TIMESTAMP",
    "DATE": "DATE",
    "BOOLEAN": "BOOLEAN",
}


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``: from ``PATH``, else the newest
    ``/usr/lib/postgresql/<version>/bin``; ``None`` when there is none."""
    found = shutil.which("initdb")
    if found is not None:
        folder = Path(found).resolve().parent
        if (folder / "pg_ctl").exists() and (folder / "postgres").exists():
            return folder
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(re.sub(r"\D", "", p) or 0))
    return Path(versions[-1]).parent if versions else None


def skip_reason() -> str | None:
    """Why a PostgreSQL server cannot be started here (``None``: it can)."""
    if find_bin_dir() is None:
        return (f"{PG_SKIP} (initdb, pg_ctl, postgres on PATH or in /usr/lib/postgresql/*/bin): "
                "apt-get install postgresql")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("nobody")
        except KeyError:
            return f"{PG_SKIP}: running as root and no user 'nobody' to run the server as"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """A PostgreSQL cluster in a temporary folder, on a free loopback port (``with PgServer() as s:``)."""

    def __init__(self, bin_dir: Path | None = None) -> None:
        found = bin_dir or find_bin_dir()
        if found is None:
            raise RuntimeError(skip_reason())
        self.bin_dir = found
        self.base = Path(tempfile.mkdtemp(prefix="clinseek-pg-"))
        self.data = self.base / "data"
        self.port = _free_port()
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:  # initdb and postgres refuse root
            user = pwd.getpwnam("nobody")
            os.chown(self.base, user.pw_uid, user.pw_gid)
            self._as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        self._initdb()

    def _run(self, *args: str) -> None:
        env = {"PATH": f"{self.bin_dir}:{os.environ.get('PATH', '')}", "LC_ALL": "C", "TZ": "UTC"}
        done = subprocess.run([str(self.bin_dir / args[0]), *args[1:]], cwd=self.base, env=env, capture_output=True,
                              text=True, timeout=120, **self._as)
        if done.returncode != 0:
            log = (self.base / "server.log").read_text(errors="replace")[-2000:] if (self.base / "server.log").exists() else ""
            raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}\n{log}")

    def _initdb(self) -> None:
        pwfile = self.base / "pwfile"
        pwfile.write_text(ADMIN_PASSWORD + "\n")
        if self._as:
            os.chown(pwfile, self._as["user"], self._as["group"])
        self._run("initdb", "-D", str(self.data), "-U", ADMIN, "--pwfile", str(pwfile), "--auth-host=scram-sha-256",
                  "--auth-local=trust", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
        pwfile.unlink()

    def start(self) -> None:
        """Start the server (waits until it accepts connections)."""
        options = (f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c wal_level=minimal -c max_wal_senders=0 "
                   "-c max_connections=60 -c TimeZone=UTC")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "server.log"), "-w", "-t", "60", "-o", options,
                  "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``mode``: ``smart``, ``fast`` or ``immediate``); the cluster stays for :meth:`start`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def close(self) -> None:
        """Stop the server if it runs and remove its folder."""
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop("immediate")
            except RuntimeError:
                pass
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PgServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, dbname: str = "postgres", user: str = ADMIN, password: str | None = ADMIN_PASSWORD) -> str:
        """``postgresql://user:password@127.0.0.1:port/dbname``."""
        auth = user if password is None else f"{user}:{password}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str, template: str | None = None) -> str:
        """Create database ``name`` (dropped first if it exists), empty or as a copy of ``template`` (a
        database nobody is connected to: a file copy, well under a second for the demo); its admin URL."""
        import psycopg

        copy = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            con.execute(f'CREATE DATABASE "{name}"{copy}')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name`` (closing its connections)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def database(self, name: str, counts: dict[str, int], template: str | None = None) -> PgDatabase:
        """A :class:`PgDatabase` for ``name`` (a copy of ``template`` first, when given)."""
        admin = self.create_database(name, template) if template else self.url(name)
        return PgDatabase(name, admin, self.url(name, READER, READER_PASSWORD), counts)


def pg_type(table: Table, column: str, registry_type: str | None) -> str:
    """The column type a mimic-code build gives ``table.column`` (``TEXT`` for a column the registry lacks)."""
    if registry_type is None:
        return "TEXT"
    return _MIMIC_CODE_TYPES.get((table.name, column), _PLAIN_TYPES[registry_type])


def _registry_column(table: Table, field: str) -> Column | None:
    for col in table.columns:
        if field.lower() in (col.name.lower(), *(a.lower() for a in col.aliases)):
            return col
    return None


def create_table_sql(table: Table, fields: Iterable[str], *, partition_chartevents: bool = False) -> str:
    """``CREATE TABLE mimiciv_<module>.<name>`` with ``fields`` (release names, lower-cased) in order."""
    cols = []
    for field in fields:
        col = _registry_column(table, field)
        # unquoted (folded to lower case) as mimic-code writes names; quoted when not a plain identifier
        name = field.lower() if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field) else '"' + field.replace('"', '""') + '"'
        cols.append(f"  {name} {pg_type(table, col.name if col else field, col.type if col else None)}")
    qualified = f"{MIMIC_CODE_SCHEMAS[table.module]}.{table.name}"
    body = f"CREATE TABLE {qualified} (\n" + ",\n".join(cols) + "\n)"
    if partition_chartevents and table.qualified == "icu.chartevents":
        parts = [f"{body} PARTITION BY RANGE (itemid)"]
        bounds = [0, 220000, 223000, 225000, 228000, 10**9]
        for i, (low, high) in enumerate(itertools.pairwise(bounds), start=1):
            parts.append(f"CREATE TABLE {qualified}_{i:02d} PARTITION OF {qualified} FOR VALUES FROM ({low}) TO ({high})")
        parts.append(f"CREATE TABLE {qualified}_default PARTITION OF {qualified} DEFAULT")
        return ";\n".join(parts)
    return body


def _chunks(path: Path, size: int = 1 << 20) -> Iterator[bytes]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        while chunk := fh.read(size):
            yield chunk


def _csv_header(path: Path) -> list[str]:
    import csv
    import io

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        return next(csv.reader(io.TextIOWrapper(fh, encoding="utf-8", newline="")))


def _schemas(con: Any, modules: Iterable[str]) -> None:
    for module in sorted(set(modules)):
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {MIMIC_CODE_SCHEMAS[module]}")


def load_csv_dirs(url: str, sources: dict[str, Path], *, workers: int = 2) -> dict[str, int]:
    """Load MIMIC CSV files into a mimic-code-shaped database: ``sources`` maps modules to the folder
    holding their files (``{"hosp": demo / "hosp", ...}``). Tables load in parallel on ``workers``
    connections, each created and filled in one transaction (no WAL with ``wal_level=minimal``).
    Returns rows per qualified table."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        _schemas(con, sources)
    files: list[tuple[Table, Path]] = []
    for module, folder in sources.items():
        for table in tables((module,)):  # type: ignore[arg-type]
            path = next((folder / f"{table.name}{s}" for s in (".csv.gz", ".csv")
                         if (folder / f"{table.name}{s}").is_file()), None)
            if path is not None:
                files.append((table, path))
    files.sort(key=lambda tp: -tp[1].stat().st_size)  # largest first: the workers finish together

    def load(item: tuple[Table, Path]) -> tuple[str, int]:
        table, path = item
        target = f"{MIMIC_CODE_SCHEMAS[table.module]}.{table.name}"
        with psycopg.connect(url, autocommit=True) as con, con.transaction(), con.cursor() as cur:
            cur.execute(create_table_sql(table, _csv_header(path)))
            with cur.copy(f"COPY {target} FROM STDIN (FORMAT csv, HEADER true)") as copy:
                for chunk in _chunks(path):
                    copy.write(chunk)
            return table.qualified, cur.rowcount

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(load, files))


def load_store(url: str, store: Path, *, partition_chartevents: bool = True,
               skip: Iterable[str] = (), analyze: bool = False) -> dict[str, int]:
    """Copy every table of a clinseek store into a mimic-code-shaped database (registry column order).

    ``chartevents`` is partitioned by ``itemid`` ranges as some mimic-code builds do. Returns rows per
    qualified table."""
    import psycopg

    src = duckdb.connect(str(store), read_only=True)
    counts: dict[str, int] = {}
    skipped = set(skip)
    try:
        names = [r[0] for r in src.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()]
        present = [get_table(n) for n in names if n not in skipped]
        with tempfile.TemporaryDirectory() as tmp, psycopg.connect(url, autocommit=True) as con:
            _schemas(con, (t.module for t in present))
            for table in present:
                csv_path = Path(tmp) / f"{table.module}_{table.name}.csv"
                columns = ", ".join(f'"{c}"' for c in table.column_names)  # not the store's own instant columns
                src.execute(f"COPY (SELECT {columns} FROM {table.qualified}) TO '{csv_path}' (FORMAT csv, HEADER false)")
                target = f"{MIMIC_CODE_SCHEMAS[table.module]}.{table.name}"
                with con.transaction(), con.cursor() as cur:
                    cur.execute(create_table_sql(table, table.column_names, partition_chartevents=partition_chartevents))
                    with cur.copy(f"COPY {target} FROM STDIN (FORMAT csv)") as copy:
                        for chunk in _chunks(csv_path, 4 << 20):
                            copy.write(chunk)
                    counts[table.qualified] = cur.rowcount
                csv_path.unlink()
            if analyze:
                con.execute("ANALYZE")
    finally:
        src.close()
    return counts


def create_reader(url: str, role: str = READER, password: str = READER_PASSWORD, *,
                  revoke: Iterable[str] = ()) -> None:
    """A login role that may read every table of the database's ``mimiciv_*`` schemas and nothing else.

    Its transactions are read-only by default (``default_transaction_read_only``). ``revoke``: qualified
    PostgreSQL tables (``mimiciv_hosp.labevents``) it may not read (a role that lacks a grant)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        dbname = con.info.dbname
        exists = con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
        if not exists:
            con.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        con.execute(f"ALTER ROLE {role} SET default_transaction_read_only = on")
        con.execute(f'GRANT CONNECT ON DATABASE "{dbname}" TO {role}')
        schemas = [r[0] for r in con.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'mimiciv\\_%'").fetchall()]
        for schema in schemas:
            con.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            con.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        for name in revoke:
            con.execute(f"REVOKE SELECT ON {name} FROM {role}")


@dataclass(frozen=True)
class PgDatabase:
    """A loaded database on a :class:`PgServer`.

    Attributes:
        name: the database name.
        admin_url: the superuser's URL (owner of every table).
        reader_url: the read-only role's URL.
        counts: rows per qualified registry table loaded.
    """

    name: str
    admin_url: str
    reader_url: str
    counts: dict[str, int]


def store_hashes(store: Path, *, blank_is_null: bool = False) -> dict[str, tuple[int, str]]:
    """``{table: (rows, md5)}`` for every table of a store: the md5 of its rows as JSON, sorted (so it does not
    depend on the order of rows with equal sort keys). ``blank_is_null``: hash empty or all-space text as
    NULL, as ingest stores it (to compare a synthetic store, which may hold ``''``, with an ingested one)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        out: dict[str, tuple[int, str]] = {}
        for (name,) in con.execute("SELECT table_name FROM clinseek_meta.table_info ORDER BY 1").fetchall():
            table = get_table(name)
            cols = []
            for col in table.columns:
                ref = '"' + col.name.replace('"', '""') + '"'
                if blank_is_null and col.type == "VARCHAR":
                    ref = f"CASE WHEN trim({ref}) = '' THEN NULL ELSE {ref} END"
                cols.append(f"{ref} AS \"c{len(cols)}\"")
            rows, digest = con.execute(
                f"SELECT count(*), md5(coalesce(string_agg(j, chr(10) ORDER BY j), '')) FROM "
                f"(SELECT CAST(to_json(r) AS VARCHAR) AS j FROM (SELECT {', '.join(cols)} FROM {name}) r)"
            ).fetchall()[0]
            out[name] = (int(rows), str(digest))
        return out
    finally:
        con.close()


def store_columns(store: Path) -> dict[str, list[tuple[str, str]]]:
    """``{table: [(column, type), ...]}`` of every table of a store, in column order."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        out: dict[str, list[tuple[str, str]]] = {}
        for schema, table, column, dtype in con.execute(
            "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE schema_name <> 'clinseek_meta' AND database_name = current_database() "
            "ORDER BY schema_name, table_name, column_index"
        ).fetchall():
            out.setdefault(f"{schema}.{table}", []).append((column, dtype))
        return out
    finally:
        con.close()


def trim(url: str, keep: Iterable[str] = ()) -> None:
    """Make a scratch copy small: drop every optional registry table not in ``keep`` and empty every required
    one not in ``keep`` but ``hosp.patients`` (a quick ingest that still meets every requirement)."""
    import psycopg

    kept = {"hosp.patients", *keep}
    with psycopg.connect(url, autocommit=True) as con:
        found = con.execute("SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                            "WHERE n.nspname LIKE 'mimiciv\\_%' AND c.relkind IN ('r', 'p') AND NOT c.relispartition").fetchall()
        modules = {schema: module for module, schema in MIMIC_CODE_SCHEMAS.items()}
        for schema, name in found:
            qualified = f"{modules[schema]}.{name}"
            if qualified in kept:
                continue
            table = get_table(qualified)
            con.execute(f"{'TRUNCATE' if table.required else 'DROP TABLE'} {schema}.{name}")
