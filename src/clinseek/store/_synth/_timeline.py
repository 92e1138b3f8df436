"""Patient timelines: who the patients are and the encounters they have, in time order.

One timeline per patient: outpatient visits, ED visits (some admitted, some sent home, some
returning within days), admissions (ward and ICU segments, ICU readmissions, deaths) and, for
some, a death after discharge. Everything later generated (labs, vitals, medications, notes,
images) hangs off these encounters, so the tables agree with each other. Sicker patients
(higher ``severity``) are more often admitted, go to the ICU, stay longer and die more; that is
what makes the record predictive.

Times are float seconds on MIMIC's shifted clock (years 2110-2210), rounded to the minute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ._conditions import CHRONIC, MINOR, PROBLEM_WEIGHTS, PROBLEMS, Problem
from ._frame import DAY, HOUR, MINUTE

YEAR = 365.25 * DAY
EPOCH_YEAR = 1970
YEAR_GROUPS = ("2008 - 2010", "2011 - 2013", "2014 - 2016", "2017 - 2019", "2020 - 2022")
ICD10_FROM = 2015.75  # US switch to ICD-10 on 2015-10-01 (real calendar)

ICU_UNITS = {
    "MED": "Medical Intensive Care Unit (MICU)",
    "CMED": "Coronary Care Unit (CCU)",
    "NMED": "Neuro Surgical Intensive Care Unit (Neuro SICU)",
    "ORTHO": "Surgical Intensive Care Unit (SICU)",
}
WARD_UNITS = {"MED": "Medicine", "CMED": "Medicine/Cardiology", "NMED": "Neurology", "ORTHO": "Orthopaedics"}
ED_UNIT = "Emergency Department"
RACES = ("WHITE", "BLACK/AFRICAN AMERICAN", "HISPANIC/LATINO - PUERTO RICAN", "ASIAN", "OTHER", "UNKNOWN")
RACE_P = (0.62, 0.15, 0.07, 0.05, 0.06, 0.05)


@dataclass(slots=True)
class Patient:
    """One patient and the static facts the tables need."""

    index: int
    subject_id: int
    gender: str
    anchor_age: int
    anchor_year: int
    anchor_year_group: str
    real_anchor_year: int
    chronic: tuple[int, ...]
    frailty: float
    race: str
    marital_status: str
    language: str
    weight_kg: float
    height_in: float
    dod: float = math.nan

    def age_at(self, t: float) -> float:
        """Age in years at time ``t``."""
        return self.anchor_age + (t - year_start(self.anchor_year)) / YEAR

    def real_year(self, t: float) -> float:
        """The (de-identified) real calendar year of time ``t``; decides ICD-9 vs ICD-10."""
        return self.real_anchor_year + (t - year_start(self.anchor_year)) / YEAR


@dataclass(slots=True)
class IcuStay:
    """One ICU stay inside an admission."""

    stay_id: int
    careunit: str
    intime: float
    outtime: float
    ventilated: bool
    pressors: bool
    died: bool


@dataclass(slots=True)
class Segment:
    """One row of ``hosp.transfers`` (a unit the patient was in)."""

    transfer_id: int
    eventtype: str
    careunit: str | None
    intime: float
    outtime: float


@dataclass(slots=True)
class EdVisit:
    """One emergency department stay."""

    stay_id: int
    intime: float
    outtime: float
    disposition: str
    arrival_transport: str
    acuity: int
    complaint: str
    severity: float
    dx: tuple[tuple[str, str], ...]  # (icd9, icd10) codes assigned at ED discharge
    drugs: tuple[str, ...]
    hadm_index: int | None = None
    hadm_id: int | None = None
    transfer: Segment | None = None


@dataclass(slots=True)
class Admission:
    """One hospital admission with its ward/ICU segments and outcome."""

    hadm_id: int
    problem: Problem
    severity: float
    admittime: float
    dischtime: float
    died: bool
    admission_type: str
    admission_location: str
    discharge_location: str
    insurance: str
    icd_version: int
    ed: EdVisit | None
    icu: list[IcuStay] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    services: list[tuple[float, str | None, str]] = field(default_factory=list)

    @property
    def deathtime(self) -> float:
        """Time of in-hospital death (NaN when discharged alive)."""
        return self.dischtime if self.died else math.nan


@dataclass(slots=True)
class Timeline:
    """Everything that happens to one patient."""

    patient: Patient
    admissions: list[Admission] = field(default_factory=list)
    ed_visits: list[EdVisit] = field(default_factory=list)
    outpatient: list[float] = field(default_factory=list)  # clinic visit times (omr, outpatient labs)
    ed_transfers: list[Segment] = field(default_factory=list)  # ED rows of visits that were not admitted


def year_start(year: int) -> float:
    """Seconds since 1970 of 1 January of ``year`` (proleptic Gregorian, shifted years allowed)."""
    return float((np.datetime64(f"{year:04d}-01-01") - np.datetime64("1970-01-01")) / np.timedelta64(1, "s"))


def _minute(t: float) -> float:
    return math.floor(t / MINUTE) * MINUTE


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class _Ids:
    """Per-patient id slots, so ids stay unique and deterministic whatever the chunking.

    Patient ``i`` owns ids ``base + i * stride + 1 .. base + (i + 1) * stride``; a timeline has at
    most :data:`MAX_EPISODES` episodes, which bounds every count below its stride. The ranges stay
    inside MIMIC's (2xxxxxxx admissions, 3xxxxxxx stays and transfers) up to 20,000 patients.
    """

    STRIDES: ClassVar[dict[str, int]] = {"hadm": 20, "icu": 40, "ed": 20, "transfer": 100}
    BASES: ClassVar[dict[str, int]] = {"hadm": 20_000_000, "icu": 30_000_000, "ed": 33_000_000, "transfer": 36_000_000}

    def __init__(self, index: int) -> None:
        self.index = index
        self.used = dict.fromkeys(self.STRIDES, 0)

    def _next(self, kind: str) -> int:
        self.used[kind] += 1
        if self.used[kind] > self.STRIDES[kind]:  # pragma: no cover - bounded by MAX_EPISODES
            raise AssertionError(f"patient {self.index}: more than {self.STRIDES[kind]} {kind} ids")
        return self.BASES[kind] + self.index * self.STRIDES[kind] + self.used[kind]

    def next_hadm(self) -> int:
        return self._next("hadm")

    def next_icu(self) -> int:
        return self._next("icu")

    def next_ed(self) -> int:
        return self._next("ed")

    def next_transfer(self) -> int:
        return self._next("transfer")


MAX_EPISODES = 12


def make_patient(index: int, subject_id: int, rng: np.random.Generator) -> Patient:
    """Draw one patient's static facts (sex, age, anchor year, comorbidities, frailty)."""
    age = int(np.clip(rng.normal(60, 17), 18, 91))
    age = 91 if age >= 90 else age  # MIMIC groups patients over 89 as 91
    chronic: list[int] = []
    for i, c in enumerate(CHRONIC):
        p = min(0.95, c.prevalence * (0.35 + 1.1 * age / 75))
        if c.key in ("htn_ckd", "dm_ckd"):
            continue
        if rng.random() < p:
            chronic.append(i)
    keys = {CHRONIC[i].key for i in chronic}
    for i, c in enumerate(CHRONIC):
        if c.key == "htn_ckd" and {"htn", "ckd"} <= keys and rng.random() < 0.5:
            chronic.append(i)
        if c.key == "dm_ckd" and {"dm2", "ckd"} <= keys and rng.random() < 0.5:
            chronic.append(i)
    frailty = float(np.clip(0.05 + 0.45 * (age - 18) / 73 + 0.06 * len(chronic) + rng.normal(0, 0.08), 0, 1))
    group = int(rng.integers(len(YEAR_GROUPS)))
    weight = float(np.clip(rng.normal(78, 14) + (22 if "obesity" in keys else 0), 40, 200))
    return Patient(
        index=index,
        subject_id=subject_id,
        gender="F" if rng.random() < 0.5 else "M",
        anchor_age=age,
        anchor_year=int(rng.integers(2110, 2190)),
        anchor_year_group=YEAR_GROUPS[group],
        real_anchor_year=2008 + 3 * group + int(rng.integers(3)),
        chronic=tuple(sorted(chronic)),
        frailty=frailty,
        race=str(rng.choice(RACES, p=RACE_P)),
        marital_status=str(rng.choice(("MARRIED", "SINGLE", "WIDOWED", "DIVORCED"), p=(0.45, 0.3, 0.15, 0.1))),
        language="English" if rng.random() < 0.9 else "Other",
        weight_kg=round(weight, 1),
        height_in=round(float(np.clip(rng.normal(66.5, 3.8), 55, 80)), 1),
    )


