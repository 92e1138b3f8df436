"""The 18 risk-prediction builders: anchors chosen from the store, yes/no labels read only from future rows.

Each builder returns ``(anchor, label)`` pairs for a shuffled pool of anchors, ``label`` being
``True``/``False`` or ``None`` when the data cannot decide it (the anchor is dropped). The
definitions are those of :mod:`clinseek.bench._tasks` (``TaskSpec.label_definition``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from ..policy import TEXT_POLICY, EpisodeKey
from ._anchor import ONE_SECOND, Anchor, BuildContext

Labelled = Iterator[tuple[Anchor, bool | None]]
RiskBuilder = Callable[[BuildContext], Labelled]
ICU_OFFSET = dt.timedelta(hours=4)


def _key(anchor: Anchor) -> EpisodeKey:
    return EpisodeKey(
        anchor.subject_id, anchor.prediction_time, TEXT_POLICY, anchor.target_hadm_id, anchor.target_stay_id
    )


def _admission(
    ctx: BuildContext, subject_id: int, hadm_id: int, admittime: dt.datetime
) -> dict[str, Any] | None:
    return ctx.future.encounter("hosp.admissions", subject_id, admittime, "hadm_id", hadm_id)


def _died(adm: dict[str, Any] | None) -> bool | None:
    if adm is None:
        return None
    return bool(adm["hospital_expire_flag"] == 1 or adm["deathtime"] is not None)


# --- ED stays, asked at triage -------------------------------------------------------------------

_ED_ANCHORS = (
    "SELECT e.subject_id, e.stay_id, e.intime, e.hadm_id AS link_hadm, a.admittime AS link_admittime "
    "FROM ed.edstays e LEFT JOIN hosp.admissions a ON a.hadm_id = e.hadm_id AND a.subject_id = e.subject_id "
    "WHERE e.intime IS NOT NULL AND e.outtime IS NOT NULL"
)


def _ed_anchors(ctx: BuildContext, admitted_only: bool = False) -> Iterator[tuple[Anchor, dict[str, Any]]]:
    """ED stays asked at triage (intime + 1 s), except those whose linked admission began by then.

    An admission that began before the ED arrival (MIMIC holds a few: admitted, then registered in
    the ED) is visible at the cutoff, and with it the ED stay's ``hadm_id``: the outcome would be
    read, not predicted.
    """
    sql = _ED_ANCHORS + (" AND a.hadm_id IS NOT NULL" if admitted_only else "")
    for r in ctx.shuffled(ctx.query(sql)):
        anchor = Anchor(r["subject_id"], r["intime"] + ONE_SECOND, stay_id=r["stay_id"], info=r)
        if r["link_admittime"] is not None and r["link_admittime"] <= anchor.prediction_time:
            continue
        yield anchor, r


def _ed_stay(ctx: BuildContext, r: dict[str, Any]) -> dict[str, Any] | None:
    return ctx.future.encounter("ed.edstays", r["subject_id"], r["intime"], "stay_id", r["stay_id"])


def ed_hospitalization(ctx: BuildContext) -> Labelled:
    """ED_Hospitalization: the ED stay's hadm_id, unmasked, is set."""
    for anchor, r in _ed_anchors(ctx):
        stay = _ed_stay(ctx, r)
        yield anchor, None if stay is None else stay["hadm_id"] is not None


def _icu_within_12h(ctx: BuildContext, anchor: Anchor, r: dict[str, Any]) -> bool | None:
    stay = _ed_stay(ctx, r)
    if stay is None or stay["outtime"] is None:
        return None
    rows = ctx.future.rows(
        "icu.icustays", _key(anchor), "f.intime <= ?", [stay["outtime"] + dt.timedelta(hours=12)]
    )
    return bool(rows)


def ed_icu_transfer(ctx: BuildContext) -> Labelled:
    """ED_ICU_Tranfer_12hour: an ICU stay starts before the ED outtime + 12 h."""
    for anchor, r in _ed_anchors(ctx):
        yield anchor, _icu_within_12h(ctx, anchor, r)


