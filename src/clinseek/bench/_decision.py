"""The decision-making builders: "what comes next" items read only from future rows.

Most tasks are *next batch* tasks: pick an event time ``t*`` of the task's table for a patient
(the anchor), set ``prediction_time = t*`` (rows at ``t*`` are hidden under the strict text policy)
and take the distinct item names of the hidden rows whose event time equals ``t*``.
Coding tasks (diagnoses, procedures, ED diagnoses) ask from inside an encounter for the codes
that encounter will receive.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..policy import TEXT_POLICY, EpisodeKey
from ..schema import get_table, tables
from ._anchor import ONE_SECOND, Anchor, BuildContext
from ._vocab import ccs_names, icd_procedure_to_ccs, icd_to_ccs

Labelled = Iterator[tuple[Anchor, tuple[str, ...]]]
DecisionBuilder = Callable[[BuildContext], Labelled]


def _key(anchor: Anchor) -> EpisodeKey:
    return EpisodeKey(
        anchor.subject_id, anchor.prediction_time, TEXT_POLICY, anchor.target_hadm_id, anchor.target_stay_id
    )


def _names(values: list[object]) -> tuple[str, ...]:
    return tuple(sorted({str(v).strip() for v in values if v is not None and str(v).strip()}))


def _known_admission(sql: str, lead: dt.timedelta = dt.timedelta(0)) -> str:
    """Wrap an anchor query (subject_id, t_star, hadm_id) so hadm_id is kept only if that admission began
    before the cutoff (``t* - lead``).

    A row can carry the hadm_id of an admission that starts later (labs drawn in the ED before
    admission); naming it in the question would reveal that the patient is going to be admitted.
    """
    cutoff = f"s.t_star - INTERVAL {int(lead.total_seconds())} SECOND" if lead else "s.t_star"
    return (
        f"SELECT s.subject_id, s.t_star, CASE WHEN a.admittime < {cutoff} THEN s.hadm_id END AS hadm_id "
        f"FROM ({sql}) s LEFT JOIN hosp.admissions a ON a.hadm_id = s.hadm_id AND a.subject_id = s.subject_id"
    )


@dataclass(frozen=True, slots=True)
class NextBatch:
    """A next-batch task.

    Attributes:
        table: the qualified table.
        item: SQL for the item name over the row (alias ``f``) and an optional dictionary ``d``.
        join: dictionary join (``JOIN hosp.d_labitems d ON d.itemid = f.itemid``), or ``""``.
        encounter: anchor only rows with this column set (``hadm_id``/``stay_id``), or ``None``.
        linksto: for ICU item tables, the ``d_items.linksto`` value the candidates are limited to.
        where: a further condition on the rows (alias ``f``) both drawn from and labelled, e.g.
            ``f.eventtype = 'transfer'``.
        lead: the cutoff is this long before the event time t* (AgentEHR asks one minute before); the
            label is still the rows at exactly t*.
    """

    table: str
    item: str
    join: str = ""
    encounter: str | None = "hadm_id"
    linksto: str | None = None
    where: str = ""
    lead: dt.timedelta = dt.timedelta(0)

    @property
    def time_sql(self) -> str:
        """The table's event time over alias ``f`` (registry expression)."""
        et = get_table(self.table).event_time
        assert et is not None and et.parent is None
        return et.expr.replace("t.", "f.")

    def candidates_sql(self) -> str:
        """Store-wide vocabulary of the item (dictionary labels where a dictionary names the item)."""
        if self.linksto:
            return f"SELECT DISTINCT label FROM icu.d_items WHERE linksto = '{self.linksto}' AND label IS NOT NULL"
        if "d_labitems" in self.join:
            return "SELECT DISTINCT label FROM hosp.d_labitems WHERE label IS NOT NULL"
        return f"SELECT DISTINCT {self.item} FROM {self.table} f {self.join} WHERE {self.item} IS NOT NULL"

    def __call__(self, ctx: BuildContext) -> Labelled:
        """Yield anchors at sampled event times with the items of the hidden rows at that time."""
        where = f"{self.time_sql} IS NOT NULL" + (
            f" AND f.{self.encounter} IS NOT NULL" if self.encounter else ""
        ) + (f" AND {self.where}" if self.where else "")
        hadm = "f.hadm_id" if "hadm_id" in get_table(self.table).column_names else "NULL"
        sample = max(ctx.pool * 4, 200)
        sql = (
            f"SELECT DISTINCT f.subject_id, {self.time_sql} AS t_star, {hadm} AS hadm_id FROM "
            f"(SELECT * FROM {self.table} f WHERE {where} USING SAMPLE reservoir({sample} ROWS) REPEATABLE "
            f"({ctx.rng.randrange(2**31)})) f"
        )
        for r in ctx.shuffled(ctx.query(_known_admission(sql, self.lead))):
            anchor = Anchor(r["subject_id"], r["t_star"] - self.lead, hadm_id=r["hadm_id"], info={"t_star": r["t_star"]})
            yield anchor, self.items(ctx, anchor)

    def items(self, ctx: BuildContext, anchor: Anchor) -> tuple[str, ...]:
        """Distinct item names of the hidden rows at exactly t* (the cutoff, or ``info["t_star"]``)."""
        at = anchor.info.get("t_star", anchor.prediction_time)
        cond = f"{self.time_sql} = ?" + (f" AND {self.where}" if self.where else "")
        rows = ctx.future.rows(self.table, _key(anchor), cond, [at])
        if not rows:
            return ()
        if not self.join:
            col = self.item.removeprefix("f.")
            return _names([row[col] for row in rows])
        keys = sorted({row["itemid"] for row in rows if row.get("itemid") is not None})
        dictionary = "hosp.d_labitems" if "d_labitems" in self.join else "icu.d_items"
        found = ctx.query(f"SELECT label FROM {dictionary} WHERE list_contains(?, itemid)", [keys])
        return _names([f["label"] for f in found])


