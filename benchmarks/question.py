"""What a user pays per question: ``ehr.run_sql_query`` beside the reference's tool path, the whole
agent question, Curated Input, and each tool's first call, on the MIMIC-IV demo patients 10035631 and
10015931.

Every figure is **CPU time of this process** (``time.process_time``: all its threads, so DuckDB's
work, the worker-thread hop and any timer thread count), not wall time: the development machine is
shared and loaded, and CPU time is what the harness spends whatever else runs. Ratios are measured
in the same run, the two sides alternating call by call, so a change of load hits both alike.

1. **SQL path vs the reference** (the reference re-enacted in ``_reference_path.py``): 14 (patient,
   query) pairs (the 7 queries of ``SQL_QUERIES`` on each patient, cutoff one second after the
   patient's last discharge). Per pair: our ``ehr.run_sql_query`` on a warm episode (its tables
   loaded by a first call, not timed) against the reference's per-call path (in-memory SQLite of the
   named tables + pandas ``to_string``), median of ``--repeats`` calls each; the ratio is reference /
   ours. Also the first call of each SQL text in this process (the guard's verdict not yet cached).
   Output size: characters of our content against the reference's text for the same question.
2. **Whole question**: build the episode, run the 8 calls of ``SCRIPT``, each as its own model turn,
   through ``call_tool`` (the agent loop's path), close: CPU per question, p50 / p95 over the
   questions of ``questions()`` (each admission of both patients at admittime + 1 s, inside the stay
   and at discharge + 1 s: the cutoffs ClinSeek-Bench's tasks use). The question runs alone on its
   event loop, as a sync twin, the CLI or a script runs it: its calls run inline. Also the same
   question beside another task of its loop (as among a runner's questions): each turn one hand-off
   to a worker thread.
3. **Curated Input**: ``render_curated`` (episode build included) and the rendering alone.
4. **First call of each tool on a fresh episode** (build not included), and the cold
   ``ehr.get_event_counts_by_time``.

Targets (issue 22): SQL >= 10x the reference (median of the 14 pairs) and >= 5x on every pair; SQL
output <= 0.5x the reference's characters in total and <= 1x on every query; whole question <= 60 ms
CPU p50; Curated Input render <= 40 ms CPU p50; cold ``get_event_counts_by_time`` <= 10 ms.

Run: ``.venv/bin/python benchmarks/question.py [--store S] [--repeats 15] [--json OUT]``
(default: ingests the demo from ``../shared/data`` into a temporary store, ~10 s). Needs pandas
(dev extra).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _reference_path as reference
import pandas as pd

from clinseek import episode as episodes
from clinseek.bench import Question, render_curated
from clinseek.store import connect_store, ingest
from clinseek.tools import ToolContext, call_tool, get_tool

PATIENTS = (10035631, 10015931)

SQL_QUERIES: list[tuple[str, str, str]] = [
    # (name, clinseek SQL, reference SQL): the same question; the reference's labevents carries the
    # dictionary label itself, clinseek's joins d_labitems (what each system's model would write)
    ("admissions", "SELECT hadm_id, admittime, dischtime, admission_type FROM admissions ORDER BY admittime", ""),
    ("diagnosis count", "SELECT count(*) AS n FROM diagnoses_icd", ""),
    ("creatinine series", "SELECT charttime, valuenum, valueuom FROM labevents WHERE itemid = 50912 ORDER BY charttime", ""),
    ("max creatinine", "SELECT max(CAST(valuenum AS DOUBLE)) AS max_creatinine FROM labevents WHERE itemid = 50912", ""),
    ("latest prescriptions", "SELECT * FROM prescriptions ORDER BY starttime DESC, drug LIMIT 5", ""),
    (
        "latest emar",
        "SELECT charttime, medication, event_txt FROM emar ORDER BY charttime DESC, medication LIMIT 10",
        "",
    ),
    (
        "abnormal labs by label",
        "SELECT d.label, count(*) AS n FROM labevents l JOIN d_labitems d USING (itemid) WHERE l.flag = 'abnormal' "
        "GROUP BY d.label ORDER BY n DESC, d.label LIMIT 10",
        "SELECT label, count(*) AS n FROM labevents WHERE flag = 'abnormal' GROUP BY label ORDER BY n DESC, label LIMIT 10",
    ),
]

SCRIPT: list[tuple[str, dict[str, str]]] = [
    # a trajectory in the shape the agents produce: load, overview, schema, SQL, records, SQL, records
    ("ehr.load_ehr", {}),
    ("ehr.get_event_counts_by_time", {"start_time": "{week_before}", "end_time": "{cutoff}"}),
    ("ehr.get_column_names", {"table_name": "labevents"}),
    (
        "ehr.run_sql_query",
        {"sql_query": "SELECT l.charttime, d.label, l.valuenum, l.valueuom, l.flag FROM labevents l "
                      "JOIN d_labitems d USING (itemid) WHERE l.charttime >= TIMESTAMP '{two_days_before}' "
                      "ORDER BY l.charttime DESC LIMIT 50"},
    ),
    ("ehr.get_records_by_time", {"table_name": "prescriptions", "start_time": "{two_days_before}", "end_time": "{cutoff}"}),
    ("ehr.get_latest_records", {"table_name": "admissions"}),
    (
        "ehr.run_sql_query",
        {"sql_query": "SELECT hadm_id, icd_code, icd_version FROM diagnoses_icd ORDER BY hadm_id DESC, seq_num LIMIT 20"},
    ),
    ("ehr.get_records_by_keyword", {"table_name": "emar", "keyword": "insulin"}),
]

FIRST_CALLS: list[tuple[str, dict[str, str]]] = [
    ("ehr.load_ehr", {}),
    ("ehr.get_table_names", {}),
    ("ehr.get_column_names", {"table_name": "labevents"}),
    ("ehr.get_table_description", {"table_name": "labevents"}),
    ("ehr.get_unique_values", {"table_name": "labevents", "column_name": "label"}),
    ("ehr.get_records_by_time", {"table_name": "labevents", "start_time": "{two_days_before}", "end_time": "{cutoff}"}),
    ("ehr.get_event_counts_by_time", {"start_time": "{week_before}", "end_time": "{cutoff}"}),
    ("ehr.get_latest_records", {"table_name": "labevents"}),
    ("ehr.get_records_by_keyword", {"table_name": "labevents", "keyword": "blood"}),
    ("ehr.get_records_by_value", {"table_name": "labevents", "column_name": "itemid", "value": "50912"}),
    ("ehr.run_sql_query", {"sql_query": "SELECT count(*) AS n FROM labevents"}),
]


def cpu_ms(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and the process CPU it took (ms, every thread of this process)."""
    started = time.process_time()
    out = fn()
    return out, (time.process_time() - started) * 1000