def _ed_admission_death(ctx: BuildContext, r: dict[str, Any]) -> bool | None:
    stay = _ed_stay(ctx, r)
    if stay is None or stay["hadm_id"] is None or r["link_admittime"] is None:
        return None
    start = min(r["link_admittime"], r["intime"])
    return _died(_admission(ctx, r["subject_id"], stay["hadm_id"], start))


def ed_inpatient_mortality(ctx: BuildContext) -> Labelled:
    """ED_Inpatient_Mortality: the admission that follows the ED stay ends in death."""
    for anchor, r in _ed_anchors(ctx, admitted_only=True):
        yield anchor, _ed_admission_death(ctx, r)


def ed_critical_outcomes(ctx: BuildContext) -> Labelled:
    """ED_Critical_Outcomes: in-hospital death after the ED stay, or ICU within 12 h of ED departure."""
    for anchor, r in _ed_anchors(ctx):
        icu = _icu_within_12h(ctx, anchor, r)
        death = _ed_admission_death(ctx, r) if r["link_hadm"] is not None else False
        yield anchor, None if icu is None else bool(icu or death)


def ed_reattendance(ctx: BuildContext) -> Labelled:
    """ED_Reattendance_3day: another ED stay starts within 72 h of ED departure (asked at departure)."""
    sql = "SELECT subject_id, stay_id, outtime FROM ed.edstays WHERE outtime IS NOT NULL"
    for r in ctx.shuffled(ctx.query(sql)):
        anchor = Anchor(r["subject_id"], r["outtime"] + ONE_SECOND, stay_id=r["stay_id"])
        rows = ctx.future.rows(
            "ed.edstays",
            _key(anchor),
            "f.intime > ? AND f.intime <= ?",
            [r["outtime"], r["outtime"] + dt.timedelta(days=3)],
        )
        yield anchor, bool(rows)


# --- hospital admissions ----------------------------------------------------------------------------

_ADM_ANCHORS = "SELECT subject_id, hadm_id, admittime FROM hosp.admissions WHERE admittime IS NOT NULL AND dischtime IS NOT NULL"


def _at_admission(ctx: BuildContext) -> Iterator[tuple[Anchor, dict[str, Any] | None]]:
    for r in ctx.shuffled(ctx.query(_ADM_ANCHORS)):
        anchor = Anchor(r["subject_id"], r["admittime"] + ONE_SECOND, hadm_id=r["hadm_id"])
        yield anchor, _admission(ctx, r["subject_id"], r["hadm_id"], r["admittime"])


def inpatient_mortality(ctx: BuildContext) -> Labelled:
    """Inpatient_Mortality: hospital_expire_flag or deathtime of the admission."""
    for anchor, adm in _at_admission(ctx):
        yield anchor, _died(adm)


def length_of_stay(days: int) -> RiskBuilder:
    """LengthOfStay_<days>day: dischtime - admittime > days."""

    def build(ctx: BuildContext) -> Labelled:
        for anchor, adm in _at_admission(ctx):
            if adm is None or adm["dischtime"] is None:
                yield anchor, None
            else:
                yield anchor, adm["dischtime"] - adm["admittime"] > dt.timedelta(days=days)

    return build


def readmission(days: int) -> RiskBuilder:
    """Readmission_<days>day: another admission starts within ``days`` of discharge (asked at discharge)."""

    def build(ctx: BuildContext) -> Labelled:
        sql = _ADM_ANCHORS + " AND coalesce(hospital_expire_flag, 0) = 0 AND deathtime IS NULL"
        rows = ctx.query(sql.replace("admittime FROM", "admittime, dischtime FROM"))
        for r in ctx.shuffled(rows):
            anchor = Anchor(r["subject_id"], r["dischtime"] + ONE_SECOND, hadm_id=r["hadm_id"])
            window = [r["dischtime"], r["dischtime"] + dt.timedelta(days=days)]
            later = ctx.future.rows(
                "hosp.admissions", _key(anchor), "f.admittime > ? AND f.admittime <= ?", window
            )
            yield anchor, bool(later)

    return build


