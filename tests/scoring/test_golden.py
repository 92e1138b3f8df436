"""A golden file pins every per-sample score of a handmade results file (route, values, canonical items)."""

from __future__ import annotations

import json
from pathlib import Path

from clinseek.scoring import read_score_inputs, score_sample

DATA = Path(__file__).parent / "data"
RESULTS = DATA / "golden" / "synthetic" / "agent" / "model-a" / "results.jsonl"


def test_per_sample_scores_match_the_golden_file() -> None:
    golden = [json.loads(line) for line in (DATA / "golden_sample_scores.jsonl").read_text().splitlines()]
    got = [score_sample(row).model_dump(mode="json", exclude={"usage", "f1_reference", "parse_mode"}) for row in read_score_inputs(RESULTS)]
    assert [g["qid"] for g in got] == [g["qid"] for g in golden]
    mismatched = [(want["qid"], want, have) for want, have in zip(golden, got, strict=True) if want != have]
    assert not mismatched, mismatched[:3]
