"""Episode build time and query latency on synthetic stores of 1k and 10k patients.

For each store (built with ``clinseek.store.synthesize``, or given with ``--store``) it builds
sealed episodes for a sample of patients (cutoff = a random instant inside one of their
admissions; text and multimodal policies alternate) and reports p50/p95 of the build, then p50
of a few representative queries on the built episodes. The first build of a store (which reads
and caches the store's dictionaries and opens its shared reader) is not timed; every timed build
is a fresh patient. An episode loads a table when a query first names it, so the script also
times the first query of ``labevents`` (build + that line = the cost before an agent's first
lab answer) and then reading every other table once (build + both lines = everything loaded).

Wall times include waiting for a CPU on a busy machine; the thread-CPU columns are the work
itself (the episode database runs with one thread, in the calling thread). Targets (issue 4):
build p50 <= 50 ms on the 10k store, and 10k/1k build p50 ratio <= 1.5 (cost follows the
patient's rows, not the store size). Tool-call latency and rendered size: ``benchmarks/tools.py``.

Run: ``.venv/bin/python benchmarks/episode.py [--patients 1000 10000] [--episodes 40] [--keep DIR]``
or ``.venv/bin/python benchmarks/episode.py --store path/to/store.duckdb``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from clinseek.episode import MM_POLICY, TEXT_POLICY, Episode, EpisodeKey, build_episode, open_store_reader
from clinseek.store import connect_store, synthesize

QUERIES: dict[str, str] = {
    "one lab item, last 7 days": (
        "SELECT charttime, valuenum, valueuom FROM labevents WHERE itemid = (SELECT any_value(itemid) FROM labevents) "
        "AND charttime >= (SELECT max(charttime) FROM labevents) - INTERVAL 7 DAY ORDER BY charttime"
    ),
    "latest 20 labs with labels": (
        "SELECT l.charttime, d.label, l.valuenum FROM labevents l LEFT JOIN d_labitems d USING (itemid) "
        "ORDER BY l.charttime DESC LIMIT 20"
    ),
    "diagnoses with titles": (
        "SELECT x.hadm_id, x.icd_code, d.long_title FROM diagnoses_icd x "
        "LEFT JOIN d_icd_diagnoses d USING (icd_code, icd_version) ORDER BY x.hadm_id, x.seq_num"
    ),
    "events per day": "SELECT charttime::DATE AS day, count(*) FROM labevents GROUP BY 1 ORDER BY 1",
    "keyword in prescriptions": "SELECT starttime, drug FROM prescriptions WHERE strpos(lower(drug), 'in') > 0",
}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _keys(store: Path | str, n: int, seed: int) -> list[EpisodeKey]:
    rng = random.Random(seed)
    sql = "SELECT subject_id, admittime, dischtime FROM hosp.admissions WHERE dischtime > admittime"
    if isinstance(store, Path):
        con = connect_store(store)
        try:
            stays = con.execute(sql).fetchall()
        finally:
            con.close()
    else:
        with open_store_reader(store) as reader:
            stays = reader.source.tuples(sql, [], what="admissions")  # type: ignore[attr-defined]
    stays.sort(key=lambda r: (r[0], r[1]))
    by_subject: dict[int, tuple[datetime, datetime]] = {}
    for subject_id, admit, disch in stays:
        by_subject.setdefault(subject_id, (admit, disch))
    subjects = rng.sample(sorted(by_subject), min(n + 1, len(by_subject)))
    keys = []
    for i, subject_id in enumerate(subjects):
        admit, disch = by_subject[subject_id]
        cutoff = (admit + (disch - admit) * rng.random()).replace(microsecond=0)
        keys.append(EpisodeKey(subject_id, cutoff, (TEXT_POLICY, MM_POLICY)[i % 2]))
    return keys


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.thread_time()
    out = fn()
    return out, (time.perf_counter() - wall) * 1e3, (time.thread_time() - cpu) * 1e3


def bench_store(store: Path | str, keys: list[EpisodeKey], server: ServerCpu | None = None) -> dict[str, float]:
    """Print build and query figures for one store (a DuckDB file or a ``postgresql://`` URL); return the
    p50s (ms) of the build and of the whole episode (build, then every table read once)."""
    with open_store_reader(store) as reader:
        build_episode(reader, keys[0]).close()  # warm: dictionaries cached, store opened
        walls, cpus, eps = [], [], []
        rows = []
        server_ms = server.ms() if server else 0.0
        for key in keys[1:]:
            ep, wall, cpu = _timed(lambda key=key: build_episode(reader, key))
            walls.append(wall)
            cpus.append(cpu)
            rows.append(sum(n for name, n in ep.table_counts().items() if "d_" not in name))
            eps.append(ep)
        server_build = (server.ms() - server_ms) / len(eps) if server else 0.0
        size = f"{Path(store).stat().st_size / 1e6:.0f} MB" if isinstance(store, Path) else "PostgreSQL"
        print(
            f"\n{_name(store)}: {size}, {len(eps)} episodes, "
            f"median {statistics.median(rows):.0f} patient rows per episode"
        )
        print(
            f"  episode build      wall p50 {_pct(walls, 0.5):7.1f} ms  p95 {_pct(walls, 0.95):7.1f} ms"
            f"   thread-CPU p50 {_pct(cpus, 0.5):7.1f} ms  p95 {_pct(cpus, 0.95):7.1f} ms"
            + (f"   server CPU mean {server_build:6.1f} ms" if server else "")
        )
        server_ms = server.ms() if server else 0.0
        first = [_timed(lambda ep=ep: ep.execute("SELECT count(*) FROM labevents"))[1:] for ep in eps]
        every = [_timed(lambda ep=ep: _read_every_table(ep))[1:] for ep in eps]
        server_load = (server.ms() - server_ms) / len(eps) if server else 0.0
        for label, figures in (
            ("first query of labevents", first),
            ("then every other table", every),
        ):
            print(
                f"  {label:<26} wall p50 {_pct([w for w, _ in figures], 0.5):7.2f} ms"
                f"  thread-CPU p50 {_pct([c for _, c in figures], 0.5):6.2f} ms   (loads the tables it names)"
            )
        whole = [b + f[0] + e[0] for b, f, e in zip(walls, first, every, strict=True)]
        whole_cpu = [b + f[1] + e[1] for b, f, e in zip(cpus, first, every, strict=True)]
        print(
            f"  whole episode      wall p50 {_pct(whole, 0.5):7.1f} ms  p95 {_pct(whole, 0.95):7.1f} ms"
            f"   thread-CPU p50 {_pct(whole_cpu, 0.5):7.1f} ms"
            + (f"   server CPU mean {server_build + server_load:6.1f} ms" if server else "")
            + "   (build + every table read)"
        )
        for label, sql in QUERIES.items():
            qw, qc = [], []
            for ep in eps:
                _, wall, cpu = _timed(lambda ep=ep, sql=sql: ep.execute(sql))
                qw.append(wall)
                qc.append(cpu)
            print(f"  {label:<26} wall p50 {_pct(qw, 0.5):7.2f} ms  thread-CPU p50 {_pct(qc, 0.5):6.2f} ms")
        for ep in eps:
            ep.close()
    return {"wall": _pct(walls, 0.5), "cpu": _pct(cpus, 0.5), "whole": _pct(whole, 0.5),
            "whole_cpu": _pct(whole_cpu, 0.5)}


def _name(store: Path | str) -> str:
    return store.name if isinstance(store, Path) else str(store).rsplit("/", 1)[-1] + " (PostgreSQL)"


class ServerCpu:
    """CPU time (user + system) of a PostgreSQL server's processes, from ``/proc`` (Linux): the postmaster's
    children, the backends that run the episode reads, included."""

    def __init__(self, data_dir: Path) -> None:
        self._postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
        self._tick = os.sysconf("SC_CLK_TCK")

    def ms(self) -> float:
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(stat.parent.name)
            if pid == self._postmaster or int(fields[1]) == self._postmaster:
                total += int(fields[11]) + int(fields[12])
        return total * 1e3 / self._tick


def _read_every_table(ep: Episode) -> None:
    for name in ep.table_counts():
        ep.execute(f"SELECT count(*) FROM {name}")


def _store_for(patients: int, keep: Path | None, tmp: Path) -> Path:
    out = (keep or tmp) / f"synthetic_{patients}.duckdb"
    if out.exists():
        return out
    started = time.perf_counter()
    synthesize(out=out, patients=patients, seed=7)
    print(f"synthesized {patients} patients in {time.perf_counter() - started:.0f} s -> {out}")
    return out


def _postgres_twins(stores: list[Path], tmp: Path) -> tuple[Any, dict[Path, str], ServerCpu]:
    """A throwaway PostgreSQL server (``tests/pgserver.py``) holding each store in the mimic-code layout,
    indexed by ``clinseek data pg-index``; the reader URL of each."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from clinseek.store import pg_index
    from pgserver import PgServer, create_reader, load_store, skip_reason

    reason = skip_reason()
    if reason is not None:
        raise SystemExit(f"--postgres: {reason}")
    server = PgServer()
    server.start()
    urls = {}
    for i, store in enumerate(stores):
        started = time.perf_counter()
        admin = server.create_database(f"bench_{i}")
        load_store(admin, store, partition_chartevents=True)
        create_reader(admin)
        pg_index(admin)
        urls[store] = server.database(f"bench_{i}", {}).reader_url
        print(f"loaded {store.name} into PostgreSQL (mimic-code layout, pg-index) in "
              f"{time.perf_counter() - started:.0f} s")
    return server, urls, ServerCpu(server.data)


def _ratio(label: str, num: dict[str, float], den: dict[str, float], target: str = "") -> None:
    print(
        f"{label}: build p50 wall {num['wall'] / den['wall']:.2f}, thread-CPU {num['cpu'] / den['cpu']:.2f}; "
        f"whole episode p50 wall {num['whole'] / den['whole']:.2f}, thread-CPU {num['whole_cpu'] / den['whole_cpu']:.2f}"
        f"{target}"
    )


def main() -> None:
    """Parse arguments, build or open the stores, print the figures and the target checks."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--patients", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--store", nargs="*", default=None,
                        help="existing stores instead: DuckDB files or postgresql://user:password@host:port/db URLs "
                        "(a URL after a DuckDB store is benched with that store's keys, as a ratio to it)")
    parser.add_argument("--postgres", action="store_true",
                        help="also load each store into a throwaway PostgreSQL server and bench it in the same run")
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep (and reuse) built stores")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as tmp:
        given = [s if s.startswith("postgresql://") else Path(s) for s in args.store or []]
        stores = [s for s in given if isinstance(s, Path)] or ([] if given else [
            _store_for(n, args.keep, Path(tmp)) for n in args.patients])
        external = [s for s in given if isinstance(s, str)]
        server = None
        if args.postgres:
            server, urls, server_cpu = _postgres_twins(stores, Path(tmp))
        try:
            results, pg_results = [], []
            if external and not stores:
                for url in external:
                    results.append(bench_store(url, _keys(url, args.episodes, args.seed)))
                return
            for store in stores:
                keys = _keys(store, args.episodes, args.seed)
                results.append(bench_store(store, keys))
                if server is not None:
                    pg_results.append(bench_store(urls[store], keys, server_cpu))
                    _ratio(f"PostgreSQL / DuckDB on {store.name}", pg_results[-1], results[-1])
            for url in external:  # the same database as the first store, in PostgreSQL
                keys = _keys(stores[0], args.episodes, args.seed)
                _ratio(f"{_name(url)} / {stores[0].name}", bench_store(url, keys), results[0])
        finally:
            if server is not None:
                server.close()
        print()
        if len(results) >= 2:
            _ratio(f"{stores[-1].name} / {stores[0].name}", results[-1], results[0], "   (target <= 1.5)")
            if pg_results:
                _ratio(f"{stores[-1].name} / {stores[0].name} in PostgreSQL", pg_results[-1], pg_results[0],
                       "   (cost follows the patient)")
        last = results[-1]
        print(
            f"build p50 on {stores[-1].name}: wall {last['wall']:.1f} ms, thread-CPU {last['cpu']:.1f} ms   (target <= 50 ms)"
        )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
