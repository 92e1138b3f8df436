"""The registry: every table by qualified name, and lookups over it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import RegistryError
from ._classes import with_class_masks
from ._cxr import CXR
from ._ed import ED
from ._encounter import ENCOUNTER_IDS, is_encounter_id
from ._hosp import HOSP
from ._icu import ICU
from ._model import MODULES, Module, Table
from ._note import NOTE

_ALL: tuple[Table, ...] = tuple(with_class_masks(t) for t in HOSP + ICU + ED + NOTE + CXR)
_BY_NAME: dict[str, Table] = {}
for _t in _ALL:
    if _t.qualified in _BY_NAME:  # pragma: no cover - guarded by tests
        raise RegistryError(f"table {_t.qualified} registered twice")
    _BY_NAME[_t.qualified] = _t


def tables(modules: Iterable[Module] | None = None) -> tuple[Table, ...]:
    """Every registered table, in module order (hosp, icu, ed, note, cxr) then release order."""
    if modules is None:
        return _ALL
    wanted = set(modules)
    return tuple(t for t in _ALL if t.module in wanted)


def get_table(name: str) -> Table:
    """The table called ``name``: qualified (``hosp.labevents``) or, when unambiguous, bare (``labevents``).

    Raises:
        RegistryError: the name is unknown or ambiguous.
    """
    if name in _BY_NAME:
        return _BY_NAME[name]
    matches = [t for t in _ALL if t.name == name]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise RegistryError(f"unknown table {name!r}; known: {', '.join(sorted(_BY_NAME))}")
    raise RegistryError(f"table name {name!r} is ambiguous: {', '.join(t.qualified for t in matches)}")


def modules() -> tuple[Module, ...]:
    """The MIMIC modules, in registry order."""
    return MODULES


_REF = re.compile(r"\bt\.([A-Za-z_][A-Za-z0-9_]*)")


def check_registry() -> list[str]:
    """Consistency problems in the registry (an empty list when it is sound).

    Checks that keys, sort columns, masked columns, dictionary joins, parents and the ``t.``
    column references of every time expression name columns and tables that exist, and that
    every column has a "known at" class its table can apply (:func:`class_problems`).
    """
    problems: list[str] = []
    for t in _ALL:
        problems += class_problems(t)
        names = set(t.column_names)
        if len(names) != len(t.columns):
            problems.append(f"{t.qualified}: duplicate column names")
        for col in (*t.key, *t.sort_columns):
            if col not in names:
                problems.append(f"{t.qualified}: key/sort column {col!r} does not exist")
        for mask in t.masks:
            problems += [
                f"{t.qualified}: masked column {c!r} does not exist" for c in mask.columns if c not in names
            ]
            if mask.known_at:
                problems += _check_refs(t, mask.known_at, names)
        for dj in t.dict_joins:
            problems += [
                f"{t.qualified}: dict join column {c!r} missing" for c in dj.columns if c not in names
            ]
            target = _BY_NAME.get(dj.table)
            if target is None:
                problems.append(f"{t.qualified}: dict join to unknown table {dj.table}")
            else:
                have = set(target.column_names)
                problems += [
                    f"{t.qualified}: {dj.table} has no column {c!r}"
                    for c in (*dj.keys, *dj.labels)
                    if c not in have
                ]
        problems += _check_time(t, names)
    return problems


def _check_time(t: Table, names: set[str]) -> list[str]:
    if t.visibility != "event":
        return [] if t.event_time is None else [f"{t.qualified}: {t.visibility} table has an event time"]
    if t.event_time is None:
        return [f"{t.qualified}: event table without an event time"]
    out = _check_refs(t, t.event_time.expr, names)
    parent = t.event_time.parent
    if parent is not None:
        ptable = _BY_NAME.get(parent.table)
        if ptable is None:
            return [*out, f"{t.qualified}: unknown parent {parent.table}"]
        out += [
            f"{t.qualified}: parent key {c!r} missing"
            for c in parent.on
            if c not in names or c not in ptable.column_names
        ]
        out += _check_refs(ptable, parent.time, set(ptable.column_names))
    elif "parent_time" in t.event_time.expr:
        out.append(f"{t.qualified}: uses parent_time without a parent")
    return out


def _check_refs(t: Table, expr: str, names: set[str]) -> list[str]:
    # references inside sub-selects over other tables use other aliases; only `t.` is checked
    return [
        f"{t.qualified}: expression refers to unknown column t.{c}"
        for c in _REF.findall(expr)
        if c not in names
    ]


_OWNED = {encounter.table for encounter in ENCOUNTER_IDS.values()}


def _renumbered_problems(t: Table) -> list[str]:
    """A ``sequence`` column is renumbered (:attr:`Table.renumbered`) and a renumbered column is ``sequence``,
    read through a column of the table, from an owner with that id and counter, in the owner's type."""
    out: list[str] = []
    declared = {r.column for r in t.renumbered}
    names = set(t.column_names)
    for col in t.columns:
        if (col.known == "sequence") != (col.name in declared):
            out.append(f"{t.qualified}.{col.name}: class 'sequence' is for, and only for, the renumbered columns")
    for r in t.renumbered:
        owner = _BY_NAME.get(r.sequence.owner)
        owned = {c.name: c.type for c in owner.columns} if owner else {}
        source = r.sequence.id if r.part == "id" else r.sequence.counter
        if owner is not None and (owner.target_key or owner.module == "cxr" or owner.event_time is None
                                  or owner.event_time.parent is not None):
            out.append(f"{t.qualified}.{r.column}: {r.sequence.owner} must be timed by its own rows alone (no parent, "
                       "target encounter or linked studies): its numbers are then the same at every cutoff")
        if r.column not in names or r.via not in names or source not in owned or r.sequence.id not in owned:
            out.append(f"{t.qualified}.{r.column}: renumbered through {r.via!r} from {r.sequence.owner}.{source}, "
                       "which do not both exist")
        elif t.column(r.column).type != owned[source] or t.column(r.via).type != owned[r.sequence.id]:
            out.append(f"{t.qualified}.{r.column}: not of the type of {r.sequence.owner}.{source}")
        if owner is not None and not set(r.sequence.partition) <= set(owned):
            out.append(f"{t.qualified}.{r.column}: {r.sequence.owner} has no partition column of {r.sequence.partition}")
        if r.where:
            out += _check_refs(t, r.where, names)
        if {o.where for o in t.renumbered if (o.sequence.owner, o.via) == (r.sequence.owner, r.via)} != {r.where}:
            out.append(f"{t.qualified}.{r.column}: the columns read through {r.via!r} name {r.sequence.owner} rows "
                       "under one condition (the store keeps one number per row and owner)")
    return out


