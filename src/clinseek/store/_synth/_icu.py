"""``icu`` event tables for every ICU stay: vitals and GCS (chartevents), line dates
(datetimeevents), infusions and boluses (inputevents, ingredientevents), urine output
(outputevents) and ventilation, lines, dialysis and films (procedureevents).

Vitals move with severity and trajectory: shock lowers blood pressure (partly corrected by
norepinephrine), raises heart and respiratory rate; deteriorating patients trend worse.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._context import Ctx, trajectory
from ._frame import HOUR, MINUTE, NAN, Frame, Rows, grid
from ._items import (
    ART_DATE_ITEM,
    ART_LINE_ITEM,
    CVC_ITEM,
    DIALYSIS_ITEM,
    FIO2_ITEM,
    FOLEY_ITEM,
    GCS_ITEMS,
    INTUBATION_ITEM,
    PICC_DATE_ITEM,
    VENT_ITEM,
    VITALS,
    WATER_INGREDIENT,
    WEIGHT_ITEM,
)
from ._meds import MedOrder, dose_times
from ._timeline import Admission, IcuStay, Timeline

_INFECTION = {"sepsis", "pneumonia", "uti", "cirrhosis"}


def _stay_cols(tl: Timeline, adm: Admission, stay: IcuStay) -> dict[str, object]:
    return {"subject_id": tl.patient.subject_id, "hadm_id": adm.hadm_id, "stay_id": stay.stay_id}


def chartevents(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``icu.chartevents``: hourly vitals, 4-hourly temperature and GCS, admission weight, FiO2 when ventilated."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        for adm in tl.admissions:
            for stay in adm.icu:
                base = _stay_cols(tl, adm, stay)
                _vitals(rows, ctx, adm, stay, base)
                _gcs(rows, ctx, adm, stay, base)
                t0 = math.floor((stay.intime + rng.uniform(10, 50) * MINUTE) / MINUTE) * MINUTE
                rows.add(1, **base, caregiver_id=ctx.caregiver(1), charttime=t0, storetime=t0 + 5 * MINUTE,
                         itemid=WEIGHT_ITEM, valuenum=tl.patient.weight_kg, valueuom="kg", warning=0)
                if stay.ventilated:
                    times = grid(stay.intime + HOUR, stay.outtime, 4 * HOUR, rng, 30 * MINUTE)
                    fio2 = np.clip(np.round(40 + 40 * adm.severity * trajectory(adm, times) + rng.normal(0, 5, len(times))), 21, 100)
                    rows.add(len(times), **base, caregiver_id=ctx.caregiver(len(times)), charttime=times,
                             storetime=times + 10 * MINUTE, itemid=FIO2_ITEM, valuenum=fio2, valueuom="None", warning=0)
    frame = rows.frame()
    if frame:
        text = frame.pop("text", None)
        numeric = pc.cast(pa.array(frame["valuenum"].astype(np.float64), from_pandas=True), pa.string())
        frame["value"] = numeric if text is None else pc.coalesce(pa.array(text, type=pa.string(), from_pandas=True), numeric)
    return frame


def _vitals(rows: Rows, ctx: Ctx, adm: Admission, stay: IcuStay, base: dict[str, object]) -> None:
    rng = ctx.rng
    infection = adm.problem.key in _INFECTION
    for v in VITALS:
        times = grid(stay.intime + 15 * MINUTE, stay.outtime, v.every_h * HOUR, rng, 20 * MINUTE)
        n = len(times)
        if not n:
            continue
        drive = adm.severity * trajectory(adm, times)
        shift = v.shift * drive
        if v.itemid == 223761:
            shift = shift if infection else 0.3 * shift
        if stay.pressors and v.itemid in (220179, 220180, 220181):
            shift = shift * 0.6
        values = np.clip(v.mean + shift + rng.normal(0, v.sd, n), v.low, v.high)
        values = np.round(values, v.decimals)
        rows.add(n, **base, caregiver_id=ctx.caregiver(n), charttime=times,
                 storetime=times + np.floor(rng.uniform(1, 60, n)) * MINUTE, itemid=v.itemid,
                 valuenum=values, valueuom=v.unit, warning=0)


def _gcs(rows: Rows, ctx: Ctx, adm: Admission, stay: IcuStay, base: dict[str, object]) -> None:
    rng = ctx.rng
    times = grid(stay.intime + 30 * MINUTE, stay.outtime, 4 * HOUR, rng, 20 * MINUTE)
    n = len(times)
    if not n:
        return
    impairment = adm.severity * trajectory(adm, times) + (0.4 if stay.ventilated else 0) + rng.normal(0, 0.1, n)
    for itemid, labels in GCS_ITEMS:
        top = len(labels)
        score = np.clip(np.round(top - impairment * (top - 1) * 0.8), 1, top).astype(np.int64)
        text = np.array(labels, dtype=object)[score - 1]
        rows.add(n, **base, caregiver_id=ctx.caregiver(n), charttime=times, storetime=times + 15 * MINUTE,
                 itemid=itemid, text=text, valuenum=score.astype(np.float64), valueuom=None, warning=0)


def datetimeevents(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``icu.datetimeevents``: arterial line and PICC insertion dates charted after insertion."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        for adm in tl.admissions:
            for stay in adm.icu:
                base = _stay_cols(tl, adm, stay)
                for itemid, present in ((ART_DATE_ITEM, stay.pressors), (PICC_DATE_ITEM, stay.pressors or stay.ventilated)):
                    if not present:
                        continue
                    placed = math.floor((stay.intime + rng.uniform(0.2, 3) * HOUR) / MINUTE) * MINUTE
                    charted = math.floor((placed + rng.uniform(0.5, 6) * HOUR) / MINUTE) * MINUTE
                    if charted < stay.outtime:
                        rows.add(1, **base, caregiver_id=ctx.caregiver(1), charttime=charted, storetime=charted + 5 * MINUTE,
                                 itemid=itemid, value=placed, valueuom="Date", warning=0)
    return rows.frame()


def input_tables(timelines: list[Timeline], plans: dict[int, list[MedOrder]], ctx: Ctx) -> tuple[Frame, Frame]:
    """``icu.inputevents`` and ``icu.ingredientevents`` for the drugs given during ICU stays."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        weight = tl.patient.weight_kg
        for adm in tl.admissions:
            for stay in adm.icu:
                base = _stay_cols(tl, adm, stay)
                for order in plans[adm.hadm_id]:
                    spec = order.drug.icu
                    if spec is None:
                        continue
                    start, stop = max(order.start, stay.intime), min(order.stop, stay.outtime)
                    if stop <= start:
                        continue
                    if spec.rateuom is None:
                        times = dose_times(order, rng)
                        times = times[(times >= start) & (times < stop)]
                        n = len(times)
                        if not n:
                            continue
                        ends = times + np.where(spec.description == "Bolus", 30, 1) * MINUTE
                        rows.add(n, **base, starttime=times, endtime=ends, itemid=spec.itemid, amount=spec.amount,
                                 amountuom=spec.amountuom, rate=NAN, rateuom=None, orderid=_orders(ctx, n), weight=weight,
                                 spec=spec.category, desc=spec.description, status="FinishedRunning", volume=100.0)
                        continue
                    edges = np.append(grid(start, stop, 6 * HOUR, rng), stop)
                    edges = np.unique(edges)
                    n = len(edges) - 1
                    if n <= 0:
                        continue
                    rate = np.round(spec.amount * np.exp(rng.normal(0, 0.25, n)) * (0.6 + adm.severity), 3)
                    hours = (edges[1:] - edges[:-1]) / HOUR
                    per_hour = rate * (weight * 60 / 1000 if "kg/min" in spec.rateuom else 1.0)
                    orderids = _orders(ctx, n)
                    status = np.full(n, "ChangeDose/Rate", dtype=object)
                    status[-1] = "FinishedRunning" if stop == order.stop else "Stopped"
                    rows.add(n, **base, starttime=edges[:-1], endtime=edges[1:], itemid=spec.itemid,
                             amount=np.round(per_hour * hours, 4), amountuom=spec.amountuom, rate=rate, rateuom=spec.rateuom,
                             orderid=orderids, link=orderids[0], weight=weight, spec=spec.category, desc=spec.description,
                             status=status, volume=np.round(10.0 * hours, 2))
    return _shape_inputs(rows.frame(), ctx)


