"""The declarative shapes of the registry: tables, columns, time rules, masks, dictionary joins."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

DuckType = Literal["SMALLINT", "INTEGER", "BIGINT", "DOUBLE", "VARCHAR", "TIMESTAMP", "DATE", "BOOLEAN"]

Module = Literal["hosp", "icu", "ed", "note", "cxr"]

MODULES: tuple[Module, ...] = ("hosp", "icu", "ed", "note", "cxr")

KnownAt = Literal["event", "stored", "end", "own_time", "static", "encounter", "reference", "sequence", "final"]
"""When a column's value becomes known: every column of every registry table carries one class.

The policy masks from the class alone (:func:`clinseek.schema.class_masks`); ``docs/policy.md``
lists every column with its class and the reason.

- ``event``: known at the row's event time (charted with the row: true once the row is visible).
- ``stored``: known when the row is stored or resulted (:attr:`Table.stored_at`): a result
  drawn before the cutoff but validated after it, a charted value entered later.
- ``end``: known at the end of the row's interval (:attr:`Table.ends_at`): end times, durations,
  amounts, rates and statuses final only at the end, outcomes of a stay, and "original" or
  planned values that encode the planned or actual duration.
- ``own_time``: a date/time known once it has passed (its own value is the instant; a DATE at
  the end of its day); the generic future-value rule masks it.
