"""Ingest throughput and peak memory on a large, generated, MIMIC-shaped CSV set.

Writes ``hosp/labevents.csv.gz`` with ``--rows`` rows (generated on the fly by DuckDB, subjects
in random order so the store's sort by ``subject_id, charttime`` does real work) plus every other
required MIMIC-IV table (small, generated from the registry's column types), then runs
``clinseek.store.ingest`` in a child process and prints rows/s and the child's peak RSS.

Targets (issue 2, a 2-core machine): >= 1 million rows/s and peak RSS <= 2 GB, flat in the input
size. Run e.g. ``python benchmarks/ingest.py --rows 5e6 --rows 2e7``. Wall-clock rows/s depends on
how busy the cores are, so the child's CPU time (user + system), the load average before the run
and the CPU that *other* processes used during it (``/proc/stat`` minus the child) are printed too:
a figure is clean only when the others used next to nothing. With ``--workdir`` the generated
sources are kept there and reused by later runs (generating 2e7 rows takes ~2 minutes);
``--repeat`` ingests the same sources several times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from clinseek.schema import Column, Table, tables

ROWS_PER_SUBJECT = 500  # full MIMIC-IV: ~158M labevents over ~300k subjects


def _labevents_sql(rows: int) -> str:
    subjects = max(1, rows // ROWS_PER_SUBJECT)
    return f"""
    SELECT i AS labevent_id,
           10000000 + CAST(hash(i // 40) % {subjects} AS INTEGER) AS subject_id,
           CASE WHEN i % 3 = 0 THEN NULL ELSE 20000000 + CAST(hash(i // 40) % 1000000 AS INTEGER) END AS hadm_id,
           i // 12 AS specimen_id,
           50800 + CAST(hash(i) % 1000 AS INTEGER) AS itemid,
           CASE WHEN i % 7 = 0 THEN 'P' || CAST(i % 5000 AS VARCHAR) END AS order_provider_id,
           TIMESTAMP '2110-01-01' + to_seconds(CAST(hash(i // 12) % 3153600000 AS BIGINT)) AS charttime,
           TIMESTAMP '2110-01-01' + to_seconds(CAST(hash(i // 12) % 3153600000 AS BIGINT) + 5400) AS storetime,
           CAST(round((hash(i) % 100000) / 1000.0, 2) AS VARCHAR) AS value,
           round((hash(i) % 100000) / 1000.0, 2) AS valuenum,
           'mg/dL' AS valueuom,
           10.5 AS ref_range_lower,
           55.0 AS ref_range_upper,
           CASE WHEN hash(i) % 100000 > 55000 THEN 'abnormal' END AS flag,
           CASE WHEN i % 4 = 0 THEN 'STAT' ELSE 'ROUTINE' END AS priority,
           CASE WHEN i % 50 = 0 THEN 'Verified by ___, comment ' || CAST(i AS VARCHAR) END AS comments
    FROM range({rows}) r(i)
    """


def _generic_value(col: Column) -> str:
    if col.type in ("INTEGER", "BIGINT"):
        return f"10000000 + CAST(i AS INTEGER) % 100000 AS {col.name}"
    if col.type == "SMALLINT":
        return f"CAST(i % 100 AS SMALLINT) AS {col.name}"
    if col.type == "DOUBLE":
        return f"(i % 1000) / 10.0 AS {col.name}"
    if col.type == "TIMESTAMP":
        return f"TIMESTAMP '2150-01-01' + to_seconds(i * 3600) AS {col.name}"
    if col.type == "DATE":
        return f"DATE '2150-01-01' + CAST(i % 3000 AS INTEGER) AS {col.name}"
    return f"'{col.name} ' || CAST(i AS VARCHAR) AS {col.name}"


def _generic_sql(table: Table, rows: int) -> str:
    cols = ", ".join(f'{_generic_value(c).rsplit(" AS ", 1)[0]} AS "{c.name}"' for c in table.columns)
    return f"SELECT {cols} FROM range({rows}) r(i)"


def write_sources(root: Path, rows: int) -> None:
    """Write the generated MIMIC-IV directory (``hosp/``, ``icu/``) under ``root``."""
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    con.execute("SET enable_progress_bar = false")
    for table in tables(("hosp", "icu")):
        if not table.required:
            continue
        path = root / table.module / f"{table.name}.csv.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        sql = _labevents_sql(rows) if table.name == "labevents" else _generic_sql(table, 10_000)
        con.execute(f"COPY ({sql}) TO '{path}' (HEADER, COMPRESSION gzip)")
    con.close()


def _child(source: Path, out: Path) -> None:
    from clinseek.store import ingest

    report = ingest(out, mimic_iv=source, progress=False)
    lab = report.table("hosp.labevents")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "rows": report.rows,
                "seconds": report.seconds,
                "lab_rows": lab.rows,
                "lab_seconds": lab.seconds,
                "peak_rss_mb": usage.ru_maxrss / 1024,
                "cpu_seconds": usage.ru_utime + usage.ru_stime,
            }
        )
    )


def _sources(rows: int, workdir: Path) -> tuple[Path, float]:
    """The generated MIMIC-IV directory for ``rows`` (reused when complete), and seconds spent generating."""
    source = workdir / f"mimic-{rows}"
    done = source / ".complete"
    if done.exists():
        return source, 0.0
    started = time.perf_counter()
    write_sources(source, rows)
    done.touch()
    return source, time.perf_counter() - started


def _busy_cpu_seconds() -> float:
    """CPU-seconds all processes have used since boot (``/proc/stat``; NaN where it does not exist)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return float("nan")
    ticks = [int(f) for f in fields]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # minus idle and iowait


def run(rows: int, workdir: Path, generated_s: float = 0.0) -> dict[str, float]:
    """Ingest the generated ``rows`` labevents rows in a child process, return the figures."""
    source = workdir / f"mimic-{rows}"
    out = workdir / f"store-{rows}.duckdb"
    out.unlink(missing_ok=True)
    load_before = os.getloadavg()[0]
    busy_before, started = _busy_cpu_seconds(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(source), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall, busy = time.perf_counter() - started, _busy_cpu_seconds() - busy_before
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    figures: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["generate_seconds"] = generated_s
    figures["load_before"] = load_before
    figures["others_cores"] = max(0.0, busy - figures["cpu_seconds"]) / wall
    figures["gz_mb"] = (source / "hosp" / "labevents.csv.gz").stat().st_size / 1e6
    figures["store_mb"] = out.stat().st_size / 1e6
    out.unlink()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=float, action="append", help="labevents rows (repeatable); default 5e6 and 2e7"
    )
    parser.add_argument(
        "--workdir", type=Path, default=None, help="keep (and reuse) the generated sources here (default: a temp dir)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="ingest each size this many times")
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    sizes = [int(r) for r in (args.rows or [5e6, 2e7])]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for rows in sizes:
            _, generated_s = _sources(rows, workdir)
            for _ in range(args.repeat):
                _print(run(rows, workdir, generated_s))


def _print(f: dict[str, float]) -> None:
    print(
        f"labevents {f['lab_rows']:>12,.0f} rows ({f['gz_mb']:.0f} MB gz): "
        f"{f['lab_rows'] / f['lab_seconds']:>12,.0f} rows/s labevents, "
        f"{f['rows'] / f['seconds']:>12,.0f} rows/s all {f['rows']:,.0f} rows in {f['seconds']:.1f} s, "
        f"peak RSS {f['peak_rss_mb']:,.0f} MB, store {f['store_mb']:,.0f} MB; "
        f"CPU {f['cpu_seconds']:.1f} s = {f['rows'] / f['cpu_seconds']:,.0f} rows per CPU-second "
        f"(load average before: {f['load_before']:.1f}; other processes used {f['others_cores']:.2f} cores "
        f"during the run; generation {f['generate_seconds']:.0f} s)",
        flush=True,
    )


if __name__ == "__main__":
    main()