def _orders(ctx: Ctx, n: int) -> np.ndarray:
    ids = np.arange(ctx.counters.orderid, ctx.counters.orderid + n, dtype=np.int64)
    ctx.counters.orderid += n
    return ids


def _shape_inputs(f: Frame, ctx: Ctx) -> tuple[Frame, Frame]:
    if not f:
        return {}, {}
    n = len(f["subject_id"])
    start = f["starttime"].astype(np.float64)
    end = f["endtime"].astype(np.float64)
    # Only rate-based infusions carry a linked order; other rows (and a chunk with no infusion at
    # all, e.g. a handful of patients) get NULL. The ``link`` column is absent when no block set it.
    link = f.pop("link", np.full(n, NAN))
    store = end + np.floor(ctx.rng.uniform(1, 30, n)) * MINUTE
    caregiver = ctx.caregiver(n)
    volume = f.pop("volume").astype(np.float64)
    inputs = {
        "subject_id": f["subject_id"], "hadm_id": f["hadm_id"], "stay_id": f["stay_id"], "caregiver_id": caregiver,
        "starttime": start, "endtime": end, "storetime": store, "itemid": f["itemid"], "amount": f["amount"],
        "amountuom": f["amountuom"], "rate": f["rate"], "rateuom": f["rateuom"], "orderid": f["orderid"],
        "linkorderid": link, "ordercategoryname": f["spec"], "secondaryordercategoryname": np.full(n, None, dtype=object),
        "ordercomponenttypedescription": np.full(n, "Main order parameter", dtype=object),
        "ordercategorydescription": f["desc"], "patientweight": f["weight"], "totalamount": volume,
        "totalamountuom": np.full(n, "ml", dtype=object), "isopenbag": np.zeros(n, dtype=np.int64),
        "continueinnextdept": np.zeros(n, dtype=np.int64), "statusdescription": f["status"],
        "originalamount": f["amount"], "originalrate": f["rate"],
    }
    ingredients = {
        "subject_id": f["subject_id"], "hadm_id": f["hadm_id"], "stay_id": f["stay_id"], "caregiver_id": caregiver,
        "starttime": start, "endtime": end, "storetime": store, "itemid": np.full(n, WATER_INGREDIENT, dtype=np.int64),
        "amount": volume, "amountuom": np.full(n, "ml", dtype=object),
        "rate": np.where(end > start, volume / np.maximum((end - start) / HOUR, 1e-9), np.nan),
        "rateuom": np.full(n, "mL/hour", dtype=object), "orderid": f["orderid"], "linkorderid": link,
        "statusdescription": f["status"], "originalamount": np.zeros(n), "originalrate": f["rate"],
    }
    return inputs, ingredients


