"""EHRSQL 2024 conformance of ``ehr.run_sql_query``: SQLite gold SQL, run as written in sealed episodes.

Rebuilds the organisers' view of the MIMIC-IV demo over a clinseek store (``tests/tools/_ehrsql.py``:
a ``WITH`` prefix per patient, SQLite itself as the reference for what is reproducible), classes
every question of the train and valid splits, and runs each reproducible single-patient gold query
in its patient's episode through ``ehr.run_sql_query``. Prints, per split: the classes (with every
non-reproducible question's reason in ``--out``), executes % and correct % for each strategy, the
failures by class, and the latency the dialect layer adds to queries that need no rewrite.

Strategies (``--strategies``):
  detect     the tool as shipped: SQLite-only constructs read as SQLite before running, then a
             DuckDB bind failure read once more as SQLite;
  fallback   DuckDB first (the guard reads DuckDB only), SQLite only after a parse, analysis or
             bind failure;
  duckdb     no dialect layer (the guard's DuckDB reading only);
  transpile  ``sqlglot.transpile(read="sqlite", write="duckdb")`` alone, then the guard.

Run: ``.venv/bin/python benchmarks/ehrsql.py`` (ingests the demo from ``../shared/data`` into a
temporary store) or ``--store demo.duckdb``; ``--splits valid``; ``--label-map FILE`` (JSON
``{label: table}``: the organisers' label disambiguation list, when you have it, see docs/sql.md);
``--out report.json``. Needs ``../shared/data/samples/ehrsql-2024-mimic-iv-demo``.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import sqlglot

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "tools"))

from _ehrsql import Outcome, Recreation, load_split, process_answer  # noqa: E402

from clinseek.episode import EpisodeKey, build_episode  # noqa: E402
from clinseek.errors import ToolError  # noqa: E402
from clinseek.tools import Limits, ToolContext, call_tool, guard_sql  # noqa: E402
from clinseek.tools._query import run_query  # noqa: E402
from clinseek.tools._sqlite_dialect import SqliteDialect  # noqa: E402
from clinseek.tools._tables import available, resolve  # noqa: E402

STRATEGIES = ("detect", "fallback", "duckdb", "transpile")
LATENCY_SAMPLE = 300
"""Questions per split whose guard is timed with and without the dialect layer (evenly spread)."""
LIMITS = Limits(max_rows=1000, max_tool_chars=10_000_000, sql_timeout_s=30)


def _noop(tree: Any, sql: str) -> None:
    return None


def _guard(ctx: ToolContext, sql: str, dialect: Callable[..., Any]) -> str:
    return guard_sql(
        sql, functools.partial(resolve, ctx), available=available(ctx),
        prediction_time=ctx.episode.key.prediction_time, dialect=dialect,
    )  # fmt: skip


def _run(ctx: ToolContext, sql: str, strategy: str) -> tuple[str | None, str | None, bool]:
    """(processed answer, error, translated) of one query under one strategy."""
    if strategy == "detect":
        result = anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql})
        if not result.ok:
            return None, result.content, False
        return process_answer(result.data["rows"]), None, result.data.get("dialect") == "sqlite"
    now = ctx.episode.key.prediction_time
    try:
        if strategy == "transpile":
            sql = sqlglot.transpile(sql, read="sqlite", write="duckdb")[0]
        final = _guard(ctx, sql, _noop)
        return process_answer(run_query(ctx, final, from_model=True).rows), None, strategy == "transpile"
    except (ToolError, sqlglot.errors.SqlglotError) as err:
        if strategy != "fallback":
            return None, str(err), False
        try:
            final = _guard(ctx, sql, SqliteDialect(now, force=True))
            return process_answer(run_query(ctx, final, from_model=True).rows), None, True
        except ToolError as again:
            return None, f"{err} / then as SQLite: {again}", False


def _latency(ctx: ToolContext, sql: str, repeats: int) -> tuple[float, float]:
    """(the guard's time without the dialect layer, the best-of-``repeats`` time of the dialect hook
    itself on the guard's DuckDB parse tree), in seconds. Timing the hook alone keeps the figure
    free of the guard's own noise (its ~20 ms parse and regeneration)."""
    now = ctx.episode.key.prediction_time
    t0 = time.perf_counter()
    try:
        _guard(ctx, sql, _noop)
    except ToolError:
        pass  # the DuckDB reading alone may refuse what only the translation makes valid
    guard = time.perf_counter() - t0
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.SqlglotError:
        tree = None
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        SqliteDialect(now)(tree, sql)
        best = min(best, time.perf_counter() - t0)
    return guard, best


def run_split(
    rec: Recreation, data: Path, split: str, strategies: list[str], repeats: int, limit: int | None
) -> dict[str, Any]:
    items = load_split(data, split)
    started = time.perf_counter()
    outcomes = [rec.classify(it) for it in items]
    classes = collections.Counter(o.kind for o in outcomes)
    reproducible = [o for o in outcomes if o.kind == "reproducible"][:limit]
    timed = set(o.item.id for o in reproducible[:: max(1, len(reproducible) // LATENCY_SAMPLE)])
    by_subject: dict[int, list[Outcome]] = collections.defaultdict(list)
    for o in reproducible:
        by_subject[o.subject_id or 0].append(o)
    stats: dict[str, collections.Counter[str]] = {s: collections.Counter() for s in strategies}
    failures: dict[str, list[dict[str, Any]]] = {s: [] for s in strategies}
    added: list[float] = []
    guard_times: list[float] = []
    translate_times: list[float] = []
    absent_errors: list[str] = []
    for subject, group in sorted(by_subject.items()):
        key = EpisodeKey(subject, rec.prediction_times[subject])
        with build_episode(rec.store, key) as ep:
            ctx = ToolContext(ep, LIMITS)
            for o in group:
                sql = rec.prefix(subject, o.item.tables) + (o.item.sql or "")
                for strategy in strategies:
                    answer, error, translated = _run(ctx, sql, strategy)
                    ok = answer == o.item.answer
                    stats[strategy]["executes" if error is None else "errors"] += 1
                    stats[strategy]["correct" if ok else "not correct"] += 1
                    stats[strategy]["translated"] += translated
                    if strategy == "detect" and repeats and o.item.id in timed:
                        guard, hook = _latency(ctx, sql, repeats)
                        (translate_times if translated else added).append(hook)
                        if not translated:
                            guard_times.append(guard)
                    if not ok:
                        failures[strategy].append(
                            {"id": o.item.id, "sql": o.item.sql, "error": (error or "")[:400],
                             "answer": (answer or "")[:200], "gold": (o.item.answer or "")[:200]}
                        )  # fmt: skip
        for o in [x for x in outcomes if x.kind == "data_absent" and x.subject_id == subject][:1]:
            with build_episode(rec.store, EpisodeKey(subject, rec.prediction_times[subject])) as ep:
                result = anyio.run(
                    call_tool, ToolContext(ep, LIMITS), "ehr.run_sql_query",
                    {"sql_query": rec.prefix(subject, o.item.tables) + (o.item.sql or "")},
                )  # fmt: skip
                absent_errors.append("ok" if result.ok else result.content[:200])
    return {
        "split": split,
        "questions": len(items),
        "classes": dict(classes),
        "ran": len(reproducible),
        "reasons": {
            kind: [
                {"id": o.item.id, "question": o.item.question, "reason": o.reason}
                for o in outcomes
                if o.kind == kind
            ]
            for kind in ("cross_patient", "data_absent", "recreation_differs")
        },
        "strategies": {s: dict(c) for s, c in stats.items()},
        "failures": failures,
        "data_absent_errors": sorted(set(absent_errors)),
        "latency_ms": {
            "queries_without_rewrite": len(added),
            "dialect_added_median": 1000 * statistics.median(added) if added else None,
            "dialect_added_p95": 1000 * sorted(added)[int(0.95 * (len(added) - 1))] if added else None,
            "guard_median": 1000 * statistics.median(guard_times) if guard_times else None,
            "translation_added_median": 1000 * statistics.median(translate_times)
            if translate_times
            else None,
        },
        "seconds": time.perf_counter() - started,
    }


def _print(report: dict[str, Any]) -> None:
    n = report["ran"]
    print(f"\n== {report['split']}: {report['questions']} questions, {report['seconds']:.0f} s")
    for kind, count in sorted(report["classes"].items(), key=lambda kv: -kv[1]):
        print(f"  {kind:20s} {count:5d}")
    print(f"  reproducible single-patient questions run in episodes: {n}")
    for strategy, c in report["strategies"].items():
        print(
            f"  {strategy:10s} executes {100 * c.get('executes', 0) / max(n, 1):5.1f} %   "
            f"correct {100 * c.get('correct', 0) / max(n, 1):5.1f} % ({c.get('correct', 0)}/{n})   "
            f"translated {c.get('translated', 0)}"
        )
    for strategy, fails in report["failures"].items():
        kinds = collections.Counter((f["error"] or "wrong answer").split(":", 1)[0][:60] for f in fails)
        if kinds:
            print(f"  {strategy} failures by class: {dict(kinds.most_common(6))}")
    lat = report["latency_ms"]
    if lat["dialect_added_median"] is not None:
        print(
            f"  dialect layer, queries needing no rewrite ({lat['queries_without_rewrite']}): median added "
            f"{lat['dialect_added_median']:.3f} ms (p95 {lat['dialect_added_p95']:.3f} ms; the guard alone: median "
            f"{lat['guard_median']:.1f} ms); reading and translating SQLite when needed: median "
            f"{lat['translation_added_median'] or 0:.1f} ms"
        )
    if report["data_absent_errors"]:
        print(f"  data-absent questions in an episode: {report['data_absent_errors'][0]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--store", type=Path, help="a store ingested from the MIMIC-IV demo (default: ingest one)"
    )
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--splits", nargs="+", default=["valid", "train"])
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--label-map", type=Path, help="JSON {label: labevents|inputevents|prescriptions}")
    parser.add_argument(
        "--repeats", type=int, default=5, help="guard timings per query for the latency figure"
    )
    parser.add_argument("--limit", type=int, help="run only the first N reproducible questions per split")
    parser.add_argument("--out", type=Path, help="write the full report (every reason and failure) as JSON")
    args = parser.parse_args()
    data = args.shared / "samples" / "ehrsql-2024-mimic-iv-demo"
    strategies = [s for s in args.strategies.split(",") if s]
    unknown = set(strategies) - set(STRATEGIES)
    if unknown:
        parser.error(f"unknown strategies {sorted(unknown)}; choose from {', '.join(STRATEGIES)}")
    label_map = json.loads(args.label_map.read_text()) if args.label_map else None
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store
        if store is None:
            from clinseek.store import ingest

            store = Path(tmp) / "demo.duckdb"
            ingest(out=store, mimic_iv=args.shared / "mimic-iv-demo-2.2", progress=False)
        rec = Recreation(store, args.shared / "mimic-iv-demo-2.2", label_map)
        reports = []
        for split in args.splits:
            report = run_split(rec, data, split, strategies, args.repeats, args.limit)
            _print(report)
            reports.append(report)
    if args.out:
        args.out.write_text(
            json.dumps({"label_map": bool(label_map), "splits": reports}, indent=1, default=str)
        )
        print(f"\nfull report: {args.out}")


if __name__ == "__main__":
    main()
