"""Policy versions, the episode key, the Python-side rule, and docs/policy.md."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from clinseek.errors import PolicyError
from clinseek.policy import (
    MM_POLICY,
    POLICY_VERSIONS,
    TEXT_POLICY,
    EpisodeKey,
    get_policy,
    policy_markdown,
)
from clinseek.schema import get_table, tables

DOCS = Path(__file__).resolve().parents[2] / "docs" / "policy.md"


def test_versions() -> None:
    assert POLICY_VERSIONS == (TEXT_POLICY, MM_POLICY)
    text, mm = get_policy(TEXT_POLICY), get_policy(MM_POLICY)
    assert (text.inclusive, text.cxr_linked_only, text.operator) == (False, False, "<")
    assert (mm.inclusive, mm.cxr_linked_only, mm.operator) == (True, True, "<=")


def test_unknown_version_is_refused() -> None:
    with pytest.raises(PolicyError, match="unknown policy version 'v0'"):
        get_policy("v0")
    with pytest.raises(PolicyError, match="unknown policy version"):
        EpisodeKey(1, datetime(2150, 1, 1), policy="v0")


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"subject_id": "1"}, "subject_id"),
        ({"subject_id": True}, "subject_id"),
        ({"prediction_time": date(2150, 1, 1)}, "prediction_time"),
        ({"prediction_time": datetime(2150, 1, 1, tzinfo=UTC)}, "naive"),
        ({"target_hadm_id": 1.5}, "target_hadm_id"),
        ({"study_ids": [1]}, "study_ids"),
        ({"dicom_ids": (1,)}, "dicom_ids"),
    ],
)
def test_bad_keys_are_refused(fields: dict[str, object], match: str) -> None:
    base: dict[str, object] = {"subject_id": 1, "prediction_time": datetime(2150, 1, 1)}
    with pytest.raises(PolicyError, match=match):
        EpisodeKey(**{**base, **fields})  # type: ignore[arg-type]


def test_sees_applies_inclusivity_and_end_of_day() -> None:
    t = datetime(2150, 6, 10, 12)
    text, mm = get_policy(TEXT_POLICY), get_policy(MM_POLICY)
    assert not text.sees(t, t) and mm.sees(t, t)
    assert text.sees(date(2150, 6, 9), t) and not text.sees(date(2150, 6, 10), t)
    assert mm.sees(date(2150, 6, 9), datetime(2150, 6, 10)) and not text.sees(
        date(2150, 6, 9), datetime(2150, 6, 10)
    )
    assert not text.sees(None, t)


def test_every_visible_select_names_the_subject_and_cutoff() -> None:
    key = EpisodeKey(1, datetime(2150, 1, 1), target_hadm_id=3, target_stay_id=4)
    for policy in (TEXT_POLICY, MM_POLICY):
        k = EpisodeKey(1, key.prediction_time, policy, 3, 4, (5,), ("x",))
        for table in tables():
            query = get_policy(policy).visible_select(table, k)
            if table.visibility == "never":
                assert query is None
            elif table.visibility == "dictionary":
                assert query is not None and query[1] == []
            else:
                assert query is not None
                assert "t.subject_id = $1" in query[0] and query[1][:2] == [1, k.prediction_time], (
                    table.qualified
                )


def test_absent_parent_hides_the_child_and_absent_mask_source_nulls_the_column() -> None:
    key = EpisodeKey(1, datetime(2150, 1, 1))
    policy = get_policy(TEXT_POLICY)
    assert policy.visible_select(get_table("ed.triage"), key, present={"ed.triage"}) is None
    query = policy.visible_select(get_table("ed.edstays"), key, present={"ed.edstays"})
    assert query is not None and 'CAST(NULL AS INTEGER) AS "hadm_id"' in query[0]


def test_docs_policy_md_matches_the_registry() -> None:
    assert DOCS.read_text(encoding="utf-8") == policy_markdown(), (
        "regenerate docs/policy.md with policy_markdown()"
    )
    text = DOCS.read_text(encoding="utf-8")
    for table in tables():
        assert f"`{table.qualified}`" in text
