"""From column classes to masks: the one place the policy's masks come from.

Every column carries a :data:`~clinseek.schema.KnownAt` class; :func:`class_masks` turns a table's
classes into the :class:`~clinseek.schema.Mask` values the policy applies (``stored`` columns
until :attr:`Table.stored_at`, ``end`` columns until :attr:`Table.ends_at`, each ``reference``
column until the row it names exists, ``encounter`` ids by the generic encounter rule, ``final``
columns always). ``event``, ``static`` and ``own_time`` columns need no mask: the generic rule
(a date/time after the cutoff is NULL) covers the last. ``sequence`` columns are renumbered by the policy
(:attr:`Table.renumbered`), not masked.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import RegistryError
from ._encounter import encounter_mask
from ._model import KnownAt, Mask, Table

CLASS_REASONS: dict[KnownAt, str] = {
    "event": "charted with the row: known once the row is visible",
    "stored": "known when the row is stored or resulted, which can be after the row's event time",
    "end": "known at the end of the row's interval (end times, durations, final amounts and statuses, outcomes)",
    "own_time": "a date/time known once it has passed (a DATE at the end of its day)",
    "static": "does not change over time",
    "encounter": "names an encounter that exists only from its start",
    "reference": "names another row that exists only from its own time",
    "sequence": "a per-patient counter (or an id built from one) whose gaps would count hidden rows: renumbered "
    "1..n in each episode by event time among the visible rows it numbers, NULL where the row it names is not visible",
    "final": "the row's final state with no known instant, or a label source: never shown",
}
"""The general reason of each class (a column's own ``why`` says more where it matters)."""


def columns_of(table: Table, known: KnownAt) -> tuple[str, ...]:
    """The names of ``table``'s columns of class ``known``, in release order."""
    return tuple(c.name for c in table.columns if c.known == known)


def class_masks(table: Table) -> tuple[Mask, ...]:
    """The masks of ``table``, derived from its column classes alone.

    Dictionaries and label sources have none (they are visible whole or not at all). A class whose
    instant the table does not declare (``stored`` without ``stored_at``...) is masked always:
    :func:`clinseek.schema.check_registry` reports it, and until then nothing leaks.
    """
    if table.visibility in ("dictionary", "never"):
        return ()
    out: list[Mask] = []
    pending = table.pending
    stored = tuple(c for c in columns_of(table, "stored") if pending is None or c != pending.renumber)
    if stored:
        out.append(
            Mask(
                stored,
                table.stored_at,
                CLASS_REASONS["stored"],
                collapse_on=pending.collapse_on if pending else (),
                renumber=pending.renumber if pending else None,
            )
        )
    if columns_of(table, "end"):
        out.append(Mask(columns_of(table, "end"), table.ends_at, CLASS_REASONS["end"]))
    refs = dict(table.references)
    out += [Mask((c,), refs.get(c), CLASS_REASONS["reference"]) for c in columns_of(table, "reference")]
    if columns_of(table, "final"):
        out.append(Mask(columns_of(table, "final"), None, CLASS_REASONS["final"]))
    for column in columns_of(table, "encounter"):
        found = encounter_mask(table.module, column)
        out.append(found[1] if found else Mask((column,), None, CLASS_REASONS["encounter"]))
    return tuple(out)


def with_class_masks(table: Table) -> Table:
    """``table`` with :func:`class_masks` as its masks.

    Raises:
        RegistryError: the table declares masks of its own (declare column classes instead).
    """
    if table.masks:
        raise RegistryError(f"{table.qualified}: masks derive from column classes; declare the classes instead")
    return replace(table, masks=class_masks(table))