def make_timeline(patient: Patient, rng: np.random.Generator) -> Timeline:
    """Draw one patient's encounters, oldest first, ending at death or the end of follow-up."""
    tl = Timeline(patient)
    ids = _Ids(patient.index)
    t = _minute(year_start(patient.anchor_year) + rng.uniform(0.05, 1.5) * YEAR)
    last_clinic = t - rng.uniform(30, 200) * DAY
    episodes = min(int(rng.geometric(0.33)), 8)
    k = 0
    forced_return = False
    while k < episodes:
        last_clinic = _clinic_visits(tl, last_clinic, t, rng)
        minor = not forced_return and rng.random() < 0.2
        forced_return = False
        if minor:
            visit = _minor_visit(tl, ids, t, rng)
            k += 1
            if rng.random() < 0.25 and k < episodes:
                t = _minute(visit.outtime + rng.uniform(6 * HOUR, 70 * HOUR))
                forced_return = True
                continue
            t = _minute(visit.outtime + rng.uniform(40, 400) * DAY)
            continue
        adm = _episode(tl, ids, t, rng)
        k += 1
        if adm is None:  # seen in the ED and sent home
            visit = tl.ed_visits[-1]
            t = _minute(visit.outtime + rng.uniform(30, 300) * DAY)
            continue
        if adm.died:
            patient.dod = math.floor(adm.dischtime / DAY) * DAY
            return tl
        last_clinic = adm.dischtime
        p_readmit = min(0.7, 0.02 + 0.25 * adm.severity + 0.22 * patient.frailty)
        if rng.random() < p_readmit:
            t = _minute(adm.dischtime + rng.uniform(1.0, 29.0) * DAY)
            if k >= episodes and episodes < MAX_EPISODES:
                episodes += 1
        else:
            t = _minute(adm.dischtime + rng.uniform(35, 500) * DAY)
    end = t
    last_clinic = _clinic_visits(tl, last_clinic, end, rng)
    if rng.random() < 0.02 + 0.1 * patient.frailty:
        last_event = max([last_clinic, *(a.dischtime for a in tl.admissions), *(v.outtime for v in tl.ed_visits)])
        patient.dod = math.floor((last_event + rng.uniform(20, 360) * DAY) / DAY) * DAY
    return tl


