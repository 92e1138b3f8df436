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
GOLDEN: dict[str, str] = {
    "10035631_admit_16000": "854f2b75a35b9eee1201ef53 32/2455",
    "10035631_inside_16000": "d9c6b4b7dbf6a561f6e6f5ca 30/2580",
    "10035631_inside_600": "d175cda2510985859f1830b3 1/2580",
    "10035631_inside_hidden_4000": "f66718eb6927750783a4bbbf 5/2580",
    "10035631_inside_exact4_4000": "43fb417545a5fbc72b68d540 9/2580",
    "10035631_inside_exact1_4000": "f66718eb6927750783a4bbbf 5/2580",
    "10035631_inside_mm": "274b2eb02f315578dc988c0f 933/13871",
    "10035631_discharge_16000": "0824a5559328c0a1c3cd16c7 73/5386",
    "10015931_admit_16000": "e864171765afb55a99e8d333 31/1630",
    "10015931_inside_16000": "3ccb57a10d44b8624f1d4c66 48/1846",
    "10015931_inside_600": "c33c68b9888abdaac82d75a4 4/1846",
    "10015931_inside_hidden_4000": "1d4e7fef633d40ea27d5136a 11/1846",
    "10015931_inside_exact4_4000": "7f6545289c915e0adb6a03c3 20/1846",
    "10015931_inside_exact1_4000": "5133869fe475b67955f70ea7 9/1846",
    "10015931_inside_mm": "4b3a8c040ab72fd9db60236c 1021/6294",
    "10015931_discharge_16000": "1e6b7e984c7eb4ce706714a2 31/2551",
    "10014354_admit_16000": "51707cb57406f6ffb4d4a5a8 50/6767",
    "10014354_inside_16000": "2f60d9029ac2a5e28fe9d96f 20/6803",
    "10014354_inside_600": "bb8b25430137e01e93168c98 2/6803",
    "10014354_inside_hidden_4000": "e2fd16e4ece15f69e53a12fb 2/6803",
    "10014354_inside_exact4_4000": "9a3ca6de5fa0eaa1e8120e68 9/6803",
    "10014354_inside_exact1_4000": "e2fd16e4ece15f69e53a12fb 2/6803",
    "10014354_inside_mm": "1fe272d63c7f30c75b462a3c 1623/28962",
    "10014354_discharge_16000": "bda1504f81717c2ac409c458 33/6834",
    "10021487_admit_16000": "62f7dd048739eddd88d688ee 39/3263",
    "10021487_inside_16000": "22b300fefa4177f86bb04179 44/3283",
    "10021487_inside_600": "55e26d469232ac6ab2908b45 2/3283",
    "10021487_inside_hidden_4000": "311dbebf468a29c58fdea720 7/3283",
    "10021487_inside_exact4_4000": "c8de1efa78b9e3ab53019b27 22/3283",
    "10021487_inside_exact1_4000": "ebb9b504e4868e0d47eded4a 2/3283",
    "10021487_inside_mm": "597ef7e349dcd9a236af0b5e 1094/9373",
    "10021487_discharge_16000": "39777ce82295d0e570f02800 39/3298",
    "10007818_admit_16000": "e9ff44ffca0f6a5561a6f932 2/2",
    "10007818_inside_16000": "21de51205db0669c44386f07 30/59",
    "10007818_inside_600": "56b9dcf9df60d7db307f71d7 2/59",
    "10007818_inside_hidden_4000": "1e6bf961991861e447248383 13/59",
    "10007818_inside_exact4_4000": "b0cddc89afb0eb19bf09623c 22/59",
    "10007818_inside_exact1_4000": "2ee38e2fea5374c34f7ae7a8 9/59",
    "10007818_inside_mm": "c8cc0029ef0717f3fad75686 222/222",
    "10007818_discharge_16000": "df46cca12d6138ad2793c372 32/3585",
    "10000032_admit_16000": "6649ae42d454bfc3971844c8 42/371",
    "10000032_inside_16000": "45e2690e0750d739ef85adb6 58/450",
    "10000032_inside_600": "1199e543e1ccdcf27f730bc9 3/450",
    "10000032_inside_hidden_4000": "f1feefcbba5b1001f6111c95 16/450",
    "10000032_inside_exact4_4000": "0e4e2835c6b06ad59eb93efc 39/450",
    "10000032_inside_exact1_4000": "3ccd47598c38bee18c6d1288 14/450",
    "10000032_inside_mm": "3fc7904ca5cac22dc0a7937d 812/1656",
    "10000032_discharge_16000": "876954647a7d45dda89a3a58 43/477",
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
