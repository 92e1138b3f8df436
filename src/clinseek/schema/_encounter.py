"""The generic encounter-id rule: an admission or stay id is NULL until that encounter exists.

Rows are often charted against an encounter before it starts (ED labs and orders carry the
``hadm_id`` of the admission that follows; ICU charting can precede the stay's ``intime``), so
an id alone would reveal a future admission or ICU stay. Every patient table's ``hadm_id``
(except ``hosp.admissions``, which owns it) is masked until that admission's ``admittime`` is
visible; ``stay_id`` in ``icu`` tables until ``icu.icustays.intime``, in ``ed`` tables until
``ed.edstays.intime`` (except the owning stay tables).
"""

from __future__ import annotations

from dataclasses import replace

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
    """The generic masks for ``table``'s encounter-id columns (none for the owning table itself)."""
    if not table.is_patient_table or table.visibility != "event":
        return ()
    declared = {c for m in table.masks for c in m.columns}
    out = []
    for column in table.column_names:
        found = encounter_mask(table.module, column)
        if found is None or found[0] == table.qualified or column in declared:
            continue
        out.append(found[1])
    return tuple(out)


def with_encounter_masks(table: Table) -> Table:
    """``table`` with :func:`encounter_masks` appended to its declared masks."""
    extra = encounter_masks(table)
    return replace(table, masks=table.masks + extra) if extra else table
