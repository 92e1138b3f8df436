"""docs/scoring.md covers every row field, route and command, and the exports are pinned."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import clinseek.scoring as scoring
from clinseek.scoring import RESULT_FIELDS, Route

DOC = (Path(__file__).resolve().parents[2] / "docs" / "scoring.md").read_text(encoding="utf-8")


def test_every_result_field_is_documented() -> None:
    missing = [f for f in RESULT_FIELDS if f"| `{f}` |" not in DOC]
    assert not missing, f"docs/scoring.md has no row for {missing}"


def test_every_route_is_documented() -> None:
    missing = [r for r in get_args(Route) if f"| `{r}` |" not in DOC]
    assert not missing


def test_commands_are_documented() -> None:
    for command in ("clinseek score", "clinseek compare", "--layout reference", "--manifest", "--judge",
                    "--scorer reference", "--reference-vocab-model", "--card", "merged_unique.jsonl"):
        assert command in DOC


def test_exports_are_unique_and_exist() -> None:
    assert len(set(scoring.__all__)) == len(scoring.__all__)
    assert all(hasattr(scoring, name) for name in scoring.__all__)
    assert {"ScoreInput", "read_score_inputs", "read_reference_results", "score_path", "compare_paths"} <= set(
        scoring.__all__
    )
