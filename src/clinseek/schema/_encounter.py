"""The generic encounter-id rule: an admission or stay id is NULL until that encounter exists.

Rows are often charted against an encounter before it starts (ED labs and orders carry the
``hadm_id`` of the admission that follows; ICU charting can precede the stay's ``intime``), so
an id alone would reveal a future admission or ICU stay. Every patient table's ``hadm_id``
(except ``hosp.admissions``, which owns it) is masked until that admission's ``admittime`` is
visible; ``stay_id`` in ``icu`` tables until the ICU stay starts (:data:`ICU_STAY_START`: its
``intime``, and not before its admission's ``admittime``), in ``ed`` tables until
``ed.edstays.intime`` (except the owning stay tables).

One instant per encounter (:attr:`Encounter.start`): the owning table's event time is that instant, so its rows,
its id in every other table (:func:`encounter_mask`) and the visible ids (the policy's ``encounter_sqls``, the
event index's encounter ids: ``clinseek.store.encounter_column``) all follow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._hosp import admitted
from ._model import Mask, Module, Table

_ANY = "*"
_ROW = re.compile(r"\bt\.")


@dataclass(frozen=True, slots=True)
class Encounter:
    """The table that owns an encounter id and when each of its encounters starts for the policy.

    Attributes:
        table: the owning table (one row per encounter).
        column: its start column (a ``TIMESTAMP``, the table's sort).
        known: SQL over the owner's row ``t`` (sub-selects over other tables use other aliases) giving the
            instant the encounter starts for the policy, when it is not the column itself (``""``). The owning
            table's event time must be this SQL (:meth:`start` over ``t``).
    """

    table: str
    column: str
    known: str = ""

    def start(self, alias: str = "t") -> str:
        """SQL of the encounter's start over the owner's row ``alias``."""
        return _ROW.sub(f"{alias}.", self.known) if self.known else f"{alias}.{self.column}"


ICU_STAY_START = f"CASE WHEN t.intime IS NOT NULL THEN greatest(t.intime, {admitted('t', 't.intime')}) END"
"""When an ICU stay starts for the policy: its intime, and not before its admission's admittime. MIMIC-IV keeps ICU
stays only for hospitalizations: a same-day surgical patient reaches the ICU from the OR before the admission's
admittime (10004457 and 10013049 in the demo, 36 and 42 min ahead); shown from its intime, its hadm_id NULL, with no
admission in the episode, the stay told that an admission was coming (attack25, as attack21 for orders)."""

ENCOUNTER_IDS: dict[tuple[str, str], Encounter] = {
    (_ANY, "hadm_id"): Encounter("hosp.admissions", "admittime"),
    ("icu", "stay_id"): Encounter("icu.icustays", "intime", ICU_STAY_START),
    ("ed", "stay_id"): Encounter("ed.edstays", "intime"),
}
"""``(module or "*", id column) -> its encounter`` (owning table, start)."""


def _owner(module: Module, column: str) -> Encounter | None:
    return ENCOUNTER_IDS.get((module, column)) or ENCOUNTER_IDS.get((_ANY, column))


def encounter_mask(module: Module, column: str) -> tuple[str, Mask] | None:
    """``(owning table, mask)`` for an encounter-id ``column`` of a ``module`` table; ``None`` if it is not one."""
    owner = _owner(module, column)
    if owner is None:
        return None
    what = owner.column if not owner.known else f"start ({owner.column}, and not before its admission's admittime)"
    return owner.table, Mask(
        (column,),
        f"(SELECT min({owner.start('e')}) FROM {owner.table} e WHERE e.{column} = t.{column})",
        f"names an encounter ({owner.table}) that exists only from its {what}",
    )


def encounter_masks(table: Table) -> tuple[Mask, ...]:
    """The generic masks of ``table``'s ``encounter``-class columns (none for an owning table's own id)."""
    out = []
    for col in table.columns:
        found = encounter_mask(table.module, col.name) if col.known == "encounter" else None
        if found is not None and found[0] != table.qualified:
            out.append(found[1])
    return tuple(out)


def is_encounter_id(table: Table, column: str) -> bool:
    """Whether ``column`` of ``table`` is an id of an encounter ``table`` does not own (its class must be ``encounter``)."""
    found = encounter_mask(table.module, column)
    return (
        found is not None
        and found[0] != table.qualified
        and table.is_patient_table
        and table.visibility == "event"
    )
