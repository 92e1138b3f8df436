"""Shared state of one generation chunk: the random generator, id counters and lookups."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._conditions import CHRONIC, Dx, Px
from ._frame import DAY
from ._timeline import Admission, Timeline


@dataclass(slots=True)
class Counters:
    """Global running ids, carried from chunk to chunk so every id is unique in the store."""

    labevent_id: int = 1
    specimen_id: int = 1_000_001
    microevent_id: int = 1
    micro_specimen_id: int = 100_001
    pharmacy_id: int = 1_000_001
    orderid: int = 1_000_001
    study_id: int = 50_000_001


@dataclass(slots=True)
class Ctx:
    """Everything a table generator needs besides the timelines of its chunk."""

    rng: np.random.Generator
    counters: Counters
    providers: tuple[str, ...]
    caregivers: np.ndarray
    dx_titles: dict[tuple[str, int], str]
    px_titles: dict[tuple[str, int], str]
    poe_key: int = 0
    lab_summary: dict[int, dict[str, dict[int, float]]] = field(default_factory=dict)
    """hadm_id -> {"first"/"last": {itemid: value}} of the first and last inpatient lab draw (for notes)."""
    dx: dict[int, list[str]] = field(default_factory=dict)
    """hadm_id -> the coded diagnoses, in seq_num order (for notes)."""
    organisms: dict[int, list[str]] = field(default_factory=dict)
    """hadm_id -> organisms grown (for notes)."""
    plans: dict[int, list[Any]] = field(default_factory=dict)
    """hadm_id -> the admission's medication orders (``_meds.MedOrder``)."""

    def provider(self) -> str:
        """A random provider id."""
        return self.providers[int(self.rng.integers(len(self.providers)))]

    def caregiver(self, n: int) -> np.ndarray:
        """``n`` random caregiver ids."""
        return self.caregivers[self.rng.integers(len(self.caregivers), size=n)]


def code(dx: Dx | Px, version: int) -> str:
    """The ICD code of a diagnosis or procedure in ``version`` (9 or 10)."""
    return dx.icd9 if version == 9 else dx.icd10


def chronic_drugs(tl: Timeline) -> list[str]:
    """The patient's home medications (from their chronic conditions), without repeats."""
    out: list[str] = []
    for i in tl.patient.chronic:
        for d in CHRONIC[i].drugs:
            if d not in out:
                out.append(d)
    return out


def chronic_shift(tl: Timeline) -> dict[int, float]:
    """Lab mean shifts from the patient's chronic conditions, by itemid."""
    out: dict[int, float] = {}
    for i in tl.patient.chronic:
        for item, shift in CHRONIC[i].lab_shift.items():
            out[item] = out.get(item, 0.0) + shift
    return out


def trajectory(adm: Admission, t: np.ndarray) -> np.ndarray:
    """How much of the acute derangement is present at times ``t`` (1 at admission).

    Survivors recover towards 0.2 by discharge; patients who die worsen towards 1.4.
    """
    span = max(adm.dischtime - adm.admittime, 1.0)
    frac = np.clip((t - adm.admittime) / span, 0, 1)
    return 0.85 + 0.55 * frac if adm.died else 1.0 - 0.8 * frac


def day_floor(t: float) -> float:
    """Midnight of the day of ``t``."""
    return math.floor(t / DAY) * DAY
