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
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from clinseek.episode import MM_POLICY, TEXT_POLICY, Episode, EpisodeKey, build_episode
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


def _keys(store: Path, n: int, seed: int) -> list[EpisodeKey]:
    rng = random.Random(seed)
    con = connect_store(store)
    try:
        stays = con.execute(
            "SELECT subject_id, admittime, dischtime FROM hosp.admissions WHERE dischtime > admittime "
            "ORDER BY hash(subject_id), admittime"
        ).fetchall()
    finally:
        con.close()
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


def bench_store(store: Path, episodes: int, seed: int) -> dict[str, float]:
    """Print build and query figures for one store; return the build p50s (ms)."""
    keys = _keys(store, episodes, seed)
    build_episode(store, keys[0]).close()  # warm: dictionaries cached, store opened
    walls, cpus, eps = [], [], []
    rows = []
    for key in keys[1:]:
        ep, wall, cpu = _timed(lambda key=key: build_episode(store, key))
        walls.append(wall)
        cpus.append(cpu)
        rows.append(sum(n for name, n in ep.table_counts().items() if "d_" not in name))
        eps.append(ep)
    print(
        f"\n{store.name}: {store.stat().st_size / 1e6:.0f} MB, {len(eps)} episodes, "
        f"median {statistics.median(rows):.0f} patient rows per episode"
    )
    print(
        f"  episode build      wall p50 {_pct(walls, 0.5):7.1f} ms  p95 {_pct(walls, 0.95):7.1f} ms"
        f"   thread-CPU p50 {_pct(cpus, 0.5):7.1f} ms  p95 {_pct(cpus, 0.95):7.1f} ms"
    )
    first = [_timed(lambda ep=ep: ep.execute("SELECT count(*) FROM labevents"))[1:] for ep in eps]
    every = [_timed(lambda ep=ep: _read_every_table(ep))[1:] for ep in eps]
    for label, figures in (
        ("first query of labevents", first),
        ("then every other table", every),
    ):
        print(
            f"  {label:<26} wall p50 {_pct([w for w, _ in figures], 0.5):7.2f} ms"
            f"  thread-CPU p50 {_pct([c for _, c in figures], 0.5):6.2f} ms   (loads the tables it names)"
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
    return {"wall": _pct(walls, 0.5), "cpu": _pct(cpus, 0.5)}


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


def main() -> None:
    """Parse arguments, build or open the stores, print the figures and the target checks."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--patients", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--store", type=Path, nargs="*", default=None, help="existing stores instead")
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep (and reuse) built stores")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stores = args.store or [_store_for(n, args.keep, Path(tmp)) for n in args.patients]
        results = [bench_store(store, args.episodes, args.seed) for store in stores]
        if len(results) >= 2:
            small, large = results[0], results[-1]
            print(
                f"\nbuild p50 ratio {stores[-1].name} / {stores[0].name}: wall {large['wall'] / small['wall']:.2f}, "
                f"thread-CPU {large['cpu'] / small['cpu']:.2f}   (target <= 1.5)"
            )
        last = results[-1]
        print(
            f"build p50 on {stores[-1].name}: wall {last['wall']:.1f} ms, thread-CPU {last['cpu']:.1f} ms   (target <= 50 ms)"
        )


if __name__ == "__main__":
    main()