- ``static``: does not change over time (the patient's id, sex and anchor age; dictionary entries).
- ``encounter``: an admission / ICU stay / ED stay id, NULL until that encounter has started
  (:data:`clinseek.schema.ENCOUNTER_IDS`).
- ``reference``: names another row (an administration's pharmacy entry), NULL until that row exists
  (:attr:`Table.references` gives the instant).
- ``sequence``: a per-patient counter, or an id or reference built from one, whose gaps would count
  hidden rows: renumbered in each episode (:attr:`Table.renumbered`, :class:`Sequence`).
- ``final``: never shown: the row's final state with no known instant (``poe.order_status``),
  or a label source.
"""

KNOWN_AT: tuple[KnownAt, ...] = (
    "event", "stored", "end", "own_time", "static", "encounter", "reference", "sequence", "final"
)

Visibility = Literal["event", "static", "dictionary", "never"]
"""How a table is exposed in an episode.

- ``event``: rows become visible at their event time (see :class:`Table.event_time`).
- ``static``: one row per patient, always visible (``hosp.patients``); future values masked.
- ``dictionary``: holds no patient data and is visible whole (``d_*``, ``provider``, ``caregiver``).
- ``never``: label sources that are never evidence (``cxr.chexpert``, ``cxr.negbio``, ``cxr.split``).
"""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a MIMIC table.

    Attributes:
        name: the column name exactly as in the MIMIC release (lower case, except MIMIC-CXR's
            DICOM-derived names such as ``StudyDate``).
        type: the DuckDB type the store holds it as.
        description: a short clinical description (empty for self-explanatory columns).
        aliases: other header spellings seen in releases (e.g. ``ORIGINALAMOUNT`` in the
            MIMIC-IV 2.2 ``procedureevents`` file); ingest accepts them, case-insensitively.
        optional: the column is absent from some supported releases; ingest fills NULL.
        known: when the value becomes known (:data:`KnownAt`); ``None`` only in a registry that
            :func:`clinseek.schema.check_registry` reports as incomplete.
        why: one line on why the value has that class (empty: the class's general reason).
    """

    name: str
    type: DuckType
    description: str = ""
    aliases: tuple[str, ...] = ()
    optional: bool = False
    known: KnownAt | None = None
    why: str = ""

    @property
    def is_time(self) -> bool:
        """True for TIMESTAMP and DATE columns (the ones the generic future-value rule applies to)."""
        return self.type in ("TIMESTAMP", "DATE")


@dataclass(frozen=True, slots=True)
class ParentTime:
    """The time a row inherits from a parent table.

    The parent's time per key is ``min(time)`` over the parent rows with that key, so a parent
    with several rows per key (CXR images of one study) still gives one instant.

    Attributes:
        table: qualified parent table name, e.g. ``"hosp.admissions"``.
        on: the key columns, present under the same names in child and parent.
        time: SQL expression over the parent row (alias ``t``) giving its instant (TIMESTAMP).
    """

    table: str
    on: tuple[str, ...]
    time: str

    def times_sql(self, *, where: str = "", by_subject: bool = False, also: tuple[str, ...] = ()) -> str:
        """SQL giving the parent's instant per key: rows ``(<on...>, parent_time[, also...])``.

        ``where`` is appended to ``FROM <table> t`` (the policy narrows it to one patient, ``" WHERE
        t.subject_id = $1"``); ``by_subject`` also groups by ``subject_id`` and returns it first (the
        store's event index, built for every patient at once, joins on it); ``also`` are more aggregates
        over the same groups (``"max(t.x) AS y"``: the policy's mask instants that read the parent by its key).
        """
        keys = ", ".join(f't."{c}"' for c in (("subject_id",) if by_subject else ()) + self.on)
        more = "".join(f", {a}" for a in also)
        return f"SELECT {keys}, min({self.time}) AS parent_time{more} FROM {self.table} t{where} GROUP BY {keys}"


_ROW_ALIAS = re.compile(r"\bt\.")
_PARENT_TIME = re.compile(r"\bparent_time\b")
_READS = re.compile(r"\bFROM\s+([a-z]+\.[a-z_]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class EventTime:
    """When a row of an ``event`` table became known.

    Attributes:
        expr: SQL (DuckDB dialect) over the row alias ``t`` giving a TIMESTAMP; when ``parent``
            is set it may also use ``parent_time``. Date-only columns are written as
            ``t.chartdate + INTERVAL 1 DAY`` (known at the end of that day).
        parent: the parent whose time this row inherits, if any.
        sort: the column(s) the store sorts the table by after ``subject_id``.
        rationale: why this is the event time (shown in docs and tool descriptions).
    """

    expr: str
    parent: ParentTime | None = None
    sort: tuple[str, ...] = ()
    rationale: str = ""

    @property
    def reads(self) -> frozenset[str]:
        """The tables the event time reads (qualified): its parent's, and those a subquery of ``expr`` or of the
        parent's time names (``hosp.admissions`` for an order known from its admission's admittime). A reader that
        evaluates the expression over loaded tables loads these first."""
        found = set(_READS.findall(self.expr))
        if self.parent is not None:
            found |= {self.parent.table, *_READS.findall(self.parent.time)}
        return frozenset(found)

    def row_sql(self, alias: str = "t") -> str:
        """The event time as one scalar SQL expression over the row alias ``alias`` (DuckDB dialect).

        A ``parent_time`` becomes a correlated subquery over the parent (store-wide, by its key), and a row
        whose parent is absent gets NULL (never timed, as the policy's inner join drops it). For readers of the
        whole store (label builders); the policy itself joins the parent once per statement.
        """
        expr = _ROW_ALIAS.sub(f"{alias}.", self.expr)
        if self.parent is None:
            return expr
        parent = self.parent
        on = " AND ".join(f'_p."{c}" = {alias}."{c}"' for c in parent.on)
        sub = f"(SELECT min({_ROW_ALIAS.sub('_p.', parent.time)}) FROM {parent.table} _p WHERE {on})"
        return f"CASE WHEN {sub} IS NOT NULL THEN {_PARENT_TIME.sub(sub, expr)} END"


@dataclass(frozen=True, slots=True)
class Pending:
    """Rows of a pending result whose row count is itself the result (MIMIC microbiology).

    While a row's ``stored`` values are not known, rows keep one per distinct value of
    ``collapse_on`` (the lowest ``renumber``) none of whose rows is known (a group with a known row shows
    only its known rows: a test added to a specimen after its first results would otherwise show as pending
    before it was ordered), and ``renumber`` (a row id whose gaps would reveal the
    collapsed count) is NULL there and renumbered densely ``1..n`` in the other visible rows, by
    :func:`shown_at`.
    """

    collapse_on: tuple[str, ...]
    renumber: str | None = None


def shown_at(event_time: str, known_at: str) -> str:
    """SQL: the instant a pending result's row id (:attr:`Pending.renumber`) is shown, over the row's event time and
    the instant its result is known (both non-NULL). The id is renumbered by (this instant, original id): the rows
    shown with an id at any cutoff are then a prefix of that order, so a row's number is the same at every cutoff it
    is shown at (the store keeps it: :func:`clinseek.store.stored_instants`) and counts only rows shown with it."""
    return f"greatest({event_time}, {known_at})"


@dataclass(frozen=True, slots=True)
class Sequence:
    """A per-patient counter that MIMIC does not assign in event-time order, and the id built from it.

    MIMIC numbers a patient's provider orders (``poe_seq``) in entry order and eMAR rows (``emar_seq``) in
    storage order, densely ``1..n``, and writes the id as ``<subject_id>-<counter>``. An order placed for a
    later time, or an administration charted before the cutoff but stored after it, carries a number above
    rows the episode does not hold yet: the gaps between the visible numbers count them. So in each episode
    the owner's visible rows are renumbered ``1..n`` by (event time, original counter), the id is written
    ``<subject_id>-<new number>`` (whatever the store's text: attack15), and every column carrying either (:class:`Renumbered`) shows the new
    value of the row it names, NULL where that row is not visible. The renumbering depends only on the
    visible rows: a row's rank counts rows with an earlier event time, all visible when it is.

    MIMIC-IV-Note numbers a patient's notes per note type (``note_seq``, by chart time, starting above 1 in the
    release) and writes ``<subject_id>-<note_type>-<note_seq>``: a ``partition`` numbers each (subject, note type)
    apart and writes its values into the id, ``<subject_id>-<note_type>-<new number>``. A report charted before
    the cutoff but signed after it (a note is visible from its signing time) is numbered only once visible.

    Attributes:
        owner: the qualified table whose rows the counter numbers (``"hosp.poe"``).
        id: the owner's id column (``"poe_id"``; text ending in the counter).
        counter: the owner's counter column (``"poe_seq"``).
        partition: owner columns numbered apart within a patient, in the order the id text gives them after the
            subject (``("note_type",)``); empty: one numbering per patient.
    """

    owner: str
    id: str
    counter: str
    partition: tuple[str, ...] = ()

    def prefix_sql(self, alias: str) -> str:
        """SQL over the owner row ``alias``: the text a renumbered id starts with, ``<subject_id>`` then each
        partition value, joined by ``-`` (the id is that, ``-`` and the new number)."""
        parts = [f"CAST({alias}.subject_id AS VARCHAR)", *(f'CAST({alias}."{c}" AS VARCHAR)' for c in self.partition)]
        return " || '-' || ".join(parts)


@dataclass(frozen=True, slots=True)
class Renumbered:
    """A ``sequence`` column: the renumbered ``part`` (``"id"`` or ``"counter"``) of the owner row of
    ``sequence`` whose original id is in column ``via`` of the same row (NULL when that row is not visible).

    ``where`` (SQL over the row ``t``; empty: every row): the column names an owner row only in the rows where
    it holds (a name/value detail table's ``field_value`` where ``field_name`` names a note); in the other rows it
    shows its value as stored (known with the row)."""

    column: str
    sequence: Sequence
    via: str
    part: Literal["id", "counter"]
    where: str = ""


def renumbered_by(
    sequence: Sequence, via: str, *, id: str | None = None, counter: str | None = None, where: str = ""
) -> tuple[Renumbered, ...]:
    """The :class:`Renumbered` columns of a table that names rows of ``sequence`` by the original id in ``via``:
    ``id`` shows the renumbered id, ``counter`` the renumbered counter (``where``: only in the rows where it holds)."""
    out = [Renumbered(id, sequence, via, "id", where)] if id else []
    return (*out, *([Renumbered(counter, sequence, via, "counter", where)] if counter else []))


@dataclass(frozen=True, slots=True)
class Mask:
    """Columns that are NULL in a visible row until an instant has passed (derived from column classes).

    Attributes:
        columns: the masked columns.
        known_at: SQL over the row alias ``t`` giving the instant at which the values become
            known (NULL means "not known yet", so the values stay masked). ``None`` means the
            columns are always masked (they encode the row's final state, e.g. ``poe.order_status``).
        reason: why these values reveal the future.
        collapse_on: while the mask holds, the row count itself would reveal the masked result
            (MIMIC microbiology has one row per organism x antibiotic): the policy keeps one row
            (the lowest ``renumber`` value) per distinct value of these columns among the rows
            whose mask holds, and none for a value with a row whose mask no longer holds (a test
            added after the first results is pending from the specimen's time on). Empty: no collapse.
        renumber: a row-id column whose values would reveal the collapsed count (gaps between
            the ids of neighbouring rows): NULL while the mask holds, and in the rows where it
            does not, renumbered densely ``1..n`` within the episode by :func:`shown_at`.
    """

    columns: tuple[str, ...]
    known_at: str | None
    reason: str = ""
    collapse_on: tuple[str, ...] = ()
    renumber: str | None = None


@dataclass(frozen=True, slots=True)
class DictJoin:
    """A dictionary join that gives codes their human-readable labels.

    Attributes:
        columns: key columns in this table.
        table: the dictionary table (qualified).
        keys: the matching key columns in the dictionary (same order as ``columns``).
        labels: dictionary columns to bring in (e.g. ``("label", "fluid", "category")``).
    """

    columns: tuple[str, ...]
    table: str
    keys: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """One MIMIC table as the store, the policy, the tools and the docs see it.

    Attributes:
        module: MIMIC module; also the DuckDB schema the store keeps the table in.
        name: table name as in MIMIC.
        description: a short clinical description.
        columns: columns in release order.
        key: columns that identify a row (may be empty where MIMIC has no key).
        visibility: see :data:`Visibility`.
        event_time: for ``event`` tables, when a row becomes known.
        stored_at: SQL over the row alias ``t`` giving when its ``stored`` columns become known.
        ends_at: SQL over ``t`` giving when its interval ends (its ``end`` columns become known).
        references: ``(column, SQL instant)`` for each ``reference`` column: when the row it names
            exists (``TIMESTAMP '-infinity'`` for a row that names nothing in the future).
        pending: how pending ``stored`` results collapse (microbiology), if they do.
        renumbered: the ``sequence`` columns and the per-patient counter each shows renumbered.
        masks: derived by the registry from the column classes (:func:`clinseek.schema.class_masks`),
            never declared; the generic rule (every TIMESTAMP/DATE value after the cutoff is NULL)
            applies on top in every table.
        target_key: ``"hadm_id"`` or ``"stay_id"`` when rows keyed to the question's target
            encounter are never visible (codes assigned at or after discharge).
        dict_joins: dictionary joins for labels.
        required: ingest fails when the module is given but this table's file is missing.
        source: the release the definition follows, e.g. ``"MIMIC-IV 3.1"``.
        files: file stems ingest looks for (without ``.csv``/``.csv.gz``), relative to the
            module directory; default ``(<module>/<name>,)`` or ``(<name>,)``.
    """

    module: Module
    name: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    visibility: Visibility = "event"
    event_time: EventTime | None = None
    stored_at: str | None = None
    ends_at: str | None = None
    references: tuple[tuple[str, str], ...] = ()
    pending: Pending | None = None
    renumbered: tuple[Renumbered, ...] = ()
    masks: tuple[Mask, ...] = ()
    target_key: Literal["hadm_id", "stay_id"] | None = None
    dict_joins: tuple[DictJoin, ...] = ()
    required: bool = False
    source: str = "MIMIC-IV 3.1"
    files: tuple[str, ...] = field(default=())

    @property
    def qualified(self) -> str:
        """``module.name``, the name of the table in the store."""
        return f"{self.module}.{self.name}"

    @property
    def file_stems(self) -> tuple[str, ...]:
        """File stems ingest looks for, relative to the module's source directory, in order."""
        return self.files or (f"{self.module}/{self.name}", self.name)

    @property
    def column_names(self) -> tuple[str, ...]:
        """Column names in release order."""
        return tuple(c.name for c in self.columns)

    @property
    def is_patient_table(self) -> bool:
        """True when the table holds patient rows (it has a ``subject_id`` column)."""
        return "subject_id" in self.column_names

    def column(self, name: str) -> Column:
        """The column called ``name``.

        Raises:
            KeyError: when the table has no such column.
        """
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.qualified} has no column {name!r}")

    @property
    def sort_columns(self) -> tuple[str, ...]:
        """Columns the store sorts by: ``subject_id`` then the event-time columns (patient tables)."""
        if not self.is_patient_table:
            return self.key
        extra = self.event_time.sort if self.event_time else ()
        return ("subject_id", *extra)


def parse_columns(
    spec: str, docs: dict[str, str] | None = None, why: dict[str, str] | None = None
) -> tuple[Column, ...]:
    """Build columns from a compact ``"name TYPE class [flags], ..."`` spec, descriptions and reasons.

    Each item is a name, a DuckDB type, its :data:`KnownAt` class, then optional flags
    (``optional``, ``alias=NAME``). ``why`` gives the one-line reason of a column's class.

    Raises:
        ValueError: an unknown class or flag, or a description / reason for an unknown column.
    """
    docs = docs or {}
    why = why or {}
    out: list[Column] = []
    for item in spec.split(","):
        parts = item.split()
        if not parts:
            continue
        name, type_ = parts[0], parts[1]
        flags = set(parts[2:])
        known = [f for f in flags if f in KNOWN_AT]
        aliases = tuple(f[len("alias=") :] for f in flags if f.startswith("alias="))
        other = flags - set(known) - {"optional"} - {f"alias={a}" for a in aliases}
        if len(known) > 1 or other:
            raise ValueError(f"column {name}: bad class or flags {sorted(flags)}; classes: {', '.join(KNOWN_AT)}")
        out.append(
            Column(
                name=name,
                type=type_,  # type: ignore[arg-type]
                description=docs.get(name, ""),
                aliases=aliases,
                optional="optional" in flags,
                known=known[0] if known else None,
                why=why.get(name, ""),
            )
        )
    for label, given in (("descriptions", docs), ("reasons", why)):
        unknown = set(given) - {c.name for c in out}
        if unknown:
            raise ValueError(f"{label} for unknown columns: {sorted(unknown)}")
    return tuple(out)
