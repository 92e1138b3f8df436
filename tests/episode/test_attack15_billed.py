"""attack15: an admission's billing codes (hosp.procedures_icd, hosp.hcpcsevents) are known together at the later
of its discharge and the end of the day of its last coded event (session 15). With no discharge time (an
admission still open in a live copy, or a crafted store), ``greatest`` skips the NULL: the codes became visible
the day after the last coded procedure, while the patient is still in hospital (admission 21476294 of 10035631:
3 codes dated up to 2115-11-10, shown at 2115-11-12 although discharge is 2115-12-08). Before session 15 (and for
diagnoses_icd / drgcodes) a NULL discharge time meant never known. Read through the policy's own statement (the
stored row instants are ingest-time values, not what a NULL discharge gives the registry's SQL).
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.policy import MM_POLICY, TEXT_POLICY, EpisodeKey, get_policy
from clinseek.schema import get_table, tables
from clinseek.store import connect_store

_SUBJECT, _HADM = 10035631, 21476294
_CUTOFF = datetime(2115, 11, 12)  # last coded day 2115-11-10; discharge 2115-12-08 17:31


@pytest.fixture(scope="module")
def open_admission(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("attack15") / "open_admission.duckdb"
    shutil.copyfile(demo_store, out)
    con = duckdb.connect(str(out))
    try:
        assert con.execute("SELECT count(*) FROM hosp.procedures_icd WHERE hadm_id = ?", [_HADM]).fetchone() == (3,)
        con.execute("UPDATE hosp.admissions SET dischtime = NULL WHERE hadm_id = ?", [_HADM])
    finally:
        con.close()
    return out


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize("name", ["hosp.procedures_icd", "hosp.diagnoses_icd", "hosp.hcpcsevents"])
def test_attack15_codes_of_an_admission_without_discharge_stay_hidden(
    open_admission: Path, name: str, policy: str
) -> None:
    con = connect_store(open_admission)
    try:
        present = {t.qualified for t in tables()} & {
            f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()
        }
        sql, params = get_policy(policy).visible_select(
            get_table(name), EpisodeKey(_SUBJECT, _CUTOFF, policy=policy), present=present
        )
        shown = con.execute(f"SELECT count(*) FROM ({sql}) WHERE hadm_id = {_HADM}", params).fetchone()[0]
    finally:
        con.close()
    assert shown == 0  # procedures_icd: 3 (visible since 2115-11-11 00:00, discharge time unknown)
