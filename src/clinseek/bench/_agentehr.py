"""The six AgentEHR-Bench tasks: their declarations (:data:`AGENTEHR_TASKS`) and builders, for any store.

The cutoffs follow AgentEHR's generator (BlueZeros/AgentEHR ``meta_sql_data_generation.py``): one minute
before the next lab draw, microbiology specimen, prescription or transfer; two minutes before discharge
for the admission's diagnoses; 23:58 of a procedure date for that date's procedures. Every label item
comes from ``Policy.future_select`` at the question's episode key (see :mod:`clinseek.bench._future`), so
it is by construction something the episode does not show.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, Literal

from ._anchor import Anchor, BuildContext
from ._batch import Labelled, NextBatch, text_key
from ._decision import CCS_MAP, LAB_BATCH, diagnosis_codes
from ._spec import AGENTEHR_SOURCE, AgentRole, Builder, CandidateTable, TaskSpec
from ._vocab import ccs_names, ccs_procedure_names, icd_procedure_to_ccs, icd_to_ccs

AGENTEHR_PER_TASK = 100
"""Questions per task of the released evaluation set (subset600: 6 x 100)."""

_ONE_MINUTE = dt.timedelta(minutes=1)
_BEFORE_DISCHARGE = dt.timedelta(minutes=2)


def diagnoses_ccs(ctx: BuildContext) -> Labelled:
    """diagnoses_ccs: CCS categories of an admission's codes, asked two minutes before its discharge."""
    sql = (
        "SELECT a.subject_id, a.hadm_id, a.dischtime FROM hosp.admissions a WHERE a.dischtime IS NOT NULL "
        f"AND a.dischtime - INTERVAL {int(_BEFORE_DISCHARGE.total_seconds())} SECOND > a.admittime "
        "AND EXISTS (SELECT 1 FROM hosp.diagnoses_icd c WHERE c.hadm_id = a.hadm_id)"
    )
    for r in ctx.shuffled(ctx.query(sql)):
        anchor = Anchor(r["subject_id"], r["dischtime"] - _BEFORE_DISCHARGE, hadm_id=r["hadm_id"],
                        target_hadm_id=r["hadm_id"])
        codes = diagnosis_codes(ctx, anchor)
        yield anchor, tuple(sorted({n for c, v in codes for n in icd_to_ccs(c, v)}))


def procedures_ccs(ctx: BuildContext) -> Labelled:
    """procedures_ccs: CCS categories of one procedure date's codes, asked at 23:58 that day.

    Dates with an ICD-9-CM code are not drawn (no offline ICD-9-CM procedure map), nor dates with a code
    outside the FY2019 ICD-10-PCS map (the label would be partial).
    """
    sql = (
        "SELECT subject_id, hadm_id, chartdate FROM hosp.procedures_icd WHERE hadm_id IS NOT NULL "
        "AND chartdate IS NOT NULL GROUP BY subject_id, hadm_id, chartdate HAVING bool_and(icd_version = 10)"
    )
    for r in ctx.shuffled(ctx.query(sql)):
        cutoff = dt.datetime.combine(r["chartdate"], dt.time(23, 58))
        anchor = Anchor(r["subject_id"], cutoff, hadm_id=r["hadm_id"], target_hadm_id=r["hadm_id"])
        rows = ctx.future.rows("hosp.procedures_icd", text_key(anchor), "f.hadm_id = ? AND f.chartdate = ?",
                               [r["hadm_id"], r["chartdate"]])
        found = [icd_procedure_to_ccs(p["icd_code"], int(p["icd_version"])) for p in rows if p["icd_code"]]
        yield anchor, (tuple(sorted({n for names in found for n in names})) if found and all(found) else ())


def procedures_ccs_exclusions(ctx: BuildContext) -> dict[str, int]:
    """Store-wide counts of the procedure dates ``procedures_ccs`` never draws: ``dates_with_icd9``
    (a code in ICD-9-CM) and ``dates_unmapped_icd10_pcs`` (an ICD-10-PCS code outside the FY2019 map)."""
    sql = (
        "SELECT bool_or(icd_version = 9) AS any9, list(DISTINCT icd_code) FILTER (WHERE icd_version = 10) AS pcs "
        "FROM hosp.procedures_icd WHERE hadm_id IS NOT NULL AND chartdate IS NOT NULL "
        "GROUP BY subject_id, hadm_id, chartdate"
    )
    counts = dict.fromkeys(("dates_with_icd9", "dates_unmapped_icd10_pcs"), 0)
    for r in ctx.query(sql):
        if r["any9"]:
            counts["dates_with_icd9"] += 1
        elif not all(icd_procedure_to_ccs(c, 10) for c in r["pcs"] or ()):
            counts["dates_unmapped_icd10_pcs"] += 1
    return counts


