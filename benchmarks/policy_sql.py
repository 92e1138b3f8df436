"""What the policy's statement for one table costs beside a plain read of the patient's rows of that table.

Per patient table of the store: the CPU of the policy's statement (``Policy.visible_select``, run by the
store reader as a build runs it, encounter ids precomputed, with the store's row instants: ``policy``), the
same statement without the row instants (the parent joins and grouped lookups a store without them gets:
``joins``) and ``SELECT * FROM table WHERE subject_id = $1`` on the same reader (``plain``); then each
table's timeline statement (``Policy.timeline_select``, the last 3 days before the cutoff, with and without
the instants) and the build's survey (``Policy.visible_inventory_select``, with and without). Medians over the
keys and ``--repeats`` runs each, the variants (and ``before`` with ``--oracle``) alternating call by call so
that a change of load hits them alike. Every figure is CPU time of this process (``time.process_time``), not
wall time.

Keys: per patient (``--patients``, default the demo patients of ``question.py`` and the one with the most
eMAR rows) and per admission, cutoffs at admittime + 1 s, inside the stay (text policy, that admission the
target) and discharge + 1 s (MM policy, the patient's first CXR study linked where the store has one).

``--oracle`` also times the statements of ``tests/policy/oracle_sql.py`` (the policy's SQL before issue
22's statement work) and checks that they give the same number of rows.

Run: ``.venv/bin/python benchmarks/policy_sql.py --store S [--repeats 5] [--oracle] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clinseek.episode import open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import tables

PATIENTS = (10035631, 10015931, 10014354)


def keys(reader: Any, patients: tuple[int, ...]) -> list[EpisodeKey]:
    out = []
    for subject in patients:
        rows = reader._tuples(
            "SELECT hadm_id, admittime, dischtime FROM hosp.admissions WHERE subject_id = $1 ORDER BY admittime",
            [subject], what="read admissions",
        )
        studies: list[tuple[Any, ...]] = []
        if "cxr.metadata" in reader.present:
            studies = reader._tuples(
                "SELECT study_id, dicom_id FROM cxr.metadata WHERE subject_id = $1 ORDER BY study_id LIMIT 1",
                [subject], what="read studies",
            )
        linked = {"study_ids": (studies[0][0],), "dicom_ids": (studies[0][1],)} if studies else {}
        for hadm_id, admit, disch in rows:
            inside = admit + min(dt.timedelta(hours=24), (disch - admit) / 2)
            second = dt.timedelta(seconds=1)
            out += [
                EpisodeKey(subject, admit + second, TEXT_POLICY),
                EpisodeKey(subject, inside, TEXT_POLICY, target_hadm_id=hadm_id),
                EpisodeKey(subject, disch + second, MM_POLICY, **linked),
            ]
    return out


def oracle() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "policy"))
    import oracle_sql

    return oracle_sql


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--patients", type=int, nargs="*", default=list(PATIENTS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--oracle", action="store_true", help="also time the pre-change statements")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    old = oracle() if args.oracle else None
    times: dict[str, dict[str, list[float]]] = {}
    with open_store_reader(args.store) as reader:
        episode_keys = keys(reader, tuple(args.patients))
        for key in episode_keys:
            policy = get_policy(key.policy)
            encounters = reader.encounters(policy, key)
            for table in tables():
                if table.qualified not in reader.present or not table.is_patient_table:
                    continue
                new = policy.visible_select(
                    table, key, present=reader.present, encounters=encounters, instants=reader.instants
                )
                joins = policy.visible_select(table, key, present=reader.present, encounters=encounters)
                if new is None or joins is None:
                    continue
                runs: dict[str, Callable[[], Any]] = {
                    "policy": lambda q=new: reader._arrow(*q, what="policy"),
                    "joins": lambda q=joins: reader._arrow(*q, what="joins"),
                    "plain": lambda t=table.qualified, s=key.subject_id: reader._arrow(
                        f"SELECT * FROM {t} WHERE subject_id = $1", [s], what="plain"
                    ),
                }
                if old is not None:
                    before = old.visible_sql(
                        table, key, op=policy.operator, linked_only=policy.cxr_linked_only,
                        present=reader.present, encounters=encounters,
                    )
                    assert before is not None
                    assert reader._arrow(*before, what="old").num_rows == reader._arrow(*new, what="new").num_rows
                    runs["before"] = lambda q=before: reader._arrow(*q, what="before")
                _time(runs, times.setdefault(table.qualified, {name: [] for name in runs}), args.repeats)
                window = {"since": key.prediction_time - dt.timedelta(days=3), "until": key.prediction_time}
                line = policy.timeline_select(
                    table, key, present=reader.present, encounters=encounters, instants=reader.instants, **window
                )
                line_joins = policy.timeline_select(table, key, present=reader.present, encounters=encounters, **window)
                assert line is not None and line_joins is not None
                runs = {
                    "policy": lambda q=line: reader._tuples(*q, what="timeline"),
                    "joins": lambda q=line_joins: reader._tuples(*q, what="timeline joins"),
                }
                _time(runs, times.setdefault(f"timeline {table.qualified}", {name: [] for name in runs}), args.repeats)
            survey = policy.visible_inventory_select(
                key, present=reader.present, indexed=reader.indexed, instants=reader.instants
            )
            survey_joins = policy.visible_inventory_select(key, present=reader.present, indexed=reader.indexed)
            assert survey is not None and survey_joins is not None
            runs = {
                "policy": lambda q=survey: reader._arrow(*q, what="survey"),
                "joins": lambda q=survey_joins: reader._arrow(*q, what="survey joins"),
            }
            _time(runs, times.setdefault("survey (inventory)", {name: [] for name in runs}), args.repeats)
    names = ["policy", "joins", *(["before"] if old is not None else []), "plain"]
    print(f"{len(episode_keys)} keys x {args.repeats} repeats; CPU ms, median per statement; "
          f"row instants for {len(reader.instants)} tables")
    print(f"{'statement':38s}" + "".join(f"{n:>9s}" for n in names) + "  joins/policy  policy/plain")
    totals: dict[str, dict[str, float]] = {}
    summary = {}
    for name, per in sorted(times.items()):
        med = {n: statistics.median(per[n]) for n in names if n in per}
        summary[name] = med
        kind = "timeline" if name.startswith("timeline ") else "survey" if name.startswith("survey") else "select"
        for n, value in med.items():
            totals.setdefault(kind, {}).setdefault(n, 0.0)
            totals[kind][n] += value
        print(f"{name:38s}" + "".join(f"{med[n]:9.2f}" if n in med else f"{'':9s}" for n in names)
              + f"  {med['joins'] / med['policy']:11.2f}x" + (f"  {med['policy'] / med['plain']:10.2f}x" if "plain" in med else ""))
    for kind, total in totals.items():
        print(f"{'sum of medians, ' + kind:38s}" + "".join(f"{total[n]:9.2f}" if n in total else f"{'':9s}" for n in names)
              + f"  {total['joins'] / total['policy']:11.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"tables": summary, "totals": totals, "keys": len(episode_keys)}, indent=1))


def _time(runs: dict[str, Callable[[], Any]], per: dict[str, list[float]], repeats: int) -> None:
    """Each run once untimed (DuckDB's parse cached, as a build finds it after its first episode), then
    ``repeats`` rounds of all of them alternating, CPU ms appended to ``per``."""
    for fn in runs.values():
        fn()
    for _ in range(repeats):
        for name, fn in runs.items():
            started = time.process_time()
            fn()
            per[name].append((time.process_time() - started) * 1000)


if __name__ == "__main__":
    main()
