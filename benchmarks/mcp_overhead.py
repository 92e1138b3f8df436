"""MCP overhead: tool-call latency and throughput through MCP against the direct tool path.

One sealed episode (the patient with the most lab rows of the store, cut at their last lab + 1 s) is
called three ways with the same calls:

- ``direct``: ``EpisodeSession.call_tool_async`` (what the agent loop calls);
- ``mcp-memory``: the SDK's in-memory client on ``clinseek.mcpserver.session_server`` of the same
  session (``clinseek run --tools mcp``), calls interleaved one for one with ``direct`` so that a
  loaded machine slows both alike; the overhead is the median of the paired differences, in wall
  time and in process CPU time (the work itself; on a loaded machine wall time adds queueing);
- ``mcp-http``: ``clinseek mcp http`` on loopback (uvicorn in a thread), ``--clients`` clients with
  their own bearer token of the same episode calling at once, ``--calls`` calls in all (bounded);
  against ``direct-concurrent``: the same number of concurrent callers on the session itself.

Reports calls/s and p50/p95 latency (ms) per route; target (issue 23): ``mcp-memory`` overhead
<= 2 ms p50 per call. ``--check`` exits 1 when the CPU-time overhead misses it. Wall times include waiting for a CPU on
a busy machine.
Run: ``.venv/bin/python benchmarks/mcp_overhead.py [--store S] [--calls 400] [--clients 4] [--check]`` (needs
the ``[mcp]`` extra; without ``--store`` a 200-patient synthetic store is built in a temporary folder).
"""

from __future__ import annotations

import argparse
import functools
import os
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import clinseek
from clinseek.mcpserver import EpisodeSpec, HttpSettings, http_app, mint_token, session_server
from clinseek.store import connect_store, synthesize

TARGET_OVERHEAD_MS = 2.0


def _episode(store: Path) -> EpisodeSpec:
    con = connect_store(store)
    try:
        subject, last = con.execute(
            "SELECT subject_id, max(charttime) + INTERVAL 1 SECOND FROM hosp.labevents GROUP BY subject_id "
            "ORDER BY count(*) DESC, subject_id LIMIT 1").fetchone() or (None, None)
    finally:
        con.close()
    if subject is None:
        raise SystemExit(f"{store}: no lab rows to build an episode from")
    return EpisodeSpec(store=store, subject_id=int(subject), prediction_time=last)


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ehr.get_table_names", {}),
    ("ehr.get_latest_records", {"table_name": "labevents"}),
    ("ehr.run_sql_query", {"sql_query": "SELECT itemid, count(*) AS n FROM hosp.labevents GROUP BY itemid "
                                        "ORDER BY n DESC LIMIT 10"}),
]
"""The calls each route makes in turn: a cheap one (the wire dominates), a record tool, a SQL query."""


def _stats(name: str, ms: list[float], wall_s: float) -> dict[str, Any]:
    q = statistics.quantiles(ms, n=20, method="inclusive")
    return {"route": name, "calls": len(ms), "calls_per_s": len(ms) / wall_s, "p50_ms": statistics.median(ms),
            "p95_ms": q[18]}


async def _timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def in_process(spec: EpisodeSpec, calls: int) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """``direct`` and ``mcp-memory`` interleaved; their stats and the medians of the paired differences
    (``wall_ms``, and ``cpu_ms``: process CPU time, the work itself whatever the machine's load)."""
    async with await clinseek.open_episode_async(spec.store, spec.subject_id or 0, spec.prediction_time) as session, \
            Client(session_server(session)) as client:
        for name, args in CALLS:  # warm both paths (schemas, first queries)
            await session.call_tool_async(name, args)
            await client.call_tool(name, args)
        wall: dict[str, list[float]] = {"direct": [], "mcp-memory": []}
        cpu: dict[str, list[float]] = {"direct": [], "mcp-memory": []}
        for i in range(calls):
            name, args = CALLS[i % len(CALLS)]
            routes = [("direct", functools.partial(session.call_tool_async, name, args)),
                      ("mcp-memory", functools.partial(client.call_tool, name, args))]
            for route, call in routes if i % 2 == 0 else routes[::-1]:  # alternate which goes first
                cpu_started = time.process_time()
                wall[route].append(await _timed(call))
                cpu[route].append((time.process_time() - cpu_started) * 1000)
    stats = [_stats(route, ms, sum(ms) / 1000) for route, ms in wall.items()]
    for row in stats:
        row["cpu_p50_ms"] = statistics.median(cpu[row["route"]])
    diffs = {kind: statistics.median(m - d for d, m in zip(v["direct"], v["mcp-memory"], strict=True))
             for kind, v in (("wall_ms", wall), ("cpu_ms", cpu))}
    return stats, diffs