def load() -> str:
    """The machine's load average (1, 5, 15 min) now, printed next to each figure: CPU time is robust to load,
    not immune to it (caches, frequency, hyper-threads)."""
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# ---------------------------------------------------------------- episodes (old and new API alike)


@contextmanager
def open_source(store: Path) -> Iterator[Any]:
    """A store reader when this clinseek has one (``clinseek.episode.open_store_reader``), else the path."""
    opener = getattr(episodes, "open_store_reader", None)
    if opener is None:
        yield store
        return
    with opener(store) as reader:
        yield reader


def build(source: Any, key: Any) -> Any:
    return episodes.build_episode(source, key)


# ---------------------------------------------------------------- questions


def admissions(store: Path, subject_id: int) -> list[tuple[int, dt.datetime, dt.datetime]]:
    con = connect_store(store)
    try:
        return [
            (int(h), a, d)
            for h, a, d in con.execute(
                "SELECT hadm_id, admittime, dischtime FROM hosp.admissions WHERE subject_id = ? ORDER BY admittime",
                [subject_id],
            ).fetchall()
        ]
    finally:
        con.close()


def questions(store: Path) -> list[Question]:
    """Per admission of each patient: admittime + 1 s, inside the stay, discharge + 1 s."""
    out = []
    for subject_id in PATIENTS:
        for hadm_id, admit, disch in admissions(store, subject_id):
            inside = admit + min(dt.timedelta(hours=24), (disch - admit) / 2)
            for label, cutoff in (("admit", admit + dt.timedelta(seconds=1)), ("inside", inside),
                                  ("discharge", disch + dt.timedelta(seconds=1))):
                out.append(Question(
                    qid=f"{subject_id}_{hadm_id}_{label}", benchmark="clinseek-bench-text", source="clinseek-build",
                    task="Inpatient_Mortality", task_type="risk_prediction", category="mortality",
                    subject_id=subject_id, hadm_id=hadm_id, prediction_time=cutoff, policy="clinseek-text-v1",
                    candidates=("yes", "no"), label=("no",),
                ))
    return out