_ONE_MINUTE_BEFORE = (
    "one minute before an event time t* of the patient's {what} (AgentEHR: t* - 1 min); the rows at t* are hidden"
)
_AT_T_STAR = "the distinct {what} of the rows whose event time equals t*, read from future_select({table})"
_OTHERS = (
    "SELECT {column} AS candidate, {extra}count(DISTINCT subject_id) AS n, min(subject_id) AS only "
    "FROM {table} WHERE {column} IS NOT NULL{where} GROUP BY {column}"
)


def _others(table: str, column: str, *, extra: str = "", where: str = "", imported: tuple[str, ...] = ()
            ) -> CandidateTable:
    """A vocabulary without a MIMIC dictionary: each name with the number of patients who have it and, for
    names of one patient, that patient (the leave-one-patient-out rule reads only these two numbers)."""
    task = table.split(".")[1]
    sql = _OTHERS.format(column=column, extra=extra, table=table, where=where)
    return CandidateTable(imported or (f"{task}_candidates",), "others", sql, table)


def _agentehr(name: str, category: str, objective: str, role: AgentRole, tables: tuple[str, ...], when: str,
              label: str, candidates: str, build: Builder, table: CandidateTable, *,
              target: Literal["hadm_id", "stay_id"] | None = None, table3: bool = True,
              exclusions: Callable[[BuildContext], dict[str, int]] | None = None) -> TaskSpec:
    return TaskSpec(name, "agentehr-bench", "decision_making", category, objective, tables, when, label, candidates,
                    AGENTEHR_SOURCE, target, build=build, exclusions=exclusions, role=role, candidate_table=table,
                    table3=table3)


def _batch(base: NextBatch, **changes: Any) -> NextBatch:
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    return NextBatch(**{**fields, **changes, "lead": _ONE_MINUTE})


