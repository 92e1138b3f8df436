"""Tool-call latency and rendered-output size of the EHR tools.

For each store (synthetic 1k and 10k patients built with ``clinseek.store.synthesize``, or the
stores given with ``--store``) it builds episodes for a sample of patients (cutoff = their last
lab + 1 s, as ClinSeek-Bench text does), then times every record tool on ``labevents`` and a
simple ``run_sql_query`` (direct call, and through ``call_tool`` with its worker-thread hop), and
compares the characters of the rendered output with pandas ``DataFrame.to_string(index=False)``
of the same rows and columns (the reference's fixed-width rendering).

Wall times include waiting for a CPU on a busy machine; the thread-CPU column is the work
itself (DuckDB runs episode queries in the calling thread). Targets (issue 4): record tools p50 <= 5 ms; rendered size <= 0.5x the pandas characters.
Run: ``.venv/bin/python benchmarks/tools.py [--patients 1000 10000] [--episodes 20]`` or
``.venv/bin/python benchmarks/tools.py --store path/to/store.duckdb``. Needs pandas (dev extra).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pandas as pd

from clinseek.episode import EpisodeKey, build_episode
from clinseek.store import connect_store
from clinseek.tools import Limits, ToolContext, call_tool, get_tool

REPEATS = 5


def _keys(store: Path, n: int) -> list[EpisodeKey]:
    con = connect_store(store)
    try:
        rows = con.execute(
            "SELECT subject_id, max(charttime) + INTERVAL 1 SECOND, any_value(itemid) FROM hosp.labevents "
            "GROUP BY subject_id ORDER BY hash(subject_id) LIMIT ?",
            [n],
        ).fetchall()
    finally:
        con.close()
    return [EpisodeKey(int(s), t) for s, t, _ in rows]


def _calls(ep: Any) -> dict[str, dict[str, Any]]:
    key = ep.key
    day = (key.prediction_time - pd.Timedelta(days=1)).isoformat(sep=" ")
    itemid = ep.execute("SELECT itemid FROM hosp.labevents LIMIT 1").rows[0][0]
    return {
        "ehr.get_records_by_time": {
            "table_name": "labevents",
            "start_time": day,
            "end_time": key.prediction_time.isoformat(sep=" "),
        },
        "ehr.get_latest_records": {"table_name": "labevents"},
        "ehr.get_records_by_keyword": {"table_name": "labevents", "keyword": "blood"},
        "ehr.get_records_by_value": {
            "table_name": "labevents",
            "column_name": "itemid",
            "value": str(itemid),
        },
        "ehr.get_unique_values": {"table_name": "labevents", "column_name": "label"},
        "ehr.get_event_counts_by_time": {"start_time": "1900-01-01", "end_time": "2300-01-01"},
        "ehr.run_sql_query": {
            "sql_query": f"SELECT charttime, valuenum FROM labevents WHERE itemid = {itemid} ORDER BY charttime"
        },
    }


def _time(fn: Callable[[], Any], clock: Callable[[], float] = time.perf_counter) -> float:
    started = clock()
    fn()
    return (clock() - started) * 1000


async def _time_calls(ctx: ToolContext, name: str, args: dict[str, Any]) -> list[float]:
    """``call_tool`` latencies (validation, worker-thread hop, the tool) inside one event loop."""
    out = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        await call_tool(ctx, name, args)
        out.append((time.perf_counter() - started) * 1000)
    return out


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def bench_store(store: Path, episodes: int) -> None:
    keys = _keys(store, episodes)
    build_ms: list[float] = []
    direct: dict[str, list[float]] = {}
    via_call: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    sizes: list[tuple[int, int]] = []
    limits = Limits()
    for key in keys:
        started = time.perf_counter()
        ep = build_episode(store, key)
        build_ms.append((time.perf_counter() - started) * 1000)
        with ep:
            ctx = ToolContext(ep, limits)
            for name, args in _calls(ep).items():
                fn = functools.partial(get_tool(name).fn, ctx, **args)
                fn()  # warm
                direct.setdefault(name, []).extend(_time(fn) for _ in range(REPEATS))
                cpu.setdefault(name, []).extend(_time(fn, time.thread_time) for _ in range(REPEATS))
                via_call.setdefault(name, []).extend(anyio.run(_time_calls, ctx, name, args))
            sizes += _render_sizes(ctx)
    print(f"\n== {store} ({len(keys)} episodes, {REPEATS} calls each)")
    print(f"episode build: p50 {_pct(build_ms, 0.5):.1f} ms, p95 {_pct(build_ms, 0.95):.1f} ms")
    print(f"{'tool':42} {'p50 ms':>8} {'p95 ms':>8} {'p50 via call_tool':>18} {'p50 thread CPU ms':>18}")
    for name, xs in direct.items():
        print(
            f"{name:42} {_pct(xs, 0.5):8.2f} {_pct(xs, 0.95):8.2f} {_pct(via_call[name], 0.5):18.2f} "
            f"{_pct(cpu[name], 0.5):18.2f}"
        )
    ours, theirs = sum(s[0] for s in sizes), sum(s[1] for s in sizes)
    ratios = [a / b for a, b in sizes if b]
    print(
        f"rendered chars vs pandas to_string: total {ours:,} vs {theirs:,} = {ours / max(theirs, 1):.2f}x "
        f"(per call median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x; target <= 0.5x)"
    )


def _render_sizes(ctx: ToolContext) -> list[tuple[int, int]]:
    """(our characters, pandas to_string characters) for the same rows, for several tables."""
    out = []
    for table in ("labevents", "prescriptions", "emar", "chartevents", "inputevents", "admissions"):
        if not ctx.episode.has_table(table):
            continue
        args = {"table_name": table, "start_time": "1900-01-01", "end_time": "2300-01-01"}
        result = get_tool("ehr.get_records_by_time").fn(ctx, **args)
        rows = result.data["rows"]
        if not rows:
            continue
        frame = pd.DataFrame(rows, columns=result.data["columns"])
        out.append((len(result.content), len(frame.to_string(index=False))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--store", type=Path, action="append", help="benchmark this store instead")
    args = parser.parse_args()
    if args.store:
        for store in args.store:
            bench_store(store, args.episodes)
        return
    from clinseek.store import synthesize  # type: ignore[attr-defined]

    with tempfile.TemporaryDirectory() as tmp:
        for n in args.patients:
            store = Path(tmp) / f"synthetic_{n}.duckdb"
            started = time.perf_counter()
            synthesize(out=store, patients=n, seed=7)
            print(f"synthesized {n} patients in {time.perf_counter() - started:.0f} s")
            bench_store(store, args.episodes)


if __name__ == "__main__":
    main()
