"""Curated Input rendered from demo episodes is byte for byte what it was (a golden comparison).

Rendering is tuned for speed (fewer store statements, column-wise formatting, labels joined in
Arrow); the text a model sees must not change with it. Each case renders one demo patient at one
cutoff (admission + 1 s, inside the stay, discharge + 1 s of the patient's last admission; some with
the target admission hidden) as the text timeline (a large and a small budget) or the multimodal
context, and compares the SHA-256 of the text and its block counts with the ones recorded before
the speed work (``python tests/bench/test_curated_golden.py STORE`` prints them for a new case).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from clinseek.bench import CuratedInput, Question, render_curated
from clinseek.episode import MM_POLICY, TEXT_POLICY, StoreReader, open_store_reader
from clinseek.models import ESTIMATE, TokenCounter
from clinseek.store import open_store

PATIENTS = (10035631, 10015931, 10014354, 10021487, 10007818, 10000032)
"""Demo patients with many labs, ED stays, ICU stays and microbiology, and one with little of each."""

# Session 14 (leak14b) re-recorded 32 cases: a prescription / pharmacy order is shown from greatest(starttime, the
# order's pharmacy entertime); compared text by text with the previous code: only prescription and pharmacy blocks
# moved (later block times, rows hidden until entered) and, within the budgets, the older blocks they displaced.
# Session 14 (attack14leak) re-recorded 8 cases: prescriptions/pharmacy/emar poe_id, poe_seq and pharmacy_id are
# NULL until the row they name is visible; checked field by field against main: only those values went blank.
# Session 15 re-recorded 47 cases: per-patient counters renumbered in each episode (poe_id / emar_id / poe_seq /
# emar_seq, clinseek.schema.Sequence) and an admission's procedure / HCPCS codes known together; compared text by
# text with the previous code: with every "<subject>-<n>" id replaced by a placeholder 25 of 48 texts are identical,
# 3 differ only in the order of rows within a block (ordered by the renumbered id), the 6 multimodal contexts only
# in the emar_seq / poe_seq numbers, and the 14 text timelines of 10021487 / 10035631 only in one older block fewer
# (the procedures of an earlier admission, charted on two days, now come at one instant).
GOLDEN: dict[str, str] = {
    "10035631_admit_16000": "aa6f5d5c820e9ab57d77f7bd 32/2454",
    "10035631_inside_16000": "a71d6a137d2d6ebd380e29de 30/2579",
    "10035631_inside_600": "b026f397d8661a743ea2a45e 1/2579",
    "10035631_inside_hidden_4000": "fe12e053cc92c43505690eaf 5/2579",
    "10035631_inside_exact4_4000": "0077eed7a1c84968be86473b 9/2579",
    "10035631_inside_exact1_4000": "fe12e053cc92c43505690eaf 5/2579",
    "10035631_inside_mm": "37e4f434d9b4d7ab480c5577 933/13871",
    "10035631_discharge_16000": "5039bad813c60f6349f9565f 73/5385",
    "10015931_admit_16000": "9213806854e0e7dc13c49515 31/1630",
    "10015931_inside_16000": "09affa3db696b1a8df0c8dd2 48/1846",
    "10015931_inside_600": "2f99edd8d84c9dd55f252122 4/1846",
    "10015931_inside_hidden_4000": "475a82280831479d72d25539 11/1846",
    "10015931_inside_exact4_4000": "4991b6b45bc1077caeed7c2a 20/1846",
    "10015931_inside_exact1_4000": "b4b96f0603b4afe1bd7a7c5a 9/1846",
    "10015931_inside_mm": "b698a7bb8db2a9b22b0bf84a 1021/6294",
    "10015931_discharge_16000": "c55a3c00447b3953e6ae2715 31/2551",
    "10014354_admit_16000": "8e5b3a1f80c2dd9214edca9e 50/6767",
    "10014354_inside_16000": "dc5d4d5153e2bd0af286902e 20/6803",
    "10014354_inside_600": "e57e8b315d88c2b0231e1516 2/6803",
    "10014354_inside_hidden_4000": "5555b8cd618d57cb564d5ea8 2/6803",
    "10014354_inside_exact4_4000": "341502bb82768248c6986232 9/6803",
    "10014354_inside_exact1_4000": "5555b8cd618d57cb564d5ea8 2/6803",
    "10014354_inside_mm": "cf97bae81f33d0983c565a44 1623/28962",
    "10014354_discharge_16000": "2836e388727b1d751129e5b5 33/6834",
    "10021487_admit_16000": "580ad53362b1753c3477799e 39/3262",
    "10021487_inside_16000": "7f19b448b2a9985321f07e08 44/3282",
    "10021487_inside_600": "1dad3fee3b10e5883058f99f 2/3282",
    "10021487_inside_hidden_4000": "2d86bac1d2100c1690291ac8 7/3282",
    "10021487_inside_exact4_4000": "8cc6bba48667e15f2d177eee 22/3282",
    "10021487_inside_exact1_4000": "011589b9a0559b8fa72da597 2/3282",
    "10021487_inside_mm": "3268c9db586f7c26f4456052 1094/9373",
    "10021487_discharge_16000": "db27c1be7e69e02c6f5f3552 39/3297",
    "10007818_admit_16000": "e9ff44ffca0f6a5561a6f932 2/2",
    "10007818_inside_16000": "b177c1e9ae70622bc518eac0 30/59",
    "10007818_inside_600": "5a065338d3d65fc411763334 2/59",
    "10007818_inside_hidden_4000": "e1da1fa063423dbdbdffba83 13/59",
    "10007818_inside_exact4_4000": "fce32540978c860d85af5949 22/59",
    "10007818_inside_exact1_4000": "2c1ef13f55a717f76c9eb1d2 9/59",
    "10007818_inside_mm": "c54f9a8dcef9f69f325dfbb8 222/222",
    "10007818_discharge_16000": "91baf87ea14274fc70123793 32/3585",
    "10000032_admit_16000": "1463d0d435c122513b456e87 42/371",
    "10000032_inside_16000": "249599b1eb3070e8efa35625 58/450",
    "10000032_inside_600": "f7cad607dfe921dff4ca75d2 3/450",
    "10000032_inside_hidden_4000": "4fec55844e8ef6c94642525f 16/450",
    "10000032_inside_exact4_4000": "c1ae2a032a6b936fe0e76aae 39/450",
    "10000032_inside_exact1_4000": "e536fbcd39097dd17a05f3c4 14/450",
    "10000032_inside_mm": "e68eea29c7632440cb29c585 812/1656",
    "10000032_discharge_16000": "13ea605b73ca143b1681d6ac 43/477",
}
"""Case name: SHA-256 of the text (first 24 hex digits), blocks shown / blocks total."""


def _cutoffs(store: Path) -> list[tuple[int, int, str, dt.datetime]]:
    con = open_store(store).connect()
    try:
        out = []
        for subject_id in PATIENTS:
            hadm_id, admit, disch = con.execute(
                "SELECT hadm_id, admittime, dischtime FROM hosp.admissions WHERE subject_id = $1 "
                "ORDER BY admittime DESC, hadm_id DESC LIMIT 1", [subject_id]
            ).fetchall()[0]
            inside = admit + min(dt.timedelta(hours=24), (disch - admit) / 2)
            for label, cutoff in (("admit", admit + dt.timedelta(seconds=1)), ("inside", inside),
                                  ("discharge", disch + dt.timedelta(seconds=1))):
                out.append((subject_id, hadm_id, label, cutoff))
        return out
    finally:
        con.close()


@dataclass(frozen=True)
class _Chars:
    """An exact token counter (as a server's tokenizer is) of ``len(text) // per`` tokens."""

    per: int
    exact: bool = True

    @property
    def name(self) -> str:
        return f"chars/{self.per}"

    def count(self, text: str) -> int:
        return len(text) // self.per


def _cases(store: Path) -> Iterator[tuple[str, Question, int, TokenCounter]]:
    """(case name, question, text budget, counter) of every golden case."""
    for subject_id, hadm_id, label, cutoff in _cutoffs(store):
        base = {
            "benchmark": "clinseek-bench-text", "source": "clinseek-build", "task": "Inpatient_Mortality",
            "task_type": "risk_prediction", "category": "mortality", "subject_id": subject_id,
            "prediction_time": cutoff, "policy": TEXT_POLICY, "label": ("no",), "candidates": ("yes", "no"),
        }
        name = f"{subject_id}_{label}"
        yield f"{name}_16000", Question.model_validate({**base, "qid": name}), 16_000, ESTIMATE
        if label == "inside":
            yield f"{name}_600", Question.model_validate({**base, "qid": name}), 600, ESTIMATE
            hidden = {**base, "qid": name, "hadm_id": hadm_id, "target_hadm_id": hadm_id}
            yield f"{name}_hidden_4000", Question.model_validate(hidden), 4_000, ESTIMATE
            # a server's count below and above the estimate: more blocks, then fewer, than the estimate fits
            yield f"{name}_exact4_4000", Question.model_validate({**base, "qid": name}), 4_000, _Chars(4)
            yield f"{name}_exact1_4000", Question.model_validate({**base, "qid": name}), 4_000, _Chars(1)
            mm = {**base, "qid": name, "benchmark": "clinseek-bench-mm", "task": "Image_Report_Finding",
                  "task_type": "multimodal", "category": "imaging", "policy": MM_POLICY,
                  "question_text": "Is there a pleural effusion?"}
            yield f"{name}_mm", Question.model_validate(mm), 16_000, ESTIMATE


def _digest(curated: CuratedInput) -> str:
    text = hashlib.sha256(curated.text.encode()).hexdigest()[:24]
    return f"{text} {curated.blocks_shown}/{curated.blocks_total}"


@pytest.fixture(scope="module")
def reader(demo_store: Path) -> Iterator[StoreReader]:
    with open_store_reader(demo_store) as opened:
        yield opened


def test_curated_input_is_byte_for_byte_the_recorded_text(demo_store: Path, reader: StoreReader) -> None:
    cases = list(_cases(demo_store))
    assert sorted(name for name, _, _, _ in cases) == sorted(GOLDEN)
    changed = []
    for name, question, budget, counter in cases:
        found = _digest(render_curated(question, reader, budget_tokens=budget, counter=counter))
        if found != GOLDEN[name]:
            changed.append(f"{name}: {found} (recorded {GOLDEN[name]})")
    assert not changed, "Curated Input changed:\n" + "\n".join(changed)


if __name__ == "__main__":  # print the digests of the current code (to record a new case)
    path = Path(sys.argv[1])
    with open_store_reader(path) as opened:
        for case, q, tokens, counter in _cases(path):
            print(f'    "{case}": "{_digest(render_curated(q, opened, budget_tokens=tokens, counter=counter))}",')
