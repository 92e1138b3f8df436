from __future__ import annotations

import pytest

from clinseek.errors import RegistryError
from clinseek.schema import check_registry, get_table, tables


def test_registry_is_consistent() -> None:
    assert check_registry() == []


def test_every_module_is_covered() -> None:
    names = {t.qualified for t in tables()}
    for expected in (
        "hosp.patients",
        "hosp.labevents",
        "hosp.provider",
        "icu.chartevents",
        "icu.caregiver",
        "ed.edstays",
        "ed.pyxis",
        "note.discharge",
        "note.radiology_detail",
        "cxr.metadata",
        "cxr.chexpert",
        "cxr.negbio",
        "cxr.split",
        "cxr.reports",
    ):
        assert expected in names


def test_bare_names_resolve_and_ambiguous_names_fail() -> None:
    assert get_table("labevents").qualified == "hosp.labevents"
    with pytest.raises(RegistryError, match="unknown table"):
        get_table("no_such_table")
    assert get_table("icu.icustays").key == ("stay_id",)


def test_codes_assigned_after_discharge_inherit_dischtime() -> None:
    dx = get_table("hosp.diagnoses_icd")
    assert dx.event_time is not None and dx.event_time.parent is not None
    assert dx.event_time.parent.table == "hosp.admissions"
    assert dx.event_time.parent.time == "t.dischtime"
    assert dx.target_key == "hadm_id"


def test_label_sources_are_never_visible() -> None:
    for name in ("cxr.chexpert", "cxr.negbio", "cxr.split"):
        assert get_table(name).visibility == "never"


def test_outcome_columns_are_masked() -> None:
    masked = {c for m in get_table("hosp.admissions").masks for c in m.columns}
    assert {"dischtime", "deathtime", "discharge_location", "hospital_expire_flag"} <= masked
    masked = {c for m in get_table("icu.icustays").masks for c in m.columns}
    assert {"outtime", "los", "last_careunit"} <= masked