_LAB = NextBatch("hosp.labevents", "d.label", "JOIN hosp.d_labitems d ON d.itemid = f.itemid", encounter=None)


def _icu(table: str, linksto: str) -> NextBatch:
    return NextBatch(
        f"icu.{table}", "d.label", "JOIN icu.d_items d ON d.itemid = f.itemid", "stay_id", linksto
    )


NEXT_BATCH: dict[str, NextBatch] = {
    "chartevents": _icu("chartevents", "chartevents"),
    "datetimeevents": _icu("datetimeevents", "datetimeevents"),
    "emar": NextBatch("hosp.emar", "f.medication"),
    "ingredientevents": _icu("ingredientevents", "ingredientevents"),
    "inputevents": _icu("inputevents", "inputevents"),
    "labevents": _LAB,
    "medrecon": NextBatch("ed.medrecon", "f.name", encounter="stay_id"),
    "microbiologyevents": NextBatch("hosp.microbiologyevents", "f.test_name", encounter=None),
    "omr": NextBatch("hosp.omr", "f.result_name", encounter=None),
    "outputevents": _icu("outputevents", "outputevents"),
    "poe": NextBatch("hosp.poe", "f.order_type"),
    "prescriptions": NextBatch("hosp.prescriptions", "f.drug"),
    "procedureevents": _icu("procedureevents", "procedureevents"),
    "pyxis": NextBatch("ed.pyxis", "f.name", encounter="stay_id"),
    "services": NextBatch("hosp.services", "f.curr_service"),
    "transfers": NextBatch("hosp.transfers", "f.careunit"),
}


# --- admission type at the next admission -------------------------------------------------------------


def admissions(ctx: BuildContext) -> Labelled:
    """admissions: the admission_type of the admission that starts at the cutoff (hadm_id not given)."""
    rows = ctx.query("SELECT subject_id, admittime FROM hosp.admissions WHERE admittime IS NOT NULL")
    for r in ctx.shuffled(rows):
        anchor = Anchor(r["subject_id"], r["admittime"])
        found = ctx.future.rows("hosp.admissions", _key(anchor), "f.admittime = ?", [r["admittime"]])
        yield anchor, _names([f["admission_type"] for f in found])


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


def _diagnosis_codes(ctx: BuildContext, anchor: Anchor) -> list[tuple[str, int]]:
    rows = ctx.future.rows("hosp.diagnoses_icd", _key(anchor), "f.hadm_id = ?", [anchor.target_hadm_id])
    return [(r["icd_code"], int(r["icd_version"])) for r in rows if r["icd_code"]]


def _titles(ctx: BuildContext, dictionary: str, codes: list[tuple[str, int]]) -> tuple[str, ...]:
    if not codes:
        return ()
    found = ctx.query(
        f"SELECT long_title FROM {dictionary} WHERE list_contains(?, icd_code || '|' || icd_version)",
        [[f"{c}|{v}" for c, v in codes]],
    )
    return _names([f["long_title"] for f in found])


def diagnoses_icd(ctx: BuildContext) -> Labelled:
    """diagnoses_icd: long titles of the target admission's diagnosis codes."""
    for anchor in _inside_admission(ctx, "hosp.diagnoses_icd", target=True):
        yield anchor, _titles(ctx, "hosp.d_icd_diagnoses", _diagnosis_codes(ctx, anchor))


