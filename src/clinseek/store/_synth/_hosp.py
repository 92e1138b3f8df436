"""``hosp`` tables that come straight from the timelines: patients, admissions, transfers, services,
billing codes (diagnoses, procedures, DRGs, HCPCS), outpatient measurements and non-drug orders."""

from __future__ import annotations

import math

import numpy as np

from ._conditions import CHRONIC, Px
from ._context import Ctx, code, day_floor
from ._frame import HOUR, MINUTE, NAN, Frame, Rows
from ._items import HCPCS
from ._timeline import Admission, Timeline

_HCPCS_SHORT = {c: s for c, _, _, s in HCPCS}


def patients(timelines: list[Timeline]) -> Frame:
    """``hosp.patients``: one row per patient (``dod`` set for in- and out-of-hospital deaths)."""
    rows = Rows()
    for tl in timelines:
        p = tl.patient
        rows.add(1, subject_id=p.subject_id, gender=p.gender, anchor_age=p.anchor_age, anchor_year=p.anchor_year,
                 anchor_year_group=p.anchor_year_group, dod=p.dod)
    return rows.frame()


def admissions(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``hosp.admissions`` (deathtime, DIED and hospital_expire_flag agree with ``patients.dod``)."""
    rows = Rows()
    for tl in timelines:
        p = tl.patient
        for a in tl.admissions:
            rows.add(
                1, subject_id=p.subject_id, hadm_id=a.hadm_id, admittime=a.admittime, dischtime=a.dischtime,
                deathtime=a.deathtime, admission_type=a.admission_type, admit_provider_id=ctx.provider(),
                admission_location=a.admission_location, discharge_location=a.discharge_location,
                insurance=a.insurance, language=p.language, marital_status=p.marital_status, race=p.race,
                edregtime=a.ed.intime if a.ed else NAN, edouttime=a.ed.outtime if a.ed else NAN,
                hospital_expire_flag=int(a.died),
            )
    return rows.frame()


def transfers(timelines: list[Timeline]) -> Frame:
    """``hosp.transfers``: ED rows (hadm_id NULL when not admitted), ward and ICU stays, discharge."""
    rows = Rows()
    for tl in timelines:
        sid = tl.patient.subject_id
        for seg in tl.ed_transfers:
            rows.add(1, subject_id=sid, hadm_id=NAN, transfer_id=seg.transfer_id, eventtype=seg.eventtype,
                     careunit=seg.careunit, intime=seg.intime, outtime=seg.outtime)
        for a in tl.admissions:
            for seg in a.segments:
                rows.add(1, subject_id=sid, hadm_id=float(a.hadm_id), transfer_id=seg.transfer_id,
                         eventtype=seg.eventtype, careunit=seg.careunit, intime=seg.intime, outtime=seg.outtime)
    return rows.frame()


def services(timelines: list[Timeline]) -> Frame:
    """``hosp.services``: the admitting service and any change."""
    rows = Rows()
    for tl in timelines:
        for a in tl.admissions:
            for t, prev, curr in a.services:
                rows.add(1, subject_id=tl.patient.subject_id, hadm_id=a.hadm_id, transfertime=t,
                         prev_service=prev, curr_service=curr)
    return rows.frame()


def diagnoses_icd(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``hosp.diagnoses_icd``: principal problem, complications (more when sicker), chronic conditions."""
    rows = Rows()
    for tl in timelines:
        for a in tl.admissions:
            codes = [code(a.problem.dx, a.icd_version)]
            for dx, p in a.problem.extra_dx:
                if ctx.rng.random() < p * (0.4 + 1.2 * a.severity):
                    codes.append(code(dx, a.icd_version))
            codes += [code(CHRONIC[i].dx, a.icd_version) for i in tl.patient.chronic]
            codes = list(dict.fromkeys(codes))
            ctx.dx[a.hadm_id] = codes
            rows.add(len(codes), subject_id=tl.patient.subject_id, hadm_id=a.hadm_id,
                     seq_num=np.arange(1, len(codes) + 1), icd_code=codes, icd_version=a.icd_version)
    return rows.frame()


def billed_procedures(a: Admission, rng: np.random.Generator) -> list[tuple[Px, float]]:
    """Billed ICD procedures of an admission with the time each was done."""
    out: list[tuple[Px, float]] = []
    start = a.segments[0].intime if a.segments else a.admittime
    for px in a.problem.procedures:
        if a.severity >= px.min_severity and rng.random() < px.prob:
            out.append((px, start + rng.uniform(0.1, 0.6) * (a.dischtime - start)))
    for stay in a.icu:
        if stay.ventilated:
            long = stay.outtime - stay.intime > 96 * HOUR
            out.append((Px("9672", "5A1955Z") if long else Px("9671", "5A1945Z"), stay.intime + HOUR))
        if stay.pressors:
            out.append((Px("3893", "02HV33Z"), stay.intime + 30 * MINUTE))
    seen: set[str] = set()
    unique = []
    for px, t in out:
        if px.icd9 not in seen:
            seen.add(px.icd9)
            unique.append((px, t))
    return unique


def procedures_icd(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``hosp.procedures_icd`` (``chartdate`` is date-only; ventilation codes encode duration)."""
    rows = Rows()
    for tl in timelines:
        for a in tl.admissions:
            procs = billed_procedures(a, ctx.rng)
            if procs:
                rows.add(len(procs), subject_id=tl.patient.subject_id, hadm_id=a.hadm_id,
                         seq_num=np.arange(1, len(procs) + 1), chartdate=np.array([day_floor(t) for _, t in procs]),
                         icd_code=[code(px, a.icd_version) for px, _ in procs], icd_version=a.icd_version)
    return rows.frame()


def drgcodes(timelines: list[Timeline]) -> Frame:
    """``hosp.drgcodes``: an HCFA (MS-DRG) and an APR-DRG row; APR severity and mortality track the outcome."""
    rows = Rows()
    for tl in timelines:
        for a in tl.admissions:
            drg, title = a.problem.drg
            sev = 1 + min(3, int(a.severity * 4))
            mort = min(4, sev + (1 if a.died else 0))
            rows.add(1, subject_id=tl.patient.subject_id, hadm_id=a.hadm_id, drg_type="HCFA", drg_code=drg,
                     description=title, drg_severity=NAN, drg_mortality=NAN)
            rows.add(1, subject_id=tl.patient.subject_id, hadm_id=a.hadm_id, drg_type="APR", drg_code=str(int(drg) % 900 + 100),
                     description=title.split(" WITH")[0].split(" WITHOUT")[0], drg_severity=float(sev), drg_mortality=float(mort))
    return rows.frame()


def hcpcsevents(timelines: list[Timeline]) -> Frame:
    """``hosp.hcpcsevents``: professional billing (initial care, critical care, discharge day)."""
    rows = Rows()
    for tl in timelines:
        for a in tl.admissions:
            codes = [("99223", a.admittime)]
            codes += [("99291", s.intime) for s in a.icu]
            if not a.died:
                codes.append(("99238", a.dischtime))
            rows.add(len(codes), subject_id=tl.patient.subject_id, hadm_id=a.hadm_id,
                     chartdate=np.array([day_floor(t) for _, t in codes]), hcpcs_cd=[c for c, _ in codes],
                     seq_num=np.arange(1, len(codes) + 1), short_description=[_HCPCS_SHORT[c] for c, _ in codes])
    return rows.frame()


def omr(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``hosp.omr``: blood pressure, weight, BMI (and height) at clinic visits, date only."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        p = tl.patient
        htn = any(CHRONIC[i].key == "htn" for i in p.chronic)
        weight = p.weight_kg
        for t in tl.outpatient:
            weight = max(40.0, weight + rng.normal(0, 1.2))
            sbp = int(rng.normal(138 if htn else 122, 12))
            dbp = int(rng.normal(82 if htn else 74, 8))
            lbs = weight * 2.20462
            bmi = weight / (p.height_in * 0.0254) ** 2
            names = ["Blood Pressure", "Weight (Lbs)", "BMI (kg/m2)"]
            values = [f"{sbp}/{dbp}", f"{lbs:.1f}", f"{bmi:.1f}"]
            if rng.random() < 0.3:
                names.append("Height (Inches)")
                values.append(f"{p.height_in:.1f}")
            rows.add(len(names), subject_id=p.subject_id, chartdate=day_floor(t), seq_num=1,
                     result_name=names, result_value=values)
    return rows.frame()


def other_orders(timelines: list[Timeline], labs: Frame, studies: Frame, ctx: Ctx) -> tuple[Frame, Frame]:
    """Non-drug ``poe`` rows (ADT, lab, radiology, general care) and their ``poe_detail`` rows.

    Code status ``DNR/DNI`` is more often written for patients who will die (as in real records).
    """
    poe, detail = Rows(), Rows()
    rng = ctx.rng
    for tl in timelines:
        sid = tl.patient.subject_id
        for a in tl.admissions:
            def order(t: float, kind: str, sub: str | None, fields: dict[str, str] | None = None,
                      sid: int = sid, hadm: int = a.hadm_id) -> None:
                _order(poe, detail, ctx, sid, hadm, t, kind, sub, fields)

            dnr = rng.random() < (0.75 if a.died else 0.05 + 0.3 * a.severity)
            first_unit = next((s.careunit for s in a.segments if s.eventtype == "admit"), "Medicine")
            order(a.admittime, "ADT orders", "Admit", {"Admit to": str(first_unit), "Code status": "DNR/DNI" if dnr else "Full code"})
            for seg in a.segments:
                if seg.eventtype == "transfer":
                    order(seg.intime - rng.uniform(10, 90) * MINUTE, "ADT orders", "Transfer", {"Transfer to": str(seg.careunit)})
            order(a.admittime + rng.uniform(0.5, 3) * HOUR, "General Care", "Vitals/Monitoring")
            order(a.admittime + rng.uniform(0.5, 3) * HOUR, "Nutrition", "Diet", {"Diet": "NPO" if a.icu else "Regular"})
            if a.icu:
                order(a.icu[0].intime + HOUR, "IV therapy", "IV fluids")
            if not a.died:
                order(a.dischtime - rng.uniform(2, 8) * HOUR, "ADT orders", "Discharge",
                      {"Discharge Planning": "Finalized", "Discharge When": "Today"})
    if labs:
        _lab_orders(poe, labs, ctx)
    if studies:
        _imaging_orders(poe, studies, ctx)
    return poe.frame(), detail.frame()


def _order(poe: Rows, detail: Rows, ctx: Ctx, sid: int, hadm: int, t: float, kind: str, sub: str | None,
           fields: dict[str, str] | None) -> None:
    ctx.poe_key += 1
    poe.add(1, poe_key=ctx.poe_key, subject_id=sid, hadm_id=hadm, ordertime=math.floor(t / MINUTE) * MINUTE,
            order_type=kind, order_subtype=sub, transaction_type="New", discontinue_of_key=NAN,
            discontinued_by_key=NAN, order_provider_id=ctx.provider(), order_status="Inactive")
    for name, value in (fields or {}).items():
        detail.add(1, poe_key=ctx.poe_key, subject_id=sid, field_name=name, field_value=value)


def _lab_orders(poe: Rows, labs: Frame, ctx: Ctx) -> None:
    _, first = np.unique(labs["specimen_id"], return_index=True)
    hadm = labs["hadm_id"][first].astype(np.float64)
    keep = first[~np.isnan(hadm)]
    n = len(keep)
    if not n:
        return
    keys = np.arange(ctx.poe_key + 1, ctx.poe_key + 1 + n)
    ctx.poe_key += n
    poe.add(n, poe_key=keys, subject_id=labs["subject_id"][keep], hadm_id=labs["hadm_id"][keep].astype(np.float64),
            ordertime=labs["charttime"][keep].astype(np.float64) - 30 * MINUTE, order_type="Lab", order_subtype=None,
            transaction_type="New", discontinue_of_key=NAN, discontinued_by_key=NAN,
            order_provider_id=labs["order_provider_id"][keep], order_status="Inactive")


def _imaging_orders(poe: Rows, studies: Frame, ctx: Ctx) -> None:
    hadm = studies["hadm_id"].astype(np.float64)
    keep = np.flatnonzero(~np.isnan(hadm))
    n = len(keep)
    if not n:
        return
    keys = np.arange(ctx.poe_key + 1, ctx.poe_key + 1 + n)
    ctx.poe_key += n
    poe.add(n, poe_key=keys, subject_id=studies["subject_id"][keep], hadm_id=hadm[keep],
            ordertime=studies["time"][keep].astype(np.float64) - 45 * MINUTE, order_type="Radiology",
            order_subtype=studies["exam"][keep], transaction_type="New", discontinue_of_key=NAN, discontinued_by_key=NAN,
            order_provider_id=ctx.provider(), order_status="Inactive")