def last_cutoff(store: Path, subject_id: int) -> dt.datetime:
    return max(d for _, _, d in admissions(store, subject_id)) + dt.timedelta(seconds=1)


def fill(args: dict[str, str], cutoff: dt.datetime) -> dict[str, str]:
    values = {
        "cutoff": cutoff.isoformat(sep=" "),
        "week_before": (cutoff - dt.timedelta(days=7)).isoformat(sep=" "),
        "two_days_before": (cutoff - dt.timedelta(days=2)).isoformat(sep=" "),
    }
    return {k: v.format(**values) for k, v in args.items()}


def key_of(question: Question) -> Any:
    return episodes.EpisodeKey(question.subject_id, question.prediction_time, question.policy)


# ---------------------------------------------------------------- 1. SQL vs the reference


def bench_sql(store: Path, data: Path, tmp: Path, repeats: int, out: dict[str, Any]) -> None:
    sql_tool = get_tool("ehr.run_sql_query").fn
    dictionaries = reference.read_dictionaries(data)
    pairs = []
    with open_source(store) as source:
        for subject_id in PATIENTS:
            cutoff = last_cutoff(store, subject_id)
            folder = reference.write_patient_files(data, subject_id, tmp)
            ref_tables, ref_load_ms = cpu_ms(lambda folder=folder, cutoff=cutoff: reference.load_ehr(folder, cutoff, dictionaries))
            ep, build_ms = cpu_ms(lambda subject_id=subject_id, cutoff=cutoff: build(source, episodes.EpisodeKey(subject_id, cutoff)))
            with ep:
                ctx = ToolContext(ep)
                print(f"patient {subject_id}, cutoff {cutoff}: reference load_ehr {ref_load_ms:.0f} ms, "
                      f"clinseek episode build {build_ms:.1f} ms")
                for name, ours_sql, ref_sql in SQL_QUERIES:
                    ref_sql = ref_sql or ours_sql
                    first, first_ms = cpu_ms(lambda ctx=ctx, ours_sql=ours_sql: sql_tool(ctx, sql_query=ours_sql))
                    assert first.ok, (name, first.content)
                    ref_text = reference.run_sql_query(ref_tables, ref_sql)
                    assert not ref_text.startswith(("SQL Execution Error", "Error")), (name, ref_text)
                    ours_ms, ref_ms = [], []
                    for _ in range(repeats):
                        result, ms = cpu_ms(lambda ctx=ctx, ours_sql=ours_sql: sql_tool(ctx, sql_query=ours_sql))
                        ours_ms.append(ms)
                        _, ms = cpu_ms(lambda t=ref_tables, ref_sql=ref_sql: reference.run_sql_query(t, ref_sql))
                        ref_ms.append(ms)
                    pairs.append({
                        "patient": subject_id, "query": name, "ours_ms": statistics.median(ours_ms),
                        "ref_ms": statistics.median(ref_ms), "first_ms": first_ms,
                        "ours_chars": len(result.content), "ref_chars": len(ref_text),
                        "ours_rows": len(result.data.get("rows", [])), "ref_rows": max(0, len(ref_text.splitlines()) - 1),
                    })
    print(f"\n{'patient':>9} {'query':24} {'ours ms':>8} {'first':>7} {'ref ms':>8} {'ratio':>7} "
          f"{'ours ch':>8} {'ref ch':>7} {'size':>6} {'rows':>9}")
    for p in pairs:
        p["ratio"] = p["ref_ms"] / p["ours_ms"]
        p["size"] = p["ours_chars"] / p["ref_chars"]
        print(f"{p['patient']:>9} {p['query']:24} {p['ours_ms']:8.3f} {p['first_ms']:7.2f} {p['ref_ms']:8.2f} "
              f"{p['ratio']:6.1f}x {p['ours_chars']:8} {p['ref_chars']:7} {p['size']:5.2f}x "
              f"{p['ours_rows']:>4}/{p['ref_rows']:<4}")
    ratios = [p["ratio"] for p in pairs]
    sizes = [p["size"] for p in pairs]
    total = sum(p["ours_chars"] for p in pairs) / sum(p["ref_chars"] for p in pairs)
    first_ratio = statistics.median(p["ref_ms"] / p["first_ms"] for p in pairs)
    versions = f"pandas {pd.__version__}, SQLite {sqlite3.sqlite_version}"
    print(f"SQL CPU ratio reference/ours: median {statistics.median(ratios):.1f}x, min {min(ratios):.1f}x "
          f"(targets >= 10x, >= 5x); first call of each text: median {first_ratio:.1f}x [{load()}]")
    print(f"  the reference path ran on {versions} (its cost depends on them: pandas 3.1.1's to_sql / to_string cost "
          f"~1.5x pandas 2.2.3's, docs/performance.md, session 22)")
    print(f"SQL output chars ours/reference: total {total:.2f}x, max {max(sizes):.2f}x (targets <= 0.5x, <= 1x)")
    out["sql"] = {"load": os.getloadavg(), "pairs": pairs, "median_ratio": statistics.median(ratios), "min_ratio": min(ratios),
                  "first_call_median_ratio": first_ratio, "chars_total": total, "chars_max": max(sizes),
                  "reference_versions": versions}


