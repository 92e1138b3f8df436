"""Medication orders of each admission and the tables they fill.

One plan per admission (:func:`plan_medications`): the problem's drugs, the patient's home
drugs (the same every admission, so a history-based guess of the next prescription scores),
prophylaxis, and vasopressors / sedation for the ICU patients who need them. Each planned
order becomes a ``poe`` order, a ``pharmacy`` row, a ``prescriptions`` row, ``emar``
administrations (with one ``emar_detail`` row each) and, in the ICU, ``inputevents``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._context import Ctx, chronic_drugs
from ._drugs import DRUGS, PROPHYLAXIS, SEDATION, VASOPRESSOR, Drug
from ._frame import DAY, HOUR, MINUTE, NAN, Frame, Rows
from ._timeline import Admission, Timeline

MAX_DOSES = 30


@dataclass(slots=True)
class MedOrder:
    """One planned medication order."""

    drug: Drug
    start: float
    stop: float
    ordertime: float
    poe_key: int
    pharmacy_id: int
    discontinued: bool  # stopped by a D/C order before discharge


def _m(t: float) -> float:
    return math.floor(t / MINUTE) * MINUTE


def plan_medications(tl: Timeline, adm: Admission, ctx: Ctx) -> list[MedOrder]:
    """The medication orders of one admission, in start order."""
    rng = ctx.rng
    keys: list[tuple[str, float, float]] = []  # drug key, start, planned duration (s)
    arrive = adm.ed.outtime if adm.ed else adm.admittime
    for key in adm.problem.drugs:
        keys.append((key, arrive + rng.uniform(0.3, 4) * HOUR, rng.uniform(3, 8) * DAY))
    for key in chronic_drugs(tl):
        if rng.random() < 0.85:
            keys.append((key, arrive + rng.uniform(2, 12) * HOUR, 60 * DAY))
    taken = {k for k, _, _ in keys}
    for key in PROPHYLAXIS:
        anticoagulated = taken & {"heparin_drip", "apixaban", "enoxaparin"}
        if key == "heparin_sc" and anticoagulated:
            continue
        if rng.random() < (0.8 if key == "heparin_sc" else 0.5):
            keys.append((key, arrive + rng.uniform(4, 14) * HOUR, 60 * DAY))
    for stay in adm.icu:
        if stay.pressors:
            keys.append((VASOPRESSOR, stay.intime + rng.uniform(0.2, 3) * HOUR, (stay.outtime - stay.intime) * rng.uniform(0.4, 0.9)))
        if stay.ventilated:
            keys.append((SEDATION, stay.intime + rng.uniform(0.2, 2) * HOUR, (stay.outtime - stay.intime) * rng.uniform(0.5, 0.9)))
    orders: list[MedOrder] = []
    for key, start, duration in keys:
        drug = DRUGS[key]
        start = _m(min(start, adm.dischtime - 30 * MINUTE))
        if drug.frequency == "ONCE":
            duration = HOUR
        stop = _m(min(start + duration, adm.dischtime))
        stop = max(stop, start + 30 * MINUTE)
        ctx.poe_key += 1
        orders.append(
            MedOrder(drug, start, stop, _m(start - rng.uniform(5, 50) * MINUTE), ctx.poe_key,
                     ctx.counters.pharmacy_id, stop < adm.dischtime - HOUR and drug.frequency != "ONCE")
        )
        ctx.counters.pharmacy_id += 1
    return sorted(orders, key=lambda o: (o.start, o.poe_key))


def dose_times(order: MedOrder, rng: np.random.Generator) -> np.ndarray:
    """Administration times of an order (every 24/per_day hours; every 12 h for infusions)."""
    drug = order.drug
    step = 12 * HOUR if drug.per_day == 0 else 24 * HOUR / drug.per_day
    times = np.arange(order.start, order.stop, step)[:MAX_DOSES]
    if "PRN" in drug.frequency and len(times):
        times = times[rng.random(len(times)) < 0.4] if len(times) > 1 else times
    times = np.floor((times + rng.uniform(0, 20, len(times)) * MINUTE) / MINUTE) * MINUTE
    return times[times < order.stop]


def medication_tables(timelines: list[Timeline], plans: dict[int, list[MedOrder]], ctx: Ctx) -> dict[str, Frame]:
    """``pharmacy``, ``prescriptions``, ``emar`` and medication ``poe`` rows for a chunk.

    ``emar`` rows carry ``emar_seq`` 0 here; :func:`number_emar` assigns per-subject sequence numbers.
    ``poe`` rows carry an integer ``poe_key``; the builder turns keys into ``poe_id``/``poe_seq``.
    """
    emar, poe = Rows(), Rows()
    rng = ctx.rng
    items: list[tuple[int, int, MedOrder]] = []
    for tl in timelines:
        sid = tl.patient.subject_id
        for adm in tl.admissions:
            for o in plans[adm.hadm_id]:
                d = o.drug
                items.append((sid, adm.hadm_id, o))
                _add_poe(poe, ctx, sid, adm, o)
                times = dose_times(o, rng)
                n = len(times)
                if n:
                    event = rng.choice(np.array(["Administered", "Not Given", "Held"], dtype=object), n, p=(0.94, 0.04, 0.02))
                    if d.per_day == 0:
                        event[0] = "Started"
                    emar.add(
                        n, subject_id=sid, hadm_id=adm.hadm_id, emar_seq=0, poe_key=o.poe_key, pharmacy_id=o.pharmacy_id,
                        enter_provider_id=None, charttime=times, medication=d.drug, event_txt=event,
                        scheduletime=np.floor(times / HOUR) * HOUR, storetime=times + np.floor(rng.uniform(0, 40, n)) * MINUTE,
                        dose=d.dose, unit=d.unit, route=d.route, form=d.form,
                    )
    pharmacy, presc = _order_frames(items, ctx)
    return {"pharmacy": pharmacy, "prescriptions": presc, "emar": emar.frame(), "poe_meds": poe.frame()}


def _col(values: list[object]) -> np.ndarray:
    return np.array(values, dtype=object)


def _order_frames(items: list[tuple[int, int, MedOrder]], ctx: Ctx) -> tuple[Frame, Frame]:
    """``pharmacy`` and ``prescriptions`` rows (one each per order), built column by column."""
    n = len(items)
    if not n:
        return {}, {}
    orders = [o for _, _, o in items]
    drugs = [o.drug for o in orders]
    per_day = np.array([d.per_day for d in drugs], dtype=np.float64)
    common = {
        "subject_id": np.array([s for s, _, _ in items], dtype=np.int64),
        "hadm_id": np.array([h for _, h, _ in items], dtype=np.int64),
        "pharmacy_id": np.array([o.pharmacy_id for o in orders], dtype=np.int64),
        "poe_key": np.array([o.poe_key for o in orders], dtype=np.int64),
        "starttime": np.array([o.start for o in orders]),
        "stoptime": np.array([o.stop for o in orders]),
        "route": _col([d.route for d in drugs]),
        "doses_per_24_hrs": np.where(per_day > 0, per_day, np.nan),
    }
    ordertime = np.array([o.ordertime for o in orders])
    pharmacy = {
        **common,
        "medication": _col([d.drug for d in drugs]),
        "proc_type": np.where(per_day > 0, "Unit Dose", "IV Piggyback").astype(object),
        "status": _col(["Discontinued" if o.discontinued else "Expired" for o in orders]),
        "entertime": ordertime + 2 * MINUTE,
        "verifiedtime": ordertime + np.floor(ctx.rng.uniform(5, 60, n)) * MINUTE,
        "frequency": _col([d.frequency for d in drugs]),
        "infusion_type": np.array([None, "C"], dtype=object)[(per_day == 0).astype(np.int64)],
        "sliding_scale": np.full(n, "N", dtype=object),
        "duration_interval": np.full(n, "Ongoing", dtype=object),
        "expiration_value": np.full(n, 36, dtype=np.int64),
        "expiration_unit": np.full(n, "Hours", dtype=object),
        "dispensation": np.full(n, "Omnicell", dtype=object),
    }
    presc = {
        **common,
        "order_provider_id": _col([ctx.provider() for _ in range(n)]),
        "drug_type": np.full(n, "MAIN", dtype=object),
        "drug": _col([d.drug for d in drugs]),
        "formulary_drug_cd": _col([d.formulary_drug_cd for d in drugs]),
        "gsn": _col([d.gsn for d in drugs]),
        "ndc": _col([d.ndc for d in drugs]),
        "prod_strength": _col([d.strength for d in drugs]),
        "dose_val_rx": _col([d.dose for d in drugs]),
        "dose_unit_rx": _col([d.unit for d in drugs]),
        "form_val_disp": np.full(n, "1", dtype=object),
        "form_unit_disp": _col([d.form for d in drugs]),
    }
    return pharmacy, presc


def _add_poe(poe: Rows, ctx: Ctx, sid: int, adm: Admission, o: MedOrder) -> None:
    poe.add(1, poe_key=o.poe_key, subject_id=sid, hadm_id=adm.hadm_id, ordertime=o.ordertime, order_type="Medications",
            order_subtype=None, transaction_type="New", discontinue_of_key=NAN,
            discontinued_by_key=NAN, order_provider_id=ctx.provider(), order_status="Inactive")
    if o.discontinued:
        ctx.poe_key += 1
        poe.add(1, poe_key=ctx.poe_key, subject_id=sid, hadm_id=adm.hadm_id, ordertime=o.stop, order_type="Medications",
                order_subtype=None, transaction_type="D/C", discontinue_of_key=float(o.poe_key),
                discontinued_by_key=NAN, order_provider_id=ctx.provider(), order_status="Inactive")


def emar_detail(emar: Frame) -> Frame:
    """One ``emar_detail`` row per administration (dose due and given, route, product)."""
    n = len(emar["emar_id"])
    administered = (emar["event_txt"] == "Administered").astype(np.int64)
    given = np.where(administered == 1, emar["dose"], np.full(n, None, dtype=object))
    return {
        "subject_id": emar["subject_id"],
        "emar_id": emar["emar_id"],
        "emar_seq": emar["emar_seq"],
        "parent_field_ordinal": np.full(n, "1.1", dtype=object),
        "administration_type": np.where(emar["form"] == "BAG", "IV Infusion", "Standard Dose").astype(object),
        "pharmacy_id": emar["pharmacy_id"],
        "barcode_type": np.full(n, "if", dtype=object),
        "dose_due": emar["dose"],
        "dose_due_unit": emar["unit"],
        "dose_given": given,
        "dose_given_unit": np.where(administered == 1, emar["unit"], np.full(n, None, dtype=object)),
        "product_amount_given": given,
        "product_unit": emar["form"],
        "product_description": emar["medication"],
        "route": emar["route"],
    }
