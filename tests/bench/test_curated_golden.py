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

# Session 14 (attack14leak) re-recorded 8 cases: prescriptions/pharmacy/emar poe_id, poe_seq and pharmacy_id are
# NULL until the row they name is visible; checked field by field against main: only those values went blank.
GOLDEN: dict[str, str] = {
    "10035631_admit_16000": "ae25de6755b2059ec7230978 32/2443",
    "10035631_inside_16000": "bc8cb4269eca644ab41aa9c4 30/2568",
    "10035631_inside_600": "217c1a8e0ffdb968a59d1dc4 1/2568",
    "10035631_inside_hidden_4000": "566cf69fa3ff8e53fec50261 5/2568",
    "10035631_inside_exact4_4000": "8cbb3b5028f77007d6aecd38 9/2568",
    "10035631_inside_exact1_4000": "566cf69fa3ff8e53fec50261 5/2568",
    "10035631_inside_mm": "b9e3ce100caa843c37735529 933/13871",
    "10035631_discharge_16000": "8daae550d79718e7a564b232 73/5368",
    "10015931_admit_16000": "748ce0900a960b58ce51bd0c 31/1622",
    "10015931_inside_16000": "e57947323b25de69deb2ea9e 48/1838",
    "10015931_inside_600": "8d7825056d719a0a9b55486b 4/1838",
    "10015931_inside_hidden_4000": "55d159f1630ea5f9a7824103 11/1838",
    "10015931_inside_exact4_4000": "7a864ee7641dbb18d42feaa6 20/1838",
    "10015931_inside_exact1_4000": "c887cf1165fd46c37867f597 9/1838",
    "10015931_inside_mm": "6bdbb85d36ae0e810498188c 1021/6294",
    "10015931_discharge_16000": "c706221bec6812a13081609f 31/2543",
    "10014354_admit_16000": "3f5719a904f44b7f13ca307d 50/6723",
    "10014354_inside_16000": "b745949ecc9358b4b91d6e2a 20/6759",
    "10014354_inside_600": "c54b8cb017d68b80a58d3a23 2/6759",
    "10014354_inside_hidden_4000": "23331c1daff8ac988c947150 2/6759",
    "10014354_inside_exact4_4000": "4a04c916f64eda11c8e50a34 9/6759",
    "10014354_inside_exact1_4000": "23331c1daff8ac988c947150 2/6759",
    "10014354_inside_mm": "1fe272d63c7f30c75b462a3c 1623/28962",
    "10014354_discharge_16000": "f8c0dcd88b4b7c9237c99de4 31/6788",
    "10021487_admit_16000": "b64fa261a43dd753471e704d 40/3252",
    "10021487_inside_16000": "35538a78820d67dd221ad3fe 44/3270",
    "10021487_inside_600": "33af3fc3719fce979c8950f9 2/3270",
    "10021487_inside_hidden_4000": "f92191ebfa5f837f900ec3c0 7/3270",
    "10021487_inside_exact4_4000": "c919ef445413afb7536a91ec 20/3270",
    "10021487_inside_exact1_4000": "71d3521704808ea95374d521 2/3270",
    "10021487_inside_mm": "ae0f37ded1cfbbbf082993dc 1094/9373",
    "10021487_discharge_16000": "0f939a100812900a4848d8ee 39/3285",
    "10007818_admit_16000": "e9ff44ffca0f6a5561a6f932 2/2",
    "10007818_inside_16000": "21de51205db0669c44386f07 30/59",
    "10007818_inside_600": "56b9dcf9df60d7db307f71d7 2/59",
    "10007818_inside_hidden_4000": "1e6bf961991861e447248383 13/59",
    "10007818_inside_exact4_4000": "b0cddc89afb0eb19bf09623c 22/59",
    "10007818_inside_exact1_4000": "2ee38e2fea5374c34f7ae7a8 9/59",
    "10007818_inside_mm": "c8cc0029ef0717f3fad75686 222/222",
    "10007818_discharge_16000": "bb8e83b5008209e805569938 32/3581",
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