def _clinic_visits(tl: Timeline, since: float, until: float, rng: np.random.Generator) -> float:
    """Outpatient visits (omr, outpatient labs) every few months between ``since`` and ``until``."""
    t = since + rng.uniform(20, 120) * DAY
    while t < until - 2 * DAY:
        tl.outpatient.append(_minute(math.floor(t / DAY) * DAY + rng.uniform(8, 17) * HOUR))
        since = t
        t += rng.uniform(45, 200) * DAY
    return since


def _ed_dx(dx9: str, dx10: str, patient: Patient, t: float) -> tuple[tuple[str, str], ...]:
    return ((dx9, dx10),)


def _minor_visit(tl: Timeline, ids: _Ids, t: float, rng: np.random.Generator) -> EdVisit:
    m = MINOR[int(rng.integers(len(MINOR)))]
    out = _minute(t + rng.uniform(1.5, 7) * HOUR)
    disposition = str(rng.choice(("HOME", "LEFT WITHOUT BEING SEEN", "LEFT AGAINST MEDICAL ADVICE"), p=(0.9, 0.05, 0.05)))
    severity = float(np.clip(rng.normal(0.12, 0.06), 0, 0.3))
    visit = EdVisit(
        ids.next_ed(), t, out, disposition, str(rng.choice(("WALK IN", "AMBULANCE"), p=(0.75, 0.25))),
        int(rng.choice((3, 4, 5), p=(0.4, 0.45, 0.15))), m.complaint, severity,
        _ed_dx(m.icd9, m.icd10, tl.patient, t), m.drugs,
    )
    visit.transfer = Segment(ids.next_transfer(), "ED", ED_UNIT, t, out)
    tl.ed_visits.append(visit)
    tl.ed_transfers.append(visit.transfer)
    return visit


