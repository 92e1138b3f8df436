"""Which tables an episode shows, how a name resolves, and the read view of each table.

A table's *view* is its visible rows with dictionary labels joined in (``hosp.d_labitems``
labels on ``labevents.itemid``, ICD titles on ``diagnoses_icd``, ...) and its event time from
the registry (the same instant the policy used to decide visibility, including times inherited
from a parent row), so the time-based tools never guess a time column.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._suggest import did_you_mean
from ..errors import RegistryError, ToolError
from ..schema import Table, get_table
from ._context import ToolContext
from ._render import echo

CANDIDATE_SCHEMA = "candidates"


@dataclass(frozen=True, slots=True)
class TableRef:
    """A table of the episode.

    Attributes:
        qualified: ``schema.table`` in the episode (``hosp.labevents``, ``candidates.x_candidates``).
        table: the registry entry, or ``None`` for a candidate table.
    """

    qualified: str
    table: Table | None

    @property
    def is_candidate(self) -> bool:
        """True for ``candidates.*`` tables."""
        return self.table is None


def ehr_tables(ctx: ToolContext) -> dict[str, int]:
    """Visible EHR tables of the episode (qualified name -> rows), dictionaries included."""
    counts = ctx.episode.table_counts()
    return {name: n for name, n in counts.items() if not name.startswith(CANDIDATE_SCHEMA + ".")}


def candidate_tables(ctx: ToolContext) -> tuple[str, ...]:
    """Qualified names of the episode's candidate tables (``candidates.<task>_candidates``)."""
    names = ctx.episode.candidate_tables()
    return tuple(n if "." in n else f"{CANDIDATE_SCHEMA}.{n}" for n in names)


def resolve(ctx: ToolContext, db: str | None, name: str) -> tuple[str, str] | None:
    """(schema, table) that ``db.name`` or bare ``name`` means in this episode, or None."""
    return resolve_in(frozenset(ehr_tables(ctx)), candidate_tables(ctx), db, name)


def resolve_in(
    tables: frozenset[str], candidates: tuple[str, ...], db: str | None, name: str
) -> tuple[str, str] | None:
    """(schema, table) that ``db.name`` or bare ``name`` means among an episode's EHR ``tables`` and
    ``candidates`` (qualified names), or None."""
    name, db = name.strip().strip('"').lower(), (db or "").strip().strip('"').lower() or None
    if db is not None and db.startswith("mimiciv_"):  # mimic-code's / BigQuery's schemas: mimiciv_hosp = hosp
        db = db.removeprefix("mimiciv_")
    if db in (None, CANDIDATE_SCHEMA) and f"{CANDIDATE_SCHEMA}.{name}" in candidates:
        return CANDIDATE_SCHEMA, name
    try:
        table = get_table(f"{db}.{name}" if db else name)
    except RegistryError:
        return None
    if table.qualified not in tables:
        return None
    return table.module, table.name


def available(ctx: ToolContext) -> str:
    """The episode's tables as a comma list, for error messages."""
    return available_in(frozenset(ehr_tables(ctx)), candidate_tables(ctx))


def available_in(tables: frozenset[str], candidates: tuple[str, ...]) -> str:
    """An episode's EHR ``tables`` and ``candidates`` as a comma list, for error messages."""
    return ", ".join([*sorted(tables), *candidates])


def resolve_table(ctx: ToolContext, table_name: str, *, candidates: bool | None = None) -> TableRef:
    """Resolve a tool's ``table_name`` argument (``labevents`` or ``hosp.labevents``).

    Args:
        ctx: the tool context.
        table_name: the name the model gave.
        candidates: True = only candidate tables, False = only EHR tables, None = either.

    Raises:
        ToolError: ``"unknown_table"`` (not in this episode; lists the available tables) or
            ``"wrong_table_kind"`` (an EHR table given to a candidate tool or vice versa).
    """
    db, _, name = table_name.strip().rpartition(".")
    hit = resolve(ctx, db or None, name)
    if hit is None:
        listed = available(ctx)
        hint = did_you_mean(name, [n.rpartition(".")[2] for n in listed.split(", ")])
        raise ToolError("unknown_table", f"no table {echo(table_name)} in this episode{hint}; available: {listed}")
    qualified = ".".join(hit)
    ref = TableRef(qualified, None if hit[0] == CANDIDATE_SCHEMA else get_table(qualified))
    if candidates is True and not ref.is_candidate:
        raise ToolError(
            "wrong_table_kind",
            f"{qualified} is an EHR table; candidate tools search: {', '.join(candidate_tables(ctx)) or 'none'}",
        )
    if candidates is False and ref.is_candidate:
        raise ToolError(
            "wrong_table_kind", f"{qualified} is a candidate table; use the ehr.get_candidates_* tools"
        )
    return ref
