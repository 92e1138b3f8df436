"""``hosp.labevents`` and ``hosp.microbiologyevents``.

Labs: a full panel on arrival, a morning panel every hospital day and a second one every ICU
day, outpatient panels at clinic visits (``hadm_id`` NULL). Values follow the patient's chronic
conditions and the admission's problem, scaled by severity and by the trajectory (recovering or
dying). Results are stored 20 min-3 h after the draw (``storetime`` > ``charttime``).
Cultures: infections grow organisms with susceptibilities, resulted 1-4 days later.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._conditions import PROBLEMS
from ._context import Ctx, chronic_shift, day_floor, trajectory
from ._frame import DAY, HOUR, MINUTE, NAN, Frame, Rows
from ._items import (
    ANTIBIOTICS,
    BMP,
    CBC,
    COAG,
    GAS,
    LABS,
    LFT,
    ORGANISMS,
    OUTPATIENT,
    PROBLEM_PANELS,
    SPECIMENS,
)
from ._timeline import Admission, Timeline

_LAB_ITEMS = np.array(sorted(LABS), dtype=np.int64)
_INDEX = {item: i for i, item in enumerate(_LAB_ITEMS)}
_MEAN = np.array([LABS[i].mean for i in _LAB_ITEMS])
_SD = np.array([LABS[i].sd for i in _LAB_ITEMS])
_LOW = np.array([LABS[i].low for i in _LAB_ITEMS])
_HIGH = np.array([LABS[i].high for i in _LAB_ITEMS])
_DEC = np.array([LABS[i].decimals for i in _LAB_ITEMS])
_FLOOR = np.array([LABS[i].floor for i in _LAB_ITEMS])
_UNIT = np.array([LABS[i].unit or None for i in _LAB_ITEMS], dtype=object)
_PROBLEM_SHIFT = {
    p.key: np.array([p.lab_shift.get(int(i), 0.0) for i in _LAB_ITEMS]) for p in PROBLEMS
}


def _draw_times(adm: Admission, rng: np.random.Generator) -> list[tuple[float, bool, bool]]:
    """(time, first draw, stat) of every inpatient draw."""
    first = (adm.ed.intime + rng.uniform(20, 60) * MINUTE) if adm.ed else adm.admittime + rng.uniform(0.5, 2) * HOUR
    out = [(math.floor(first / MINUTE) * MINUTE, True, True)]
    day = day_floor(adm.admittime) + DAY
    while day < adm.dischtime:
        t = day + rng.uniform(4.5, 6.5) * HOUR
        if first < t < adm.dischtime:
            out.append((math.floor(t / MINUTE) * MINUTE, False, False))
        day += DAY
    for stay in adm.icu:
        t = day_floor(stay.intime) + 17 * HOUR + rng.uniform(0, 2) * HOUR
        while t < stay.outtime:
            if t > stay.intime:
                out.append((math.floor(t / MINUTE) * MINUTE, False, True))
            t += DAY
    return sorted(out)


def _panel(adm: Admission, first: bool, icu_now: bool, day_index: int, diabetic: bool) -> list[int]:
    items = list(BMP + CBC)
    extra = PROBLEM_PANELS.get(adm.problem.key, ())
    if first:
        items += [i for i in COAG + LFT if i not in items]
        if diabetic:
            items.append(50852)
    if first or day_index < 3 or day_index % 2 == 0:
        items += [i for i in extra if i not in items]
    if icu_now and adm.severity > 0.5:
        items += [i for i in GAS if i not in items]
    return items


def labevents(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """Rows of ``hosp.labevents`` for a chunk (labevent_id and specimen_id from ctx.counters)."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        shift = chronic_shift(tl)
        base = _MEAN + np.array([shift.get(int(i), 0.0) for i in _LAB_ITEMS])
        diabetic = 50931 in shift
        for adm in tl.admissions:
            draws = _draw_times(adm, rng)
            for k, (t, first, stat) in enumerate(draws):
                icu_now = any(s.intime <= t < s.outtime for s in adm.icu)
                idx = np.array([_INDEX[i] for i in _panel(adm, first, icu_now, k, diabetic)])
                traj = float(trajectory(adm, np.array([t]))[0])
                mean = base[idx] + _PROBLEM_SHIFT[adm.problem.key][idx] * adm.severity * traj
                in_ed = adm.ed is not None and t < adm.ed.outtime
                hadm = NAN if in_ed and rng.random() < 0.5 else float(adm.hadm_id)
                values = _add_panel(rows, ctx, tl.patient.subject_id, hadm, t, idx, mean, "STAT" if stat else "ROUTINE")
                summary = ctx.lab_summary.setdefault(adm.hadm_id, {})
                got = dict(zip(_LAB_ITEMS[idx].tolist(), values.tolist(), strict=True))
                summary.setdefault("first", got)
                summary["last"] = got
        for t in tl.outpatient:
            if rng.random() < 0.45:
                idx = np.array([_INDEX[i] for i in OUTPATIENT])
                _add_panel(rows, ctx, tl.patient.subject_id, NAN, t, idx, base[idx], "ROUTINE")
    return _finish_labs(rows.frame())