def _draw_problem(rng: np.random.Generator, prev: Problem | None) -> Problem:
    if prev is not None and not prev.elective and rng.random() < 0.45:
        return prev
    return PROBLEMS[int(rng.choice(len(PROBLEMS), p=np.asarray(PROBLEM_WEIGHTS) / sum(PROBLEM_WEIGHTS)))]


def _acuity(severity: float, rng: np.random.Generator) -> int:
    score = severity + rng.normal(0, 0.08)
    return 1 if score > 0.78 else 2 if score > 0.48 else 3 if score > 0.25 else 4


def _episode(tl: Timeline, ids: _Ids, t: float, rng: np.random.Generator) -> Admission | None:
    """An acute episode: ED visit and/or admission. Returns None when the ED sent the patient home."""
    patient = tl.patient
    prev = tl.admissions[-1].problem if tl.admissions else None
    problem = _draw_problem(rng, prev)
    severity = float(np.clip(problem.severity + 0.3 * (patient.frailty - 0.4) + rng.normal(0, 0.17), 0.02, 0.99))
    ed: EdVisit | None = None
    if not problem.elective and rng.random() < 0.93:
        admit_p = _sigmoid(-1.0 + 9.0 * (severity - 0.3))
        ed = EdVisit(
            ids.next_ed(), t, 0.0, "", str(rng.choice(("AMBULANCE", "WALK IN", "HELICOPTER"), p=(0.55, 0.43, 0.02))),
            _acuity(severity, rng), problem.complaint, severity,
            ((problem.dx.icd9, problem.dx.icd10),), problem.drugs[:2],
        )
        tl.ed_visits.append(ed)
        if rng.random() > admit_p:
            ed.outtime = _minute(t + rng.uniform(3, 9) * HOUR)
            ed.disposition = "HOME"
            ed.transfer = Segment(ids.next_transfer(), "ED", ED_UNIT, t, ed.outtime)
            tl.ed_transfers.append(ed.transfer)
            return None
    return _admit(tl, ids, t, problem, severity, ed, rng)


def _admit(
    tl: Timeline, ids: _Ids, t: float, problem: Problem, severity: float, ed: EdVisit | None, rng: np.random.Generator
) -> Admission:
    patient = tl.patient
    if ed is not None:
        admittime = _minute(t + rng.uniform(1.5, 5.5) * HOUR)
        ward_start = _minute(admittime + rng.uniform(0.5, 3.0) * HOUR)
        ed.outtime = ward_start
        ed.disposition = "ADMITTED"
        adm_type, adm_loc = str(rng.choice(("EW EMER.", "URGENT", "OBSERVATION ADMIT"), p=(0.75, 0.1, 0.15))), "EMERGENCY ROOM"
    else:
        admittime = _minute(math.floor(t / DAY) * DAY + rng.uniform(6, 11) * HOUR)
        ward_start = admittime
        if problem.elective:
            adm_type, adm_loc = "ELECTIVE", "PHYSICIAN REFERRAL"
        else:
            adm_type, adm_loc = "DIRECT EMER.", str(rng.choice(("TRANSFER FROM HOSPITAL", "PHYSICIAN REFERRAL")))
    los = problem.los_days * math.exp(rng.normal(0, 0.5)) * (0.45 + 1.0 * severity) * DAY
    p_death = _sigmoid(-8.6 + 8.3 * severity + 1.6 * patient.frailty)
    died = rng.random() < p_death
    p_icu = _sigmoid(-5.0 + 6.5 * severity + problem.icu)
    icu = (died and rng.random() < 0.75) or rng.random() < p_icu
    age = patient.age_at(admittime)
    adm = Admission(
        hadm_id=ids.next_hadm(),
        problem=problem,
        severity=severity,
        admittime=admittime,
        dischtime=0.0,
        died=died,
        admission_type=adm_type,
        admission_location=adm_loc,
        discharge_location="",
        insurance="Medicare" if age >= 65 else str(rng.choice(("Private", "Medicaid", "Other"), p=(0.6, 0.3, 0.1))),
        icd_version=10 if patient.real_year(admittime) >= ICD10_FROM else 9,
        ed=ed,
    )
    if ed is not None:
        ed.hadm_id = adm.hadm_id
        ed.hadm_index = len(tl.admissions)
        ed.transfer = Segment(ids.next_transfer(), "ED", ED_UNIT, ed.intime, ward_start)
        adm.segments.append(ed.transfer)
    _stay(adm, ids, ward_start, los, icu, rng)
    adm.discharge_location = "DIED" if died else _discharge_location(severity, age, rng)
    tl.admissions.append(adm)
    return adm


