"""MIMIC-IV-ED tables: edstays, triage (acuity and vitals track severity), vitalsign, diagnosis
(assigned at ED discharge, ICD version by calendar year), medrecon (the patient's home drugs) and
pyxis (drugs dispensed in the ED)."""

from __future__ import annotations

import math

import numpy as np

from ._context import Ctx, chronic_drugs
from ._drugs import DRUGS
from ._frame import HOUR, MINUTE, NAN, Frame, Rows, grid
from ._timeline import ICD10_FROM, EdVisit, Timeline


def _vitals(v: EdVisit, rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    s = v.severity
    return {
        "temperature": np.round(98.2 + 1.8 * s + rng.normal(0, 0.5, n), 1),
        "heartrate": np.round(np.clip(80 + 35 * s + rng.normal(0, 9, n), 40, 180)),
        "resprate": np.round(np.clip(16 + 10 * s + rng.normal(0, 2, n), 8, 40)),
        "o2sat": np.round(np.clip(98 - 9 * s + rng.normal(0, 1.5, n), 70, 100)),
        "sbp": np.round(np.clip(132 - 40 * s + rng.normal(0, 14, n), 60, 220)),
        "dbp": np.round(np.clip(78 - 20 * s + rng.normal(0, 9, n), 30, 130)),
    }


def ed_tables(timelines: list[Timeline], ctx: Ctx) -> dict[str, Frame]:
    """``edstays``, ``triage``, ``vitalsign``, ``diagnosis``, ``medrecon`` and ``pyxis`` for a chunk."""
    stays, triage, vitals, diagnosis, medrecon, pyxis = Rows(), Rows(), Rows(), Rows(), Rows(), Rows()
    rng = ctx.rng
    for tl in timelines:
        p = tl.patient
        home = chronic_drugs(tl)
        for v in tl.ed_visits:
            ids = {"subject_id": p.subject_id, "stay_id": v.stay_id}
            stays.add(1, subject_id=p.subject_id, hadm_id=float(v.hadm_id) if v.hadm_id else NAN, stay_id=v.stay_id,
                      intime=v.intime, outtime=v.outtime, gender=p.gender, race=p.race,
                      arrival_transport=v.arrival_transport, disposition=v.disposition)
            tv = _vitals(v, rng, 1)
            triage.add(1, **ids, **{k: x[0] for k, x in tv.items()}, pain=str(int(rng.integers(0, 11))),
                       acuity=float(v.acuity), chiefcomplaint=v.complaint)
            times = grid(v.intime + 20 * MINUTE, v.outtime, 1.5 * HOUR, rng, 30 * MINUTE)
            if len(times):
                vv = _vitals(v, rng, len(times))
                vitals.add(len(times), **ids, charttime=times, **vv, rhythm=None, pain=None)
            version = 10 if p.real_year(v.intime) >= ICD10_FROM else 9
            codes = [c9 if version == 9 else c10 for c9, c10 in v.dx]
            titles = [ctx.dx_titles.get((c, version), "") for c in codes]
            diagnosis.add(len(codes), **ids, seq_num=np.arange(1, len(codes) + 1), icd_code=codes,
                          icd_version=version, icd_title=[t.upper() if t else None for t in titles])
            if home and rng.random() < 0.8:
                t = math.floor((v.intime + rng.uniform(15, 90) * MINUTE) / MINUTE) * MINUTE
                drugs = [DRUGS[k] for k in home]
                medrecon.add(len(drugs), **ids, charttime=min(t, v.outtime - MINUTE), name=[d.drug for d in drugs],
                             gsn=[d.gsn for d in drugs], ndc=[d.ndc for d in drugs], etc_rn=1,
                             etccode=[str(abs(hash_code(d.etc)) % 9000 + 1000) for d in drugs],
                             etcdescription=[d.etc for d in drugs])
            for k, key in enumerate(v.drugs):
                d = DRUGS[key]
                t = math.floor((v.intime + rng.uniform(0.4, 0.9) * (v.outtime - v.intime)) / MINUTE) * MINUTE
                pyxis.add(1, **ids, charttime=t, med_rn=k + 1, name=d.drug, gsn_rn=1, gsn=d.gsn)
    return {
        "edstays": stays.frame(), "triage": triage.frame(), "vitalsign": vitals.frame(),
        "diagnosis": diagnosis.frame(), "medrecon": medrecon.frame(), "pyxis": pyxis.frame(),
    }


def hash_code(text: str) -> int:
    """A stable small integer for a text (Python's ``hash`` is salted per process)."""
    value = 0
    for ch in text:
        value = (value * 131 + ord(ch)) % 1_000_003
    return value
