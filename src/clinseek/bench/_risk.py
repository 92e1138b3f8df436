"""The 18 EHR-Bench risk-prediction tasks: their declarations (:data:`RISK_TASKS`) and label builders.

Each builder returns ``(anchor, label)`` pairs for a shuffled pool of anchors, ``label`` being
``True``/``False`` or ``None`` when the data cannot decide it (the anchor is dropped). Anchors are
chosen from the store; labels are read only from future rows (``TaskSpec.label_definition`` says how).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from ..policy import TEXT_POLICY, EpisodeKey
from ._anchor import ONE_SECOND, Anchor, BuildContext
from ._spec import TaskSpec

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


_ED = ("ed.edstays",)
_ADM = ("hosp.admissions",)
_ICU = ("icu.icustays", "hosp.admissions")
AT_TRIAGE = "ED arrival (edstays.intime) + 1 s: triage is visible, nothing of the stay's outcome is"
_AT_ADMIT = "hospital admission (admissions.admittime) + 1 s"
_AT_ICU = "ICU admission (icustays.intime) + 4 h, for stays still open and patients alive at that time"
_AT_DISCHARGE = "hospital discharge (admissions.dischtime) + 1 s, patients discharged alive"


def _risk(name: str, category: str, instruction: str, tables: tuple[str, ...], when: str, label: str,
          build: RiskBuilder) -> TaskSpec:
    return TaskSpec(name, "clinseek-bench-text", "risk_prediction", category, instruction, tables, when, label,
                    "yes/no", build=build)


def _icu_mortality_task(days: int) -> TaskSpec:
    return _risk(
        f"ICU_Mortality_{days}day",
        "mortality",
        f"Please predict whether the patient will die within {days} day{'s' if days > 1 else ''} of ICU admission.",
        _ICU,
        _AT_ICU,
        f"yes iff the admission's deathtime (future_select(hosp.admissions) at its admittime) is set and "
        f"deathtime <= icustays.intime + {days} d",
        icu_mortality(days),
    )


RISK_TASKS: tuple[TaskSpec, ...] = (
    _risk(
        "ED_Critical_Outcomes",
        "escalation_of_care",
        "Please predict whether the patient will die during hospitalization or will be transferred to the ICU "
        "within 12 hours after the emergency room.",
        (*_ED, "icu.icustays", "hosp.admissions"),
        AT_TRIAGE,
        "yes iff ED_Inpatient_Mortality or ED_ICU_Tranfer_12hour is yes for the same ED stay",
        ed_critical_outcomes,
    ),
    _risk(
        "ED_Hospitalization",
        "escalation_of_care",
        "Please predict whether the patient will be admitted to the hospital after the emergency room visit.",
        _ED,
        AT_TRIAGE,
        "yes iff the ED stay led to an admission: its hadm_id (future_select(ed.edstays) at its intime) is set",
        ed_hospitalization,
    ),
    _risk(
        "ED_ICU_Tranfer_12hour",
        "escalation_of_care",
        "Please predict whether the patient will be transferred to the ICU within 12 hours after the emergency room.",
        (*_ED, "icu.icustays"),
        AT_TRIAGE,
        "yes iff an icu.icustays row of the patient starts between the cutoff and the ED stay's outtime + 12 h",
        ed_icu_transfer,
    ),
    _risk(
        "ED_Inpatient_Mortality",
        "mortality",
        "Please predict whether the patient will die during the hospitalization that follows the emergency room visit.",
        (*_ED, "hosp.admissions"),
        AT_TRIAGE + "; ED stays that led to an admission",
        "yes iff that admission's hospital_expire_flag = 1 or deathtime is set",
        ed_inpatient_mortality,
    ),
    _risk(
        "ED_Reattendance_3day",
        "readmission",
        "Please predict whether the patient will return to the emergency department within 3 days after discharge.",
        _ED,
        "ED departure (edstays.outtime) + 1 s",
        "yes iff another ED stay of the patient has intime in (outtime, outtime + 72 h]",
        ed_reattendance,
    ),
    _icu_mortality_task(1),
    _icu_mortality_task(2),
    _icu_mortality_task(3),
    _icu_mortality_task(7),
    _icu_mortality_task(14),
    _risk(
        "ICU_Readmission",
        "readmission",
        "Please predict whether the patient will be readmitted to the ICU during the same hospitalization.",
        _ICU,
        "ICU discharge (icustays.outtime) + 1 s, patients alive at ICU discharge",
        "yes iff another ICU stay of the same hadm_id starts after this stay's outtime",
        icu_readmission,
    ),
    _risk(
        "ICU_Stay_7day",
        "length_of_stay",
        "Please predict whether the patient's ICU stay will last longer than 7 days.",
        _ICU,
        _AT_ICU,
        "yes iff icustays.los > 7 (future_select(icu.icustays) at its intime)",
        icu_stay(7),
    ),
    _risk(
        "ICU_Stay_14day",
        "length_of_stay",
        "Please predict whether the patient's ICU stay will last longer than 14 days.",
        _ICU,
        _AT_ICU,
        "yes iff icustays.los > 14 (future_select(icu.icustays) at its intime)",
        icu_stay(14),
    ),
    _risk(
        "Inpatient_Mortality",
        "mortality",
        "Please predict whether the patient will die during this hospitalization.",
        _ADM,
        _AT_ADMIT,
        "yes iff hospital_expire_flag = 1 or deathtime is set (future_select(hosp.admissions) at its admittime)",
        inpatient_mortality,
    ),
    _risk(
        "LengthOfStay_3day",
        "length_of_stay",
        "Please predict whether the patient's hospital stay will last longer than 3 days.",
        _ADM,
        _AT_ADMIT,
        "yes iff dischtime - admittime > 3 days",
        length_of_stay(3),
    ),
    _risk(
        "LengthOfStay_7day",
        "length_of_stay",
        "Please predict whether the patient's hospital stay will last longer than 7 days.",
        _ADM,
        _AT_ADMIT,
        "yes iff dischtime - admittime > 7 days",
        length_of_stay(7),
    ),
    _risk(
        "Readmission_30day",
        "readmission",
        "Please predict whether the patient will be readmitted to the hospital within 30 days after discharge.",
        _ADM,
        _AT_DISCHARGE,
        "yes iff another admission has admittime in (dischtime, dischtime + 30 d]",
        readmission(30),
    ),
    _risk(
        "Readmission_60day",
        "readmission",
        "Please predict whether the patient will be readmitted to the hospital within 60 days after discharge.",
        _ADM,
        _AT_DISCHARGE,
        "yes iff another admission has admittime in (dischtime, dischtime + 60 d]",
        readmission(60),
    ),
)
"""The 18 EHR-Bench risk-prediction tasks, in EHR-Bench's order."""