def _discharge_location(severity: float, age: float, rng: np.random.Generator) -> str:
    if rng.random() < 0.02:
        return "AGAINST ADVICE"
    p_facility = _sigmoid(-3.0 + 3.5 * severity + 0.04 * (age - 65))
    if rng.random() < p_facility:
        return str(rng.choice(("SKILLED NURSING FACILITY", "REHAB", "HOSPICE"), p=(0.65, 0.3, 0.05)))
    return str(rng.choice(("HOME", "HOME HEALTH CARE"), p=(0.6, 0.4)))


def _stay(adm: Admission, ids: _Ids, start: float, los: float, icu: bool, rng: np.random.Generator) -> None:
    """Lay out the ward and ICU segments from ``start`` and set ``dischtime``."""
    service = adm.problem.service
    ward = WARD_UNITS[service]
    icu_unit = ICU_UNITS[service] if rng.random() < 0.85 else "Medical/Surgical Intensive Care Unit (MICU/SICU)"
    segments: list[tuple[str, float]] = []  # (careunit, length in seconds)
    if adm.problem.elective or adm.problem.key == "hip_fracture":
        segments.append(("PACU", rng.uniform(2, 5) * HOUR))
    if icu:
        direct = adm.severity > 0.6 and rng.random() < 0.7
        pre_ward = 0.0 if direct else rng.uniform(0.2, 2.5) * DAY
        if pre_ward:
            segments.append((ward, pre_ward))
        icu_len = 1.6 * DAY * math.exp(rng.normal(0, 0.75)) * (1 + 2.2 * adm.severity)
        icu_len = max(icu_len, 6 * HOUR)
        segments.append((icu_unit, icu_len))
        if not adm.died or rng.random() < 0.25:
            segments.append((ward, max(0.5 * DAY, los - pre_ward - icu_len)))
            if rng.random() < 0.05 + 0.25 * adm.severity:
                segments.append((icu_unit, max(8 * HOUR, 1.2 * DAY * math.exp(rng.normal(0, 0.6)))))
                if not adm.died:
                    segments.append((ward, rng.uniform(1, 4) * DAY))
    else:
        segments.append((ward, max(6 * HOUR, los)))
    if adm.died and segments[-1][0] == ward:
        segments[-1] = (ward, segments[-1][1] * rng.uniform(0.3, 1.0))
    t = start
    for i, (unit, length) in enumerate(segments):
        end = _minute(t + length)
        end = max(end, t + 30 * MINUTE)
        eventtype = "admit" if i == 0 else "transfer"
        adm.segments.append(Segment(ids.next_transfer(), eventtype, unit, t, end))
        if "Intensive" in unit or "Care Unit" in unit:
            last = i == len(segments) - 1
            adm.icu.append(
                IcuStay(ids.next_icu(), unit, t, end, adm.severity > 0.55 and rng.random() < 0.8,
                        adm.severity > 0.5 and rng.random() < 0.85, adm.died and last)
            )
        t = end
    adm.dischtime = t
    adm.segments.append(Segment(ids.next_transfer(), "discharge", None, t, math.nan))
    adm.services.append((adm.admittime, None, service))
    if service == "MED" and adm.icu and rng.random() < 0.2:
        adm.services.append((_minute(adm.icu[0].intime + HOUR), service, "CMED"))