@contextmanager
def _server(app: Any) -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


async def _concurrent(clients: int, calls: int, make: Callable[[int], Any]) -> tuple[list[float], float]:
    """``clients`` callers sharing ``calls`` calls; ``make(i)`` is an async context giving caller i's call."""
    ms: list[float] = []
    each = calls // clients

    async def caller(i: int) -> None:
        async with make(i) as call:
            await call(*CALLS[0])  # connect and warm
            for j in range(each):
                name, args = CALLS[j % len(CALLS)]
                ms.append(await _timed(functools.partial(call, name, args)))

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(clients):
            tg.start_soon(caller, i)
    return ms, time.perf_counter() - started


async def concurrent_direct(spec: EpisodeSpec, calls: int, clients: int) -> dict[str, Any]:
    async with await clinseek.open_episode_async(spec.store, spec.subject_id or 0, spec.prediction_time) as session:
        @asynccontextmanager
        async def make(i: int) -> Any:
            yield session.call_tool_async

        ms, wall = await _concurrent(clients, calls, make)
    return _stats("direct-concurrent", ms, wall)


def over_http(spec: EpisodeSpec, calls: int, clients: int, folder: Path) -> dict[str, Any]:
    tokens = folder / "tokens.json"
    token, _ = mint_token(tokens, spec, note="benchmark")
    app = http_app(tokens, HttpSettings(rate_per_s=1e6, burst=1_000_000))
    with _server(app) as url:
        @asynccontextmanager
        async def make(i: int) -> Any:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                yield client.call_tool

        ms, wall = anyio.run(lambda: _concurrent(clients, calls, make))
    return _stats(f"mcp-http ({clients} clients)", ms, wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, help="A clinseek store (default: a 200-patient synthetic one).")
    parser.add_argument("--calls", type=int, default=400, help="Calls per route (bounded load).")
    parser.add_argument("--clients", type=int, default=4, help="Concurrent HTTP clients (and direct callers).")
    parser.add_argument("--check", action="store_true", help=f"Exit 1 unless the in-process overhead p50 <= "
                                                             f"{TARGET_OVERHEAD_MS} ms.")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clinseek_mcp_bench_") as tmp:
        store = options.store
        if store is None:
            store = Path(tmp) / "synthetic.duckdb"
            synthesize(out=store, patients=200, seed=7)
        spec = _episode(store)
        print(f"episode: {spec.describe()} of {store}; {options.calls} calls per route over {len(CALLS)} tools")
        rows, diffs = anyio.run(lambda: in_process(spec, options.calls))
        rows.append(anyio.run(lambda: concurrent_direct(spec, options.calls, options.clients)))
        rows.append(over_http(spec, options.calls, options.clients, Path(tmp)))
    print(f"{'route':<24} {'calls':>6} {'calls/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'CPU p50 ms':>11}")
    for row in rows:
        cpu = f"{row['cpu_p50_ms']:>11.2f}" if "cpu_p50_ms" in row else f"{'':>11}"
        print(f"{row['route']:<24} {row['calls']:>6} {row['calls_per_s']:>9.1f} {row['p50_ms']:>8.2f} "
              f"{row['p95_ms']:>8.2f} {cpu}")
    print(f"mcp-memory overhead per call (median of paired differences): {diffs['cpu_ms']:.2f} ms CPU, "
          f"{diffs['wall_ms']:.2f} ms wall (target <= {TARGET_OVERHEAD_MS} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    if options.check and diffs["cpu_ms"] > TARGET_OVERHEAD_MS:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
