"""The generic encounter-id rule: an admission or stay id is NULL until that encounter exists.

Rows are often charted against an encounter before it starts (ED labs and orders carry the
``hadm_id`` of the admission that follows; ICU charting can precede the stay's ``intime``), so
an id alone would reveal a future admission or ICU stay. Every patient table's ``hadm_id``
(except ``hosp.admissions``, which owns it) is masked until that admission's ``admittime`` is
visible; ``stay_id`` in ``icu`` tables until ``icu.icustays.intime``, in ``ed`` tables until
``ed.edstays.intime`` (except the owning stay tables).
"""

from __future__ import annotations

from ._model import Mask, Module, Table

_ANY = "*"
ENCOUNTER_IDS: dict[tuple[str, str], tuple[str, str]] = {
    (_ANY, "hadm_id"): ("hosp.admissions", "admittime"),
    ("icu", "stay_id"): ("icu.icustays", "intime"),
    ("ed", "stay_id"): ("ed.edstays", "intime"),
}
"""``(module or "*", id column) -> (owning table, start column)``."""


def _owner(module: Module, column: str) -> tuple[str, str] | None:
    return ENCOUNTER_IDS.get((module, column)) or ENCOUNTER_IDS.get((_ANY, column))


def encounter_mask(module: Module, column: str) -> tuple[str, Mask] | None:
    """``(owning table, mask)`` for an encounter-id ``column`` of a ``module`` table; ``None`` if it is not one."""
    owner = _owner(module, column)
    if owner is None:
        return None
    owner_table, start = owner
    return owner_table, Mask(
        (column,),
        f"(SELECT min(e.{start}) FROM {owner_table} e WHERE e.{column} = t.{column})",
        f"names an encounter ({owner_table}) that exists only from its {start}",
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