def _add_panel(
    rows: Rows, ctx: Ctx, subject_id: int, hadm: float, t: float, idx: np.ndarray, mean: np.ndarray, priority: str
) -> np.ndarray:
    rng = ctx.rng
    n = len(idx)
    values = np.maximum(mean + rng.normal(0, 1, n) * _SD[idx], _FLOOR[idx])
    scale = 10.0 ** _DEC[idx]
    values = np.round(values * scale) / scale
    store = t + math.floor(rng.uniform(20, 180)) * MINUTE
    rows.add(
        n,
        subject_id=subject_id,
        hadm_id=hadm,
        specimen_id=ctx.counters.specimen_id,
        itemid=_LAB_ITEMS[idx],
        order_provider_id=ctx.provider(),
        charttime=t,
        storetime=store,
        valuenum=values,
        decimals=_DEC[idx],
        ref_range_lower=_LOW[idx],
        ref_range_upper=_HIGH[idx],
        valueuom=_UNIT[idx],
        priority=priority,
    )
    ctx.counters.specimen_id += 1
    return np.asarray(values, dtype=np.float64)


def _finish_labs(frame: Frame) -> Frame:
    if not frame:
        return frame
    frame.pop("decimals")
    rounded = frame["valuenum"].astype(np.float64)
    frame["value"] = pc.cast(pa.array(rounded), pa.string())
    outside = (rounded < frame["ref_range_lower"]) | (rounded > frame["ref_range_upper"])
    frame["flag"] = np.array([None, "abnormal"], dtype=object)[outside.astype(np.int64)]
    return frame


def microbiologyevents(timelines: list[Timeline], ctx: Ctx) -> Frame:
    """Rows of ``hosp.microbiologyevents``: cultures of infected admissions and ICU MRSA screens."""
    rows = Rows()
    rng = ctx.rng
    for tl in timelines:
        for adm in tl.admissions:
            start = adm.ed.intime if adm.ed else adm.admittime
            specimens = list(adm.problem.micro)
            if adm.icu:
                specimens.append("mrsa")
            for key in specimens:
                t = math.floor((start + rng.uniform(0.3, 3) * HOUR) / MINUTE) * MINUTE
                positive = key != "mrsa" and rng.random() < 0.2 + 0.5 * adm.severity
                organism = adm.problem.organisms[int(rng.integers(len(adm.problem.organisms)))] if positive else None
                if organism is not None:
                    ctx.organisms.setdefault(adm.hadm_id, []).append(ORGANISMS[organism][1].lower())
                _culture(rows, ctx, tl.patient.subject_id, adm.hadm_id, t, key, organism)
    return rows.frame()


def _culture(rows: Rows, ctx: Ctx, subject_id: int, hadm_id: int, t: float, key: str, organism: str | None) -> None:
    rng = ctx.rng
    spec = SPECIMENS[key]
    result = math.floor((t + rng.uniform(1, 4) * DAY) / MINUTE) * MINUTE
    no_time = rng.random() < 0.05  # some specimens carry only a date (charttime NULL)
    common = dict(
        subject_id=subject_id,
        hadm_id=float(hadm_id),
        micro_specimen_id=ctx.counters.micro_specimen_id,
        order_provider_id=ctx.provider(),
        chartdate=day_floor(t),
        charttime=NAN if no_time else t,
        spec_itemid=spec.spec_itemid,
        spec_type_desc=spec.spec_type_desc,
        test_seq=1,
        storedate=day_floor(result),
        storetime=result,
        test_itemid=spec.test_itemid,
        test_name=spec.test_name,
    )
    ctx.counters.micro_specimen_id += 1
    if organism is None:
        comment = "No MRSA isolated." if key == "mrsa" else "NO GROWTH."
        rows.add(1, **common, comments=comment)
        return
    org_itemid, org_name, abx = ORGANISMS[organism]
    n = len(abx)
    dilution = 2.0 ** rng.integers(-1, 5, n)
    resistant = rng.random(n) < 0.18
    interp = np.where(resistant, "R", "S").astype(object)
    comparison = np.where(resistant, "=>", "<=").astype(object)
    dilution_text = np.array([f"{c}{v:g}" for c, v in zip(comparison, dilution, strict=True)], dtype=object)
    rows.add(
        n,
        **common,
        org_itemid=float(org_itemid),
        org_name=org_name,
        isolate_num=1.0,
        ab_itemid=np.array(abx, dtype=np.float64),
        ab_name=np.array([ANTIBIOTICS[a] for a in abx], dtype=object),
        dilution_text=dilution_text,
        dilution_comparison=comparison,
        dilution_value=dilution,
        interpretation=interp,
    )
