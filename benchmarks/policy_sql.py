"""What the policy's statement for one table costs beside a plain read of the patient's rows of that table.

Per patient table of the store: the CPU of the policy's statement (``Policy.visible_select``, run by the
store reader as a build runs it, encounter ids precomputed) against ``SELECT * FROM table WHERE subject_id =
$1`` on the same reader, median over the keys and ``--repeats`` runs each, the two (three with ``--oracle``)
alternating call by call so that a change of load hits them alike. Every figure is CPU time of this process
(``time.process_time``), not wall time.

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
                new = policy.visible_select(table, key, present=reader.present, encounters=encounters)
                if new is None:
                    continue
                runs: dict[str, Callable[[], Any]] = {
                    "policy": lambda q=new: reader._arrow(*q, what="policy"),
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
                for fn in runs.values():
                    fn()  # DuckDB's parse cached, as a build finds it after its first episode
                per = times.setdefault(table.qualified, {name: [] for name in runs})
                for _ in range(args.repeats):
                    for name, fn in runs.items():
                        started = time.process_time()
                        fn()
                        per[name].append((time.process_time() - started) * 1000)
    names = ["policy", *(["before"] if old is not None else []), "plain"]
    print(f"{len(episode_keys)} keys x {args.repeats} repeats; CPU ms, median per statement")
    print(f"{'table':28s}" + "".join(f"{n:>9s}" for n in names) + "  policy/plain")
    totals = dict.fromkeys(names, 0.0)
    summary = {}
    for name, per in sorted(times.items()):
        med = {n: statistics.median(per[n]) for n in names}
        summary[name] = med
        for n in names:
            totals[n] += med[n]
        print(f"{name:28s}" + "".join(f"{med[n]:9.2f}" for n in names) + f"  {med['policy'] / med['plain']:.2f}x")
    print(f"{'sum of medians':28s}" + "".join(f"{totals[n]:9.2f}" for n in names)
          + f"  {totals['policy'] / totals['plain']:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"tables": summary, "totals": totals, "keys": len(episode_keys)}, indent=1))


if __name__ == "__main__":
    main()