AGENTEHR_TASKS: tuple[TaskSpec, ...] = (
    _agentehr(
        "diagnoses_ccs", "diagnosis",
        "Predict the diagnoses (CCS categories) that will be coded for the current hospital admission.",
        AgentRole("an experienced diagnostician", "the diagnoses (CCS categories) the patient will receive"),
        ("hosp.admissions", "hosp.diagnoses_icd"),
        "two minutes before the admission's discharge (admissions.dischtime - 2 min, as AgentEHR); "
        "target_hadm_id hides the admission's codes",
        f"the CCS single-level category names (HCUP) of every diagnoses_icd code of target_hadm_id, from "
        f"future_select(hosp.diagnoses_icd); {CCS_MAP}",
        "diagnoses_ccs_candidates: the 262 CCS diagnosis categories, each with the hosp.d_icd_diagnoses codes "
        "(icd_code, icd_version, long_title) that map to it",
        diagnoses_ccs,
        CandidateTable(("diagnoses_ccs_candidates",), "coded",
                       "SELECT icd_code, icd_version, long_title FROM hosp.d_icd_diagnoses", "hosp.d_icd_diagnoses",
                       categories=ccs_names, mapper=icd_to_ccs),
        target="hadm_id",
    ),
    _agentehr(
        "labevents", "laboratory_microbiology",
        "Predict the laboratory tests that will be ordered next.",
        AgentRole("a laboratory specialist", "the laboratory tests that will be ordered next"),
        ("hosp.labevents",),
        _ONE_MINUTE_BEFORE.format(what="lab draws (labevents.charttime)"),
        _AT_T_STAR.format(what="hosp.d_labitems labels", table="hosp.labevents"),
        "labevents_candidates: hosp.d_labitems (label as candidate, itemid, fluid, category)",
        _batch(LAB_BATCH),
        CandidateTable(("labevents_candidates",), "dictionary",
                       "SELECT label AS candidate, itemid, fluid, category FROM hosp.d_labitems "
                       "WHERE label IS NOT NULL AND trim(label) <> '' ORDER BY label, itemid", "hosp.d_labitems"),
    ),
    _agentehr(
        "microbiologyevents", "laboratory_microbiology",
        "Predict the microbiology tests that will be ordered next.",
        AgentRole("a clinical microbiologist", "the microbiology tests that will be ordered next"),
        ("hosp.microbiologyevents",),
        _ONE_MINUTE_BEFORE.format(what="microbiology specimens (charttime, else chartdate + 24 h)"),
        _AT_T_STAR.format(what="test_name values", table="hosp.microbiologyevents"),
        "microbiologyevents_candidates: the test names (test_name, test_itemid) of the store's other patients "
        "(MIMIC-IV has no microbiology dictionary)",
        _batch(NextBatch("hosp.microbiologyevents", "f.test_name", encounter=None)),
        _others("hosp.microbiologyevents", "test_name", extra="min(test_itemid) AS test_itemid, "),
    ),
    _agentehr(
        "procedures_ccs", "procedure",
        "Predict the procedures (CCS categories) the patient will undergo on the current day.",
        AgentRole("a surgical planner", "the procedures (CCS categories) the patient will undergo"),
        ("hosp.procedures_icd",),
        "23:58 on a procedure date d of an admission (AgentEHR: chartdate 23:59 - 1 min); target_hadm_id hides "
        "the admission's codes; only dates whose codes are all ICD-10-PCS",
        "the CCS single-level procedure category names (HCUP CCS for ICD-10-PCS v2019.1) of the procedures_icd "
        "codes of target_hadm_id dated d, from future_select(hosp.procedures_icd); a date with a code outside "
        "the map is not drawn",
        "procedures_ccs_candidates: the 224 CCS procedure categories, each with the ICD-10-PCS codes of "
        "hosp.d_icd_procedures that map to it",
        procedures_ccs,
        CandidateTable(("procedures_ccs_candidates",), "coded",
                       "SELECT icd_code, icd_version, long_title FROM hosp.d_icd_procedures WHERE icd_version = 10",
                       "hosp.d_icd_procedures", categories=ccs_procedure_names, mapper=icd_procedure_to_ccs),
        target="hadm_id", exclusions=procedures_ccs_exclusions,
    ),
    _agentehr(
        "transfers", "encounter_flow",
        "Predict the care units the patient will be transferred to next.",
        AgentRole("a care coordinator", "the care units the patient will be transferred to next"),
        ("hosp.transfers",),
        _ONE_MINUTE_BEFORE.format(what="transfers (intime of an eventtype 'transfer' row)"),
        _AT_T_STAR.format(what="careunit values of eventtype 'transfer' rows", table="hosp.transfers"),
        "transfers_candidates: the care units of the store's other patients (MIMIC-IV has no care-unit "
        "dictionary)",
        _batch(NextBatch("hosp.transfers", "f.careunit", where="f.eventtype = 'transfer'")),
        _others("hosp.transfers", "careunit"),
    ),
    _agentehr(
        "prescriptions", "medication",
        "Predict the medications that will be prescribed next.",
        AgentRole("a clinical pharmacist", "the medications that will be prescribed next"),
        ("hosp.prescriptions",),
        _ONE_MINUTE_BEFORE.format(what="prescriptions (starttime)"),
        _AT_T_STAR.format(what="drug names", table="hosp.prescriptions").replace("event time", "starttime")
        + " (AgentEHR's definition: a back-dated prescription, entered into the pharmacy system after t*, is "
        "hidden until entered, never earlier than t*); AgentEHR names ATC classes (through NDC), for which no offline map exists, so built rows name "
        "drugs (an imported AgentEHR candidate_table.db brings its ATC table for AgentEHR's own rows)",
        "prescriptions_candidates: the drug names of the store's other patients (MIMIC-IV has no drug "
        "dictionary)",
        _batch(NextBatch("hosp.prescriptions", "f.drug", time="f.starttime")),
        _others("hosp.prescriptions", "drug", where=" AND trim(drug) <> ''",
                imported=("prescriptions_candidates", "prescriptions_atc_candidates")),
        table3=False,
    ),
)
"""The six AgentEHR-Bench tasks (subset600: 100 questions each), in the order of the paper's Table 3 (whose
average is over the first five; prescriptions is reported apart)."""