def diagnoses_ccs(ctx: BuildContext) -> Labelled:
    """diagnoses_ccs: CCS categories of the target admission's diagnosis codes."""
    for anchor in _inside_admission(ctx, "hosp.diagnoses_icd", target=True):
        codes = _diagnosis_codes(ctx, anchor)
        yield anchor, tuple(sorted({n for c, v in codes for n in icd_to_ccs(c, v)}))


def procedures_icd(ctx: BuildContext) -> Labelled:
    """procedures_icd: titles of the admission's procedure codes dated on or after the cutoff's day."""
    for anchor in _inside_admission(ctx, "hosp.procedures_icd", target=False):
        rows = ctx.future.rows(
            "hosp.procedures_icd",
            _key(anchor),
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
        rows = ctx.future.rows("hosp.procedures_icd", _key(anchor), "f.hadm_id = ?", [anchor.target_hadm_id])
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


DECISION_EXCLUSIONS: dict[str, Callable[[BuildContext], dict[str, int]]] = {
    "procedures_ccs": procedures_ccs_exclusions,
}
"""Per task: what it never draws by design, counted over the store (written to ``build_manifest.json``)."""


def _ed_target_anchors(ctx: BuildContext) -> Iterator[Anchor]:
    sql = (
        "SELECT e.subject_id, e.stay_id, e.intime FROM ed.edstays e WHERE e.intime IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM ed.diagnosis d WHERE d.stay_id = e.stay_id)"
    )
    for r in ctx.shuffled(ctx.query(sql)):
        yield Anchor(r["subject_id"], r["intime"] + ONE_SECOND, target_stay_id=r["stay_id"])


def _ed_codes(ctx: BuildContext, anchor: Anchor) -> list[dict[str, object]]:
    return ctx.future.rows("ed.diagnosis", _key(anchor), "f.stay_id = ?", [anchor.target_stay_id])


def ed_diagnosis(ctx: BuildContext) -> Labelled:
    """diagnosis: icd_title of the target ED stay's diagnoses."""
    for anchor in _ed_target_anchors(ctx):
        yield anchor, _names([r["icd_title"] for r in _ed_codes(ctx, anchor)])


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


def _event_tables(ctx: BuildContext) -> list[str]:
    """Patient event tables with an own (non-inherited) event time, present in the store."""
    return [
        t.qualified
        for t in tables()
        if t.visibility == "event"
        and t.event_time is not None
        and t.event_time.parent is None
        and t.is_patient_table
        and t.qualified in ctx.present
        and t.module != "cxr"
    ]


def next_event(ctx: BuildContext) -> Labelled:
    """next_event: bare names of the tables with a hidden row at the earliest hidden event time."""
    names = _event_tables(ctx)
    for anchor in _inside_admission(ctx, "hosp.transfers", target=False):
        firsts = {n: ctx.future.first_time(n, _key(anchor)) for n in names}
        known = {n: t for n, t in firsts.items() if t is not None}
        if not known:
            yield anchor, ()
            continue
        soonest = min(known.values())
        yield anchor, tuple(sorted(get_table(n).name for n, t in known.items() if t == soonest))


def event_table_names(ctx: BuildContext) -> tuple[str, ...]:
    """Candidates of next_event: the bare names of the event tables present."""
    return tuple(sorted(get_table(n).name for n in _event_tables(ctx)))


DECISION_BUILDERS: dict[str, DecisionBuilder] = {
    **NEXT_BATCH,
    "admissions": admissions,
    "diagnoses_ccs": diagnoses_ccs,
    "diagnoses_icd": diagnoses_icd,
    "diagnosis": ed_diagnosis,
    "diagnosis_ccs": ed_diagnosis_ccs,
    "next_event": next_event,
    "procedures_ccs": procedures_ccs,
    "procedures_icd": procedures_icd,
}
"""Builder of each supported decision-making task, by EHR-Bench name."""

CCS_CANDIDATES = ccs_names


def radiology(ctx: BuildContext) -> Labelled:
    """radiology: exam_name details of the radiology reports charted at the cutoff."""
    sql = "SELECT DISTINCT subject_id, charttime AS t_star, hadm_id FROM note.radiology WHERE charttime IS NOT NULL"
    for r in ctx.shuffled(ctx.query(_known_admission(sql))):
        anchor = Anchor(r["subject_id"], r["t_star"], hadm_id=r["hadm_id"])
        notes = ctx.future.rows("note.radiology", _key(anchor), "f.charttime = ?", [r["t_star"]])
        ids = [n["note_id"] for n in notes]
        details = ctx.future.rows(
            "note.radiology_detail",
            _key(anchor),
            "f.field_name = 'exam_name' AND list_contains(?, f.note_id)",
            [ids],
        )
        yield anchor, _names([d["field_value"] for d in details])


DECISION_BUILDERS["radiology"] = radiology
