"""The AgentEHR-Bench builders: the six tasks drawn from any store, labels read only from what the policy hides.

The cutoffs follow AgentEHR's generator (BlueZeros/AgentEHR ``meta_sql_data_generation.py``): one minute
before the next lab draw, microbiology specimen, prescription or transfer; two minutes before discharge
for the admission's diagnoses; 23:58 of a procedure date for that date's procedures. Every label item
comes from ``Policy.future_select`` at the question's episode key (see :mod:`clinseek.bench._future`), so
it is by construction something the episode does not show.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from ._anchor import Anchor, BuildContext
from ._decision import _LAB, Labelled, NextBatch, _diagnosis_codes, _key
from ._tasks import CATEGORIES, TaskSpec
from ._vocab import icd_procedure_to_ccs, icd_to_ccs

AGENTEHR_PER_TASK = 100
"""Questions per task of the released evaluation set (subset600: 6 x 100)."""

_ONE_MINUTE = dt.timedelta(minutes=1)
_BEFORE_DISCHARGE = dt.timedelta(minutes=2)


def _batch(base: NextBatch, **changes: Any) -> NextBatch:
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    return NextBatch(**{**fields, **changes, "lead": _ONE_MINUTE})


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
        codes = _diagnosis_codes(ctx, anchor)
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
        rows = ctx.future.rows("hosp.procedures_icd", _key(anchor), "f.hadm_id = ? AND f.chartdate = ?",
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


AGENTEHR_BUILDERS: dict[str, Callable[[BuildContext], Iterator[tuple[Anchor, tuple[str, ...]]]]] = {
    "diagnoses_ccs": diagnoses_ccs,
    "labevents": _batch(_LAB),
    "microbiologyevents": _batch(NextBatch("hosp.microbiologyevents", "f.test_name", encounter=None)),
    "procedures_ccs": procedures_ccs,
    "transfers": _batch(NextBatch("hosp.transfers", "f.careunit", where="f.eventtype = 'transfer'")),
    "prescriptions": _batch(NextBatch("hosp.prescriptions", "f.drug")),
}
"""Builder of each AgentEHR-Bench task (same names as :data:`clinseek.bench.AGENTEHR_TASKS`)."""

AGENTEHR_EXCLUSIONS: dict[str, Callable[[BuildContext], dict[str, int]]] = {
    "procedures_ccs": procedures_ccs_exclusions,
}

_CARD_TITLE = {c.slug: c.title for c in CATEGORIES if c.split == "text"}


def agentehr_row(spec: TaskSpec, anchor: Anchor, label: tuple[str, ...], index: int) -> dict[str, Any]:
    """A row in AgentEHR-Bench's schema (``label`` as ``[{"name": ...}]``) plus clinseek's provenance fields.

    ``target_hadm_id`` (a clinseek field) names the admission whose codes the episode hides; the cutoff is
    ``prediction_time`` (AgentEHR's own rows use the same name).
    """
    return {
        "qid": f"agentehr_{spec.name}_{index}",
        "subject_id": anchor.subject_id,
        "hadm_id": anchor.hadm_id,
        "prediction_time": anchor.prediction_time.strftime("%Y-%m-%d %H:%M:%S"),
        "task": spec.name,
        "category": _CARD_TITLE[spec.category],
        "label": [{"name": name} for name in label],
        "target_hadm_id": anchor.target_hadm_id,
        "source_file": "clinseek-build",
        "source_idx": index,
    }
