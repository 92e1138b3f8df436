"""attack16: a consult order's 'Consult Status' / 'Consult Status Time' rows said, from the order's time, that the
consult would be answered (the MIMIC-IV demo).

``hosp.poe_detail`` took its order's ``ordertime``, and attack14 masked the two fields' values until the
'Consult Status Time'; but only answered consults have these rows (15 of the demo's 600 consult orders, every one
'Accepted'), so their presence, values NULL, told the outcome. They now become visible at the 'Consult Status
Time' (never when it is not written as a time), as their values did.

Case: 10015860, consult order 10015860-1127 placed 2192-05-13 12:51:44 and accepted at 18:01:03. At 15:00 the
episode showed the order's detail rows ('Consult Status', None), ('Consult Status Time', None),
('Level of Urgency', 'Routine (within 24 hours)'); the other visible consult orders have none.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY

_SQL = (
    "SELECT d.field_name, d.field_value FROM poe_detail d JOIN poe p ON p.poe_id = d.poe_id "
    "WHERE p.ordertime = TIMESTAMP '2192-05-13 12:51:44' AND p.order_type = 'Consults' ORDER BY 1"
)


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_consult_status_rows_appear_when_answered(demo_reader: StoreReader, policy: str) -> None:
    shown = {}
    for cutoff in (datetime(2192, 5, 13, 15, 0), datetime(2192, 5, 13, 18, 2)):
        with build_episode(demo_reader, EpisodeKey(10015860, cutoff, policy=policy)) as ep:
            shown[cutoff] = ep.execute(_SQL).rows
    assert list(shown.values()) == [
        [("Level of Urgency", "Routine (within 24 hours)")],
        [("Consult Status", "Accepted"), ("Consult Status Time", "2192-05-13 18:01:03"),
         ("Level of Urgency", "Routine (within 24 hours)")],
    ]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack16_no_consult_status_row_before_its_time(demo_store: Path, policy: str) -> None:
    """Every demo consult with a status, one minute after the order and one minute before the status time: no
    visible 'Consult Status*' row before its status time (an oracle over the store's rows)."""
    con = duckdb.connect(str(demo_store), read_only=True)
    try:
        cases = con.execute(
            "SELECT p.subject_id, p.ordertime, CAST(d.field_value AS TIMESTAMP) FROM hosp.poe p JOIN hosp.poe_detail d "
            "ON d.poe_id = p.poe_id WHERE d.field_name = 'Consult Status Time' ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    assert len(cases) == 15
    seen = []
    with open_store_reader(demo_store) as reader:  # one reader for every episode, as a run builds them
        for subject, ordered, answered in cases:
            cutoff = (ordered + (answered - ordered) / 2).replace(microsecond=0)
            with build_episode(reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
                n = ep.execute(
                    "SELECT count(*) FROM poe_detail d JOIN poe p ON p.poe_id = d.poe_id WHERE d.field_name LIKE "
                    f"'Consult Status%' AND p.ordertime = TIMESTAMP '{ordered}'"
                ).rows[0][0]
            seen.append(n)
    assert seen == [0] * 15