# --- ICU stays ------------------------------------------------------------------------------------------

_ICU_ANCHORS = (
    "SELECT i.subject_id, i.hadm_id, i.stay_id, i.intime, i.outtime, a.admittime, a.deathtime "
    "FROM icu.icustays i JOIN hosp.admissions a ON a.hadm_id = i.hadm_id AND a.subject_id = i.subject_id "
    "WHERE i.intime IS NOT NULL AND i.outtime IS NOT NULL"
)


def _in_icu(ctx: BuildContext) -> Iterator[tuple[Anchor, dict[str, Any]]]:
    """ICU stays still open and patients alive 4 h after ICU admission; cutoff = intime + 4 h."""
    for r in ctx.shuffled(ctx.query(_ICU_ANCHORS)):
        cutoff = r["intime"] + ICU_OFFSET
        if r["outtime"] <= cutoff or (r["deathtime"] is not None and r["deathtime"] <= cutoff):
            continue
        yield Anchor(r["subject_id"], cutoff, hadm_id=r["hadm_id"], stay_id=r["stay_id"], info=r), r


def icu_mortality(days: int) -> RiskBuilder:
    """ICU_Mortality_<days>day: in-hospital death no later than ICU intime + ``days``."""

    def build(ctx: BuildContext) -> Labelled:
        for anchor, r in _in_icu(ctx):
            adm = _admission(ctx, r["subject_id"], r["hadm_id"], r["admittime"])
            if adm is None:
                yield anchor, None
                continue
            death = adm["deathtime"]
            yield anchor, bool(death is not None and death <= r["intime"] + dt.timedelta(days=days))

    return build


def icu_stay(days: int) -> RiskBuilder:
    """ICU_Stay_<days>day: icustays.los > ``days``."""

    def build(ctx: BuildContext) -> Labelled:
        for anchor, r in _in_icu(ctx):
            stay = ctx.future.encounter("icu.icustays", r["subject_id"], r["intime"], "stay_id", r["stay_id"])
            if stay is None or stay["outtime"] is None:
                yield anchor, None
            else:
                yield anchor, stay["outtime"] - stay["intime"] > dt.timedelta(days=days)

    return build


def icu_readmission(ctx: BuildContext) -> Labelled:
    """ICU_Readmission: another ICU stay of the same admission starts after ICU discharge (asked then)."""
    for r in ctx.shuffled(ctx.query(_ICU_ANCHORS)):
        if r["deathtime"] is not None and r["deathtime"] <= r["outtime"]:
            continue
        anchor = Anchor(
            r["subject_id"], r["outtime"] + ONE_SECOND, hadm_id=r["hadm_id"], stay_id=r["stay_id"]
        )
        later = ctx.future.rows(
            "icu.icustays", _key(anchor), "f.hadm_id = ? AND f.intime > ?", [r["hadm_id"], r["outtime"]]
        )
        yield anchor, bool(later)


RISK_BUILDERS: dict[str, RiskBuilder] = {
    "ED_Critical_Outcomes": ed_critical_outcomes,
    "ED_Hospitalization": ed_hospitalization,
    "ED_ICU_Tranfer_12hour": ed_icu_transfer,
    "ED_Inpatient_Mortality": ed_inpatient_mortality,
    "ED_Reattendance_3day": ed_reattendance,
    "ICU_Mortality_1day": icu_mortality(1),
    "ICU_Mortality_2day": icu_mortality(2),
    "ICU_Mortality_3day": icu_mortality(3),
    "ICU_Mortality_7day": icu_mortality(7),
    "ICU_Mortality_14day": icu_mortality(14),
    "ICU_Readmission": icu_readmission,
    "ICU_Stay_7day": icu_stay(7),
    "ICU_Stay_14day": icu_stay(14),
    "Inpatient_Mortality": inpatient_mortality,
    "LengthOfStay_3day": length_of_stay(3),
    "LengthOfStay_7day": length_of_stay(7),
    "Readmission_30day": readmission(30),
    "Readmission_60day": readmission(60),
}
"""Builder of each risk-prediction task, by EHR-Bench name."""