def outputevents(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``icu.outputevents``: Foley urine output every 2 hours (low in shock and kidney injury)."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        for adm in tl.admissions:
            renal = 1.0 if adm.problem.key in ("aki", "sepsis") else 0.5
            for stay in adm.icu:
                times = grid(stay.intime + HOUR, stay.outtime, 2 * HOUR, rng, 30 * MINUTE)
                n = len(times)
                if not n:
                    continue
                drive = adm.severity * trajectory(adm, times) * renal
                ml = np.round(np.clip(130 * (1 - 0.85 * drive) + rng.normal(0, 25, n), 0, 600))
                rows.add(n, **_stay_cols(tl, adm, stay), caregiver_id=ctx.caregiver(n), charttime=times,
                         storetime=times + 10 * MINUTE, itemid=FOLEY_ITEM, value=ml, valueuom="mL")
    return rows.frame()


def procedureevents(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """``icu.procedureevents``: intubation and ventilation, arterial and central lines, CRRT."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        for adm in tl.admissions:
            for stay in adm.icu:
                base = _stay_cols(tl, adm, stay)
                items: list[tuple[int, float, float, str, str | None]] = []
                if stay.ventilated:
                    start = stay.intime + rng.uniform(0.2, 2) * HOUR
                    end = min(stay.outtime, start + (stay.outtime - start) * rng.uniform(0.6, 1.0))
                    items.append((INTUBATION_ITEM, start, start + MINUTE, "Intubation/Extubation", None))
                    items.append((VENT_ITEM, start, end, "Ventilation", None))
                if stay.pressors:
                    t = stay.intime + rng.uniform(0.2, 2) * HOUR
                    items.append((ART_LINE_ITEM, t, stay.outtime, "Invasive Lines", "Left Radial"))
                    items.append((CVC_ITEM, t + 20 * MINUTE, stay.outtime, "Invasive Lines", "Right IJ"))
                if adm.problem.key == "aki" and adm.severity > 0.7:
                    t = stay.intime + rng.uniform(2, 12) * HOUR
                    items.append((DIALYSIS_ITEM, t, stay.outtime, "Dialysis", None))
                for itemid, start, end, category, location in items:
                    start = math.floor(start / MINUTE) * MINUTE
                    end = max(math.floor(end / MINUTE) * MINUTE, start + MINUTE)
                    oid = _orders(ctx, 1)[0]
                    rows.add(1, **base, caregiver_id=ctx.caregiver(1), starttime=start, endtime=end,
                             storetime=end + 5 * MINUTE, itemid=itemid, value=(end - start) / MINUTE, valueuom="min",
                             location=location, locationcategory="Invasive Arterial" if itemid == ART_LINE_ITEM else None,
                             orderid=oid, linkorderid=oid, ordercategoryname=category,
                             ordercategorydescription="Task" if itemid != VENT_ITEM else "Process",
                             patientweight=tl.patient.weight_kg, isopenbag=0, continueinnextdept=0,
                             statusdescription="FinishedRunning", originalamount=NAN, originalrate=NAN)
    return rows.frame()
