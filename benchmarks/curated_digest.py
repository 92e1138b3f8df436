"""Digest of every Curated Input of the demo: to check that a change leaves the text byte for byte the same.

Per admission of the store (all patients): the text timeline at admission + 1 s, inside the stay (admission +
min(24 h, half the stay)) and discharge + 1 s at 16,000 tokens, inside the stay at 1,000 tokens with the
admission hidden, and the multimodal context inside the stay (the demo's 275 admissions: 1,375 packages).
Writes one line per package (case, SHA-256 of the text, blocks shown / total, source) to OUT and prints one
digest over all lines and the CPU time. Run it with two checkouts' interpreters and compare the digests
(``diff`` the OUT files to find a changed package):

    python benchmarks/curated_digest.py STORE OUT
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import time
from pathlib import Path

import duckdb

from clinseek.bench import Question, render_curated
from clinseek.episode import MM_POLICY, TEXT_POLICY, open_store_reader


def cases(store: Path) -> list[tuple[str, Question, int]]:
    """(case name, question, token budget) of every package."""
    with duckdb.connect(str(store), read_only=True) as con:
        admissions = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions ORDER BY subject_id, admittime, hadm_id"
        ).fetchall()
    out = []
    for subject_id, hadm_id, admit, disch in admissions:
        inside = admit + min(dt.timedelta(hours=24), (disch - admit) / 2)
        base = {
            "qid": f"{subject_id}_{hadm_id}", "benchmark": "clinseek-bench-text", "source": "clinseek-build",
            "task": "Inpatient_Mortality", "task_type": "risk_prediction", "category": "mortality",
            "subject_id": subject_id, "policy": TEXT_POLICY, "label": ("no",), "candidates": ("yes", "no"),
        }
        for label, cutoff in (("admit", admit + dt.timedelta(seconds=1)), ("inside", inside),
                              ("discharge", disch + dt.timedelta(seconds=1))):
            out.append((f"{subject_id}_{hadm_id}_{label}_16000", Question.model_validate({**base, "prediction_time": cutoff}), 16_000))
        hidden = {**base, "prediction_time": inside, "hadm_id": hadm_id, "target_hadm_id": hadm_id}
        out.append((f"{subject_id}_{hadm_id}_inside_hidden_1000", Question.model_validate(hidden), 1_000))
        mm = {**base, "prediction_time": inside, "benchmark": "clinseek-bench-mm", "task": "Image_Report_Finding",
              "task_type": "multimodal", "category": "imaging", "policy": MM_POLICY,
              "question_text": "Is there a pleural effusion?"}
        out.append((f"{subject_id}_{hadm_id}_inside_mm", Question.model_validate(mm), 16_000))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    total = hashlib.sha256()
    todo = cases(args.store)
    start = time.process_time()
    with open_store_reader(args.store) as reader, args.out.open("w") as out:
        for name, question, budget in todo:
            curated = render_curated(question, reader, budget_tokens=budget)
            line = (f"{name} {hashlib.sha256(curated.text.encode()).hexdigest()} "
                    f"{curated.blocks_shown}/{curated.blocks_total} {curated.source}\n")
            out.write(line)
            total.update(line.encode())
    print(f"{len(todo)} packages, digest {total.hexdigest()}, CPU {time.process_time() - start:.1f} s, "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
