"""attack25: episodes of the ingested demo checked against an oracle written with the rules of the shared POLICY.md
(a row is visible once its event time is before the cutoff) over MIMIC's own columns, independent of the registry's
event times, masks and stored instants.

Patients and cutoffs no other test uses: inside an ICU stay, between an order and its first administration, in
the ED hours before the admission (with a specimen drawn and not yet resulted, blood cultures pending), just
before a discharge, and a same-day surgical patient before the admittime, under both policies. For every patient
table the episode holds no more rows than the oracle (the registry is stricter in places: emar from its storetime,
orders and unit stays not before the admission), no more resulted lab or microbiology rows, no date or time after
the cutoff, and no outcome column filled while the end it waits for is hidden.

Measured in session 25 with the same oracle read from the raw CSVs on about 400 random episodes of 24 other
patients (both policies, cutoffs at exact admission, ICU and ED instants and lab storetimes as well): nothing shown
beyond the oracle. Here the rows come from the store (the CSVs as ingested) so that the test stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table

CASES = [
    (10002428, datetime(2156, 4, 20, 3, 0)),  # inside ICU stay 38875437
    (10002428, datetime(2160, 4, 14, 23, 0)),  # orders of 19:23 first given at 02:14 and 08:00
    (10018081, datetime(2134, 8, 17, 20, 0)),  # in the ED (16:24), admitted 02:02; specimen 40112648 partly pending
    (10018081, datetime(2134, 8, 23, 19, 25)),  # 10 minutes before the discharge
    (10037928, datetime(2182, 4, 28, 23, 0)),  # in the ED (17:25), admitted 04:29
    (10013049, datetime(2114, 6, 20, 5, 0)),  # same-day surgery: arrived 02:41, admittime 10:15
    (10038999, datetime(2131, 5, 24, 12, 0)),  # an order of 09:54 first given at 16:43
]
_SUBJECTS = sorted({s for s, _ in CASES})

_ORACLE = {  # table -> SQL of (subject_id, e): the row's event time by POLICY.md
    "hosp.admissions": "SELECT subject_id, admittime e FROM admissions",
    "hosp.transfers": "SELECT subject_id, intime e FROM transfers",
    "hosp.services": "SELECT subject_id, transfertime e FROM services",
    "hosp.diagnoses_icd": "SELECT d.subject_id, a.dischtime e FROM diagnoses_icd d JOIN admissions a USING (hadm_id)",
    "hosp.drgcodes": "SELECT d.subject_id, a.dischtime e FROM drgcodes d JOIN admissions a USING (hadm_id)",
    "hosp.procedures_icd": "SELECT d.subject_id, greatest(a.dischtime, d.chartdate + INTERVAL 1 DAY) e "
    "FROM procedures_icd d JOIN admissions a USING (hadm_id)",
    "hosp.hcpcsevents": "SELECT d.subject_id, greatest(a.dischtime, d.chartdate + INTERVAL 1 DAY) e "
    "FROM hcpcsevents d JOIN admissions a USING (hadm_id)",
    "hosp.labevents": "SELECT subject_id, charttime e FROM labevents",
    "hosp.microbiologyevents": "SELECT subject_id, coalesce(charttime, chartdate + INTERVAL 1 DAY) e "
    "FROM microbiologyevents",
    "hosp.prescriptions": "SELECT subject_id, starttime e FROM prescriptions",
    "hosp.pharmacy": "SELECT subject_id, starttime e FROM pharmacy",
    "hosp.emar": "SELECT subject_id, charttime e FROM emar",
    "hosp.emar_detail": "SELECT d.subject_id, m.charttime e FROM emar_detail d JOIN emar m USING (emar_id)",
    "hosp.poe": "SELECT subject_id, ordertime e FROM poe",
    "hosp.poe_detail": "SELECT d.subject_id, p.ordertime e FROM poe_detail d JOIN poe p USING (poe_id)",
    "hosp.omr": "SELECT subject_id, chartdate + INTERVAL 1 DAY e FROM omr",
    "icu.icustays": "SELECT subject_id, intime e FROM icustays",
    "icu.inputevents": "SELECT subject_id, starttime e FROM inputevents",
    "icu.ingredientevents": "SELECT subject_id, starttime e FROM ingredientevents",
    "icu.outputevents": "SELECT subject_id, charttime e FROM outputevents",
    "icu.datetimeevents": "SELECT subject_id, charttime e FROM datetimeevents",
    "icu.procedureevents": "SELECT subject_id, starttime e FROM procedureevents",
    "ed.edstays": "SELECT subject_id, intime e FROM edstays",
    "ed.triage": "SELECT t.subject_id, s.intime e FROM triage t JOIN edstays s USING (stay_id)",
    "ed.vitalsign": "SELECT subject_id, charttime e FROM vitalsign",
    "ed.diagnosis": "SELECT t.subject_id, s.outtime e FROM diagnosis t JOIN edstays s USING (stay_id)",
    "ed.medrecon": "SELECT subject_id, charttime e FROM medrecon",
    "ed.pyxis": "SELECT subject_id, charttime e FROM pyxis",
}
_RESULTED = {  # table -> (oracle SQL of its resulted rows, the episode's count of them)
    "hosp.labevents": (
        "SELECT subject_id, greatest(charttime, coalesce(storetime, charttime)) e FROM labevents",
        "SELECT count(*) FROM hosp.labevents WHERE labevent_id IS NOT NULL",
    ),
    "hosp.microbiologyevents": (
        "SELECT subject_id, CASE WHEN coalesce(storetime, storedate) IS NOT NULL THEN greatest(coalesce(charttime, "
        "chartdate + INTERVAL 1 DAY), coalesce(storetime, storedate + INTERVAL 1 DAY)) END e FROM microbiologyevents",
        "SELECT count(*) FROM hosp.microbiologyevents WHERE microevent_id IS NOT NULL",
    ),
}
_OUTCOMES = {  # table -> rows with an outcome shown while the end it waits for is hidden (NULL)
    "hosp.admissions": "dischtime IS NULL AND (discharge_location IS NOT NULL OR hospital_expire_flag IS NOT NULL "
    "OR deathtime IS NOT NULL)",
    "icu.icustays": "outtime IS NULL AND (los IS NOT NULL OR last_careunit IS NOT NULL)",
    "ed.edstays": "outtime IS NULL AND disposition IS NOT NULL",
    "icu.inputevents": "endtime IS NULL AND (amount IS NOT NULL OR totalamount IS NOT NULL "
    "OR statusdescription IS NOT NULL)",
    "icu.procedureevents": "endtime IS NULL AND (value IS NOT NULL OR statusdescription IS NOT NULL)",
    "hosp.pharmacy": "stoptime IS NULL AND status IS NOT NULL",
}


@pytest.fixture(scope="module")
def oracle(demo_store: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The cases' patients' rows of every patient table, as ingested from the CSVs (MIMIC's own columns only)."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{demo_store}' AS store (READ_ONLY)")
    subjects = ", ".join(map(str, _SUBJECTS))
    for qualified in _ORACLE:
        columns = ", ".join(f'"{c.name}"' for c in get_table(qualified).columns)
        name = qualified.split(".")[1]
        con.execute(f"CREATE TABLE {name} AS SELECT {columns} FROM store.{qualified} WHERE subject_id IN ({subjects})")
    con.execute("DETACH store")
    yield con
    con.close()


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack25_episodes_show_no_more_than_the_policy_oracle(
    oracle: duckdb.DuckDBPyConnection, demo_reader: StoreReader, policy: str
) -> None:
    visible = "<" if policy == TEXT_POLICY else "<="
    later = ">=" if policy == TEXT_POLICY else ">"
    for subject, cutoff in CASES:
        with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy)) as ep:
            cols = ep.execute(
                "SELECT table_schema || '.' || table_name, column_name FROM information_schema.columns "
                "WHERE data_type IN ('TIMESTAMP', 'DATE') AND table_schema IN ('hosp', 'icu', 'ed')",
                tables=None,
                max_rows=1000,
            ).rows
            counts = [f"(SELECT count(*) FROM {t})" for t in _ORACLE]
            counts += [f"({sql})" for _, sql in _RESULTED.values()]
            counts += [f"(SELECT count(*) FROM {t} WHERE {cond})" for t, cond in _OUTCOMES.items()]
            counts += [f"(SELECT count(*) FROM {t} WHERE \"{c}\" {later} $1)" for t, c in cols]
            got = ep.execute("SELECT " + ", ".join(counts), [cutoff], tables=None).rows[0]
        sqls = [*_ORACLE.values(), *(sql for sql, _ in _RESULTED.values())]
        want = oracle.execute(
            "SELECT " + ", ".join(f"(SELECT count(*) FROM ({q}) WHERE subject_id = $1 AND e {visible} $2)" for q in sqls),
            [subject, cutoff],
        ).fetchone()
        names = [*_ORACLE, *(f"{t} resulted" for t in _RESULTED)]
        more = {n: (g, w) for n, g, w in zip(names, got, want, strict=False) if g > w}
        assert more == {}, (subject, cutoff, policy)
        rest = got[len(names):]
        shown = [*(f"{t} outcome" for t in _OUTCOMES), *(f"{t}.{c} later" for t, c in cols)]
        assert {n: g for n, g in zip(shown, rest, strict=True) if g} == {}, (subject, cutoff, policy)
