from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from clinseek.errors import RegistryError
from clinseek.schema import (
    KNOWN_AT,
    EventTime,
    Mask,
    Table,
    check_registry,
    class_masks,
    class_problems,
    get_table,
    tables,
)
from clinseek.schema._classes import with_class_masks
from clinseek.schema._model import parse_columns


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


# --- "known at" classes ------------------------------------------------------------------------


def test_every_column_of_every_table_has_a_known_at_class() -> None:
    missing = [f"{t.qualified}.{c.name}" for t in tables() for c in t.columns if c.known not in KNOWN_AT]
    assert not missing, f"columns without a 'known at' class: {missing}"
    assert all(class_problems(t) == [] for t in tables())


def test_a_column_without_a_class_fails_the_check() -> None:
    table = Table(
        "hosp",
        "new_table",
        "",
        parse_columns("subject_id INTEGER static, charttime TIMESTAMP event, x DOUBLE"),
        event_time=EventTime("t.charttime"),
    )
    assert class_problems(table) == ["hosp.new_table.x: no 'known at' class"]


@pytest.mark.parametrize(
    ("spec", "extra", "problem"),
    [
        ("v DOUBLE stored", {}, "class 'stored' but the table gives no instant for it"),
        ("v DOUBLE end", {}, "class 'end' but the table gives no instant for it"),
        ("v DOUBLE reference", {}, "class 'reference' but the table gives no instant for it"),
        ("v DOUBLE own_time", {}, "class 'own_time' needs a date or time column"),
        ("v DOUBLE encounter", {}, "class 'encounter' is for, and only for, ids"),
        ("hadm_id INTEGER event", {}, "class 'encounter' is for, and only for, ids"),
        ("v DOUBLE end", {"ends_at": "t.nowhere"}, "expression refers to unknown column t.nowhere"),
    ],
)
def test_a_class_the_table_cannot_apply_fails_the_check(
    spec: str, extra: dict[str, str], problem: str
) -> None:
    cols = parse_columns(f"subject_id INTEGER static, charttime TIMESTAMP event, {spec}")
    table = Table("hosp", "new_table", "", cols, event_time=EventTime("t.charttime"), **extra)  # type: ignore[arg-type]
    assert any(problem in p for p in class_problems(table)), class_problems(table)


def test_an_unknown_class_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="bad class or flags"):
        parse_columns("x DOUBLE later")


def test_masks_derive_from_the_classes_alone() -> None:
    for table in tables():
        assert table.masks == class_masks(table), table.qualified
        masked = {c for m in table.masks for c in m.columns} | {m.renumber for m in table.masks if m.renumber}
        if table.visibility in ("event", "static"):
            waiting = {
                c.name
                for c in table.columns
                if c.known in ("stored", "end", "reference", "encounter", "final")
            }
            assert masked == waiting, table.qualified
    with pytest.raises(RegistryError, match="derive from column classes"):
        with_class_masks(replace(get_table("hosp.labevents"), masks=(Mask(("value",), None),)))


def test_procedure_durations_wait_for_the_end() -> None:
    procedures = get_table("icu.procedureevents")
    for name in ("endtime", "value", "valueuom", "originalamount", "originalrate", "statusdescription"):
        assert procedures.column(name).known == "end", name
    assert procedures.column("starttime").known == "event"


def test_docs_policy_md_lists_every_column_with_its_class_and_reason() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "policy.md").read_text(encoding="utf-8")
    for table in tables():
        section = text.split(f"\n### `{table.qualified}`\n", 1)[1].split("\n### ", 1)[0]
        listed = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("| `") else []
            if len(cells) == 3:
                listed[cells[0].strip("`")] = (cells[1].strip("`"), cells[2])
        assert list(listed) == list(table.column_names), table.qualified
        for col in table.columns:
            assert listed[col.name][0] == col.known and listed[col.name][1], (table.qualified, col.name)


def test_the_shipped_concept_maps_are_the_mit_lcp_files() -> None:
    """Byte-for-byte the MIT-LCP mimic-code maps (as meds-etl 0.3.11 shipped them), with their license."""
    import hashlib
    from importlib import resources

    from clinseek.schema import CONCEPT_MAP_FILES, concept_map

    root = resources.files("clinseek.schema").joinpath("concept_map")
    want = {
        "d_labitems_to_loinc.csv": "20b2cefe2eb5a157c0c646b7f80ab595084e353d455e7cca350f381083f974da",
        "inputevents_to_rxnorm.csv": "562c28554f33bbc8e0525ae7be5172ec05630ff3580db958243050e437267788",
        "lab_itemid_to_loinc.csv": "2e4994fa858b55cae48286728fb6ba8dde019716080e34759fbde3d604d8ce64",
        "meas_chartevents_main.csv": "0727964c1593c5af714a722aec3d78e308b81cb59c4a9ed8787b69c5947da76a",
        "outputevents_to_loinc.csv": "e46a7b0e1ef4debcbd283d0c0fa8a698e761b36bd710eb69be3f1a1eed7ec103",
        "proc_datetimeevents.csv": "3432d3d84da0744329152a7af5e17937c9dd01b8c08bef74e519c929a09e2925",
        "proc_itemid.csv": "b77460531714501b0008f94574580dbf33724cee3de0f45186d149fe05cf04d0",
    }
    assert set(CONCEPT_MAP_FILES) == set(want)
    for name, digest in want.items():
        assert hashlib.sha256(root.joinpath(name).read_bytes()).hexdigest() == digest, name
    assert "MIT License" in root.joinpath("LICENSE.txt").read_text(encoding="utf-8")
    assert concept_map("d_labitems_to_loinc.csv")[0]["label"]
    with pytest.raises(KeyError, match="not a shipped concept map"):
        concept_map("waveforms-summary.csv")