def class_problems(t: Table) -> list[str]:
    """Problems with ``t``'s column classes: a column without one, or a class the table cannot apply.

    Every column needs a class; ``stored`` needs the table's ``stored_at``, ``end`` its ``ends_at``,
    ``reference`` an instant in ``references``; ``own_time`` is for dates and times; an id of an
    encounter the table does not own is ``encounter`` (and only such ids are); a dictionary holds
    only ``static`` columns and a label source only ``final`` ones; the static table
    (``hosp.patients``) has no row instants (``static`` / ``own_time`` only).
    """
    out: list[str] = []
    refs = dict(t.references)
    allowed = {"dictionary": {"static"}, "never": {"final"}, "static": {"static", "own_time"}}.get(t.visibility)
    for col in t.columns:
        where = f"{t.qualified}.{col.name}"
        if col.known is None:
            out.append(f"{where}: no 'known at' class")
            continue
        if allowed is not None and col.known not in allowed:
            out.append(f"{where}: class {col.known!r} in a {t.visibility} table (allowed: {', '.join(sorted(allowed))})")
        needs = {"stored": t.stored_at, "end": t.ends_at, "reference": refs.get(col.name)}
        if col.known in needs and not needs[col.known]:
            out.append(f"{where}: class {col.known!r} but the table gives no instant for it")
        if col.known == "own_time" and not col.is_time:
            out.append(f"{where}: class 'own_time' needs a date or time column")
        if (col.known == "encounter") != is_encounter_id(t, col.name):
            out.append(f"{where}: class 'encounter' is for, and only for, ids of encounters the table does not own")
    out += [f"{t.qualified}: reference instant for non-reference column {c!r}" for c in refs
            if c not in t.column_names or t.column(c).known != "reference"]
    out += _renumbered_problems(t)
    if t.pending and t.pending.renumber and t.column(t.pending.renumber).known != "stored":
        out.append(f"{t.qualified}: the renumbered id {t.pending.renumber!r} must be 'stored'")
    for expr in (t.stored_at, t.ends_at, *refs.values()):
        if expr:
            out += _check_refs(t, expr, set(t.column_names))
    return out
