"""Label distributions make every EHR-Bench risk task non-trivial (neither label constant)."""

from __future__ import annotations

import numpy as np

from clinseek.store._synth._timeline import Timeline

DAY = 86400.0


def _admissions(timelines: list[Timeline]) -> list:
    return [a for tl in timelines for a in tl.admissions]


def test_in_hospital_mortality_is_about_ten_percent(timelines: list[Timeline]) -> None:
    rate = np.mean([a.died for a in _admissions(timelines)])
    assert 0.06 <= rate <= 0.15


def test_thirty_day_readmission_is_about_fifteen_percent(timelines: list[Timeline]) -> None:
    readmitted = []
    for tl in timelines:
        alive = [a for a in tl.admissions if not a.died]
        for a in alive:
            later = [b.admittime for b in tl.admissions if b.admittime > a.dischtime]
            readmitted.append(bool(later) and min(later) - a.dischtime <= 30 * DAY)
    rate = np.mean(readmitted)
    assert 0.10 <= rate <= 0.22


def test_icu_stays_longer_than_seven_and_fourteen_days_exist(timelines: list[Timeline]) -> None:
    los = np.array([(s.outtime - s.intime) / DAY for a in _admissions(timelines) for s in a.icu])
    assert 0.05 <= np.mean(los > 7) <= 0.4
    assert np.any(los > 14)
    assert np.mean([len(a.icu) > 1 for a in _admissions(timelines) if a.icu]) > 0.03  # ICU readmission


def test_every_risk_label_takes_both_values(timelines: list[Timeline]) -> None:
    adms = _admissions(timelines)
    hospital_los = np.array([(a.dischtime - a.admittime) / DAY for a in adms])
    visits = [v for tl in timelines for v in tl.ed_visits]
    admitted = np.array([v.hadm_id is not None for v in visits])
    icu_died = np.array([s.died for a in adms for s in a.icu])
    labels = {
        "LengthOfStay_3day": hospital_los > 3,
        "LengthOfStay_7day": hospital_los > 7,
        "ED_Hospitalization": admitted,
        "ICU_Mortality": icu_died,
    }
    for name, values in labels.items():
        assert 0.03 < np.mean(values) < 0.97, name


def test_some_patients_return_to_the_ed_within_three_days(timelines: list[Timeline]) -> None:
    returns = [
        b.intime - a.outtime < 3 * DAY for tl in timelines for a, b in zip(tl.ed_visits, tl.ed_visits[1:], strict=False)
    ]
    assert 0.02 < np.mean(returns) < 0.3


def test_icd9_and_icd10_admissions_coexist(timelines: list[Timeline]) -> None:
    share10 = np.mean([a.icd_version == 10 for a in _admissions(timelines)])
    assert 0.3 < share10 < 0.8