# ---------------------------------------------------------------- 2-4. whole question, curated, first calls


async def _script(ctx: ToolContext, cutoff: dt.datetime, steps: dict[str, list[float]] | None = None) -> None:
    """The calls of ``SCRIPT`` through ``call_tool``; with ``steps``, each call's CPU (ms) appended under its step
    name (valid alone on the loop: the calls run inline, so the process' CPU between two stamps is the call's)."""
    for i, (name, args) in enumerate(SCRIPT):
        started = time.process_time()
        result = await call_tool(ctx, name, fill(args, cutoff))
        if steps is not None:
            steps.setdefault(f"{i + 1}. {name}", []).append((time.process_time() - started) * 1000)
        assert result.ok, (name, result.content)


async def _script_beside(ctx: ToolContext, cutoff: dt.datetime) -> None:
    """:func:`_script` while another task of the loop waits (as a runner's other questions do)."""
    done = asyncio.Event()
    waiting = asyncio.ensure_future(done.wait())
    try:
        await _script(ctx, cutoff)
    finally:
        done.set()
        await waiting


def bench_questions(store: Path, out: dict[str, Any]) -> None:
    qs = questions(store)
    whole: list[float] = []
    beside: list[float] = []
    curated: list[float] = []
    rendered: list[float] = []
    first: dict[str, list[float]] = {}
    steps: dict[str, list[float]] = {}
    loop = asyncio.new_event_loop()
    try:
        with open_source(store) as source:
            build(source, key_of(qs[0])).close()  # one-time process costs (imports, first DuckDB) untimed
            for q in qs:
                def question(q: Question = q) -> None:
                    started = time.process_time()
                    ep = build(source, key_of(q))
                    steps.setdefault("build", []).append((time.process_time() - started) * 1000)
                    with ep:
                        loop.run_until_complete(_script(ToolContext(ep), q.prediction_time, steps))
                        started = time.process_time()
                    steps.setdefault("close", []).append((time.process_time() - started) * 1000)

                def question_beside(q: Question = q) -> None:
                    with build(source, key_of(q)) as ep:
                        loop.run_until_complete(_script_beside(ToolContext(ep), q.prediction_time))

                whole.append(cpu_ms(question)[1])
                beside.append(cpu_ms(question_beside)[1])
                curated.append(cpu_ms(lambda q=q: render_curated(q, source))[1])
                with build(source, key_of(q)) as ep:
                    from clinseek.bench._curated import render_text_timeline

                    rendered.append(cpu_ms(lambda ep=ep: render_text_timeline(ep))[1])
                for name, args in FIRST_CALLS:
                    with build(source, key_of(q)) as ep:
                        ctx = ToolContext(ep)
                        _, ms = cpu_ms(lambda ctx=ctx, name=name, args=args, q=q:
                                            get_tool(name).fn(ctx, **fill(args, q.prediction_time)))
                        first.setdefault(name, []).append(ms)
    finally:
        loop.close()
    n = len(qs)
    print(f"\n{n} questions (patients {', '.join(map(str, PATIENTS))}; admit + 1 s, inside, discharge + 1 s)")
    print(f"whole question (build + {len(SCRIPT)} tool calls + close): CPU p50 {pct(whole, 0.5):.1f} ms, "
          f"p95 {pct(whole, 0.95):.1f} ms (target p50 <= 60 ms) [{load()}]")
    print("  per step (CPU ms; the record tools read a table not loaded yet with one statement on the store):")
    for name in ("build", *(k for k in steps if k[0].isdigit()), "close"):
        print(f"    {name:40} p50 {pct(steps[name], 0.5):7.2f}  p95 {pct(steps[name], 0.95):7.2f}")
    print(f"the same beside another task of its loop (each turn one worker-thread hand-off): CPU p50 "
          f"{pct(beside, 0.5):.1f} ms, p95 {pct(beside, 0.95):.1f} ms [{load()}]")
    print(f"Curated Input render_curated (build included): CPU p50 {pct(curated, 0.5):.1f} ms, "
          f"p95 {pct(curated, 0.95):.1f} ms (target p50 <= 40 ms) [{load()}]")
    print(f"Curated Input rendering alone: CPU p50 {pct(rendered, 0.5):.1f} ms, p95 {pct(rendered, 0.95):.1f} ms "
          f"[{load()}]")
    print("first call of each tool on a fresh episode (CPU ms, build not included):")
    for name, values in first.items():
        print(f"  {name:32} p50 {pct(values, 0.5):7.2f}  p95 {pct(values, 0.95):7.2f}")
    print(f"cold ehr.get_event_counts_by_time: p50 {pct(first['ehr.get_event_counts_by_time'], 0.5):.2f} ms "
          f"(target <= 10 ms) [{load()}]")
    out["questions"] = {
        "load": os.getloadavg(), "n": n, "whole_p50": pct(whole, 0.5), "whole_p95": pct(whole, 0.95),
        "beside_p50": pct(beside, 0.5), "beside_p95": pct(beside, 0.95),
        "curated_p50": pct(curated, 0.5), "curated_p95": pct(curated, 0.95),
        "rendering_p50": pct(rendered, 0.5), "rendering_p95": pct(rendered, 0.95),
        "first_call_p50": {k: pct(v, 0.5) for k, v in first.items()},
        "step_p50": {k: pct(v, 0.5) for k, v in steps.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=None, help="an ingested MIMIC-IV demo store (default: ingest one)")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    parser.add_argument("--only", choices=("sql", "questions"), default=None)
    args = parser.parse_args()
    out: dict[str, Any] = {"python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store
        if store is None:
            store = Path(tmp) / "demo.duckdb"
            ingest(out=store, mimic_iv=args.data / "mimic-iv-demo-2.2", ed=args.data / "mimic-iv-ed-demo-2.2", progress=False)
        if args.only in (None, "sql"):
            bench_sql(store, args.data, Path(tmp), args.repeats, out)
        if args.only in (None, "questions"):
            bench_questions(store, out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
