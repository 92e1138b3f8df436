"""Per-subject sequence ids of MIMIC: ``poe_id = <subject_id>-<poe_seq>`` and ``emar_id = <subject_id>-<emar_seq>``.

Sequence numbers count a subject's orders (administrations) in time order, as in MIMIC-IV.
Generators carry integer ``poe_key`` values; they are turned into ``poe_id`` here.
"""

from __future__ import annotations

import numpy as np

from ._frame import Frame, frame_len


def _seq(subject: np.ndarray, time: np.ndarray, tie: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort order and 1-based rank within subject by (time, tie)."""
    order = np.lexsort((tie, time, subject))
    s = subject[order]
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(s)]))
    rank = np.empty(len(s), dtype=np.int64)
    rank[order] = np.arange(len(s)) - group_start + 1
    return order, rank


def _ids(subject: np.ndarray, seq: np.ndarray) -> np.ndarray:
    return np.char.add(np.char.add(subject.astype(np.int64).astype(str), "-"), seq.astype(str)).astype(object)


def _concat(a: Frame, b: Frame) -> Frame:
    if not frame_len(a):
        return b
    if not frame_len(b):
        return a
    return {k: np.concatenate([np.asarray(a[k]), np.asarray(b[k])]) for k in a}


def number_poe(meds: dict[str, Frame], poe: Frame, detail: Frame) -> dict[str, Frame]:
    """Assign ``poe_id``/``poe_seq`` and resolve every ``poe_key`` reference.

    Returns ``hosp.poe``, ``hosp.poe_detail``, ``hosp.pharmacy``, ``hosp.prescriptions`` and ``emar``
    (eMAR rows with ``poe_id``, still to be numbered by :func:`number_emar`).
    """
    allpoe = _concat(meds["poe_meds"], poe)
    out: dict[str, Frame] = {}
    if not frame_len(allpoe):
        return {"hosp.poe": {}, "hosp.poe_detail": {}, "hosp.pharmacy": meds["pharmacy"],
                "hosp.prescriptions": meds["prescriptions"], "emar": meds["emar"]}
    keys = allpoe["poe_key"].astype(np.int64)
    subject = allpoe["subject_id"].astype(np.int64)
    _, seq = _seq(subject, allpoe["ordertime"].astype(np.float64), keys)
    poe_id = _ids(subject, seq)
    id_of = dict(zip(keys.tolist(), poe_id.tolist(), strict=True))
    seq_of = dict(zip(keys.tolist(), seq.tolist(), strict=True))
    disc_of = allpoe.pop("discontinue_of_key").astype(np.float64)
    allpoe.pop("discontinued_by_key")
    by: dict[int, str] = {int(k): id_of[int(o)] for k, o in zip(keys, disc_of, strict=True) if not np.isnan(o)}
    by_orig = {int(o): id_of[int(k)] for k, o in zip(keys, disc_of, strict=True) if not np.isnan(o)}
    allpoe["poe_id"] = poe_id
    allpoe["poe_seq"] = seq
    allpoe["discontinue_of_poe_id"] = np.array([by.get(int(k)) for k in keys], dtype=object)
    allpoe["discontinued_by_poe_id"] = np.array([by_orig.get(int(k)) for k in keys], dtype=object)
    allpoe.pop("poe_key")
    out["hosp.poe"] = allpoe
    if frame_len(detail):
        dkeys = detail.pop("poe_key").astype(np.int64)
        detail["poe_id"] = np.array([id_of[int(k)] for k in dkeys], dtype=object)
        detail["poe_seq"] = np.array([seq_of[int(k)] for k in dkeys], dtype=np.int64)
    out["hosp.poe_detail"] = detail
    for name in ("pharmacy", "prescriptions", "emar"):
        frame = meds[name]
        if frame_len(frame):
            fkeys = frame.pop("poe_key").astype(np.int64)
            frame["poe_id"] = np.array([id_of[int(k)] for k in fkeys], dtype=object)
            if name == "prescriptions":
                frame["poe_seq"] = np.array([seq_of[int(k)] for k in fkeys], dtype=np.int64)
        out[name if name == "emar" else f"hosp.{name}"] = frame
    return out


def number_emar(emar: Frame) -> Frame:
    """Assign ``emar_seq`` (per subject, by charttime) and ``emar_id``."""
    if not frame_len(emar):
        return emar
    subject = emar["subject_id"].astype(np.int64)
    _, seq = _seq(subject, emar["charttime"].astype(np.float64), emar["pharmacy_id"].astype(np.int64))
    emar["emar_seq"] = seq
    emar["emar_id"] = _ids(subject, seq)
    return emar
