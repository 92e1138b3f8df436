"""The policy objects: one frozen :class:`Policy` per version, driven by the schema registry."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import PolicyError
from ..schema import Table, tables
from ..store import RowInstants
from ._key import EpisodeKey
from ._sql import (
    encounter_sqls,
    future_sql,
    inventory_tables,
    timeline_sql,
    visible_inventory_sql,
    visible_sql,
)
from ._versions import MM_POLICY, TEXT_POLICY


@dataclass(frozen=True, slots=True)
class Policy:
    """What an episode may see, for one policy version (``docs/policy.md`` states it table by table).

    A row is visible iff its event time ``E`` (the registry's :class:`~clinseek.schema.EventTime`,
    inherited from the parent row where the registry says so) is ``< T`` (``inclusive=False``) or
    ``<= T`` (``inclusive=True``), where ``T`` is the key's ``prediction_time``. Rows with no event
    time, or whose parent time is unknown, are not visible. In a visible row, a masked column
    (:class:`~clinseek.schema.Mask`) is NULL until its ``known_at`` instant is visible by the same
    rule, and every TIMESTAMP value later than ``T`` (DATE ``d``: ``d + 24 h``) is NULL. Codes of
    the key's target encounter are never visible. Dictionaries are visible whole; ``never``
    tables (label sources) not at all. The same rule decides both directions: the episode
    (:meth:`visible_select`) and the label builder (:meth:`future_select`).

    Attributes:
        version: the version string (recorded in results and run manifests).
        inclusive: ``True`` for ``E <= T``, ``False`` for ``E < T``.
        cxr_linked_only: only the key's ``study_ids`` / ``dicom_ids`` exist in ``cxr`` tables.
        description: one line for docs and run manifests.
    """

    version: str
    inclusive: bool
    cxr_linked_only: bool
    description: str

    @property
    def operator(self) -> str:
        """The SQL comparison between an instant and the cutoff: ``"<"`` or ``"<="``."""
        return "<=" if self.inclusive else "<"

    def sees(self, instant: datetime | date | None, prediction_time: datetime) -> bool:
        """Whether an instant is known at ``prediction_time`` (a ``date`` counts at its end, ``d + 24 h``).

        ``None`` (an unknown instant) is never seen. Both values are naive MIMIC-clock times.
        """
        if instant is None:
            return False
        if not isinstance(instant, datetime):
            instant = datetime.combine(instant, datetime.min.time()) + timedelta(days=1)
        return instant <= prediction_time if self.inclusive else instant < prediction_time

    def visible_select(
        self,
        table: Table,
        key: EpisodeKey,
        *,
        present: Collection[str] | None = None,
        encounters: Mapping[str, Collection[int]] | None = None,
        instants: RowInstants | None = None,
    ) -> tuple[str, list[Any]] | None:
        """SQL and parameters that, on a store connection, give exactly what an episode sees of ``table``.

        The result has the registry's columns, in registry order, with their registry types:
        only ``subject_id = key.subject_id`` rows whose event time is visible, target-encounter
        rows removed, not-yet-known values NULL. No ORDER BY (sorting costs a build time and
        every reader orders explicitly); rows mostly come in store order (subject, then time).
        Dictionaries come whole. The parent of an inherited time, and tables read by a mask, are
        narrowed to the same patient.

        Args:
            table: a registry table.
            key: the episode key; its ``policy`` must be this policy's version.
            present: qualified names of the tables the store holds (``None``: all). A table
                whose parent is absent cannot be timed and is not visible; a mask that reads an
                absent table keeps its columns NULL.
            encounters: the visible encounter ids by owning table, as the queries of
                :meth:`encounter_selects` give them for the same key (a build runs those once
                and passes them to every table). An encounter-id column whose owner is listed
                is masked with ``IN (ids)`` instead of a correlated subquery per row: same
                values, cheaper. ``None`` (or an owner not listed): the subquery. A table whose
                store keeps the encounter's start per row (``instants``) compares that column with
                the cutoff instead of either (cheaper still to plan).
            instants: the row instants the store keeps (:func:`clinseek.store.valid_row_instants` of the
                store the statement runs on; ``None``: none). A table listed there reads its inherited
                event time and the mask instants that read other tables from its own columns instead of
                joining the parent and grouping the other tables: same rows and values, cheaper to plan.
                The policy still decides every value (the cutoff, the masks, the target exclusion,
                the linked studies, the collapse of pending results and the renumbering).

        Returns:
            ``(sql, params)``; ``None`` when the table is never visible (``never`` tables, or
            an absent parent).

        Raises:
            PolicyError: ``key.policy`` is not this policy's version.
        """
        self._check(key)
        return visible_sql(
            table,
            key,
            op=self.operator,
            linked_only=self.cxr_linked_only,
            present=present,
            encounters=encounters,
            instants=instants,
        )

    def timeline_select(
        self,
        table: Table,
        key: EpisodeKey,
        *,
        present: Collection[str] | None = None,
        encounters: Mapping[str, Collection[int]] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        instants: RowInstants | None = None,
    ) -> tuple[str, list[Any]] | None:
        """What an episode sees of ``table`` as a timeline: :meth:`visible_select`'s rows with their event time,
        with event time in [``since``, ``until``) (``None``: unbounded), oldest first.

        The columns are the registry's, then ``_event_time`` (the row's event time, parent times included:
        the instant of :meth:`visible_inventory_select`'s ``times``; event tables only). Rows whose event
        time is outside the window are left out *after* the policy chose the visible rows (a collapse
        over several rows sees all of them). Unordered: the reader sorts them by :func:`timeline_order`
        (event time, then the table's key, then every other column). For Curated Input, which shows the
        most recent rows without copying whole tables. ``instants`` as for :meth:`visible_select`.

        Returns:
            ``(sql, params)``; ``None`` when the table is never visible (as :meth:`visible_select`).

        Raises:
            PolicyError: ``key.policy`` is not this policy's version.
        """
        self._check(key)
        return timeline_sql(
            table, key, op=self.operator, linked_only=self.cxr_linked_only, present=present,
            encounters=encounters, since=since, until=until, instants=instants,
        )

    def visible_inventory_select(
        self,
        key: EpisodeKey,
        *,
        present: Collection[str] | None = None,
        indexed: Collection[str] = (),
        instants: RowInstants | None = None,
    ) -> tuple[str, list[Any]] | None:
        """One statement giving how many rows an episode sees of every patient table, and when they happened.

        On a store connection it returns one row ``(table_name VARCHAR, n BIGINT, times TIMESTAMP[],
        encounter_ids BIGINT[])`` per ``event`` and ``static`` table of the registry that
        :meth:`visible_select` would give rows for (present in ``present``, parent present, not hidden by
        the key): ``n`` counts exactly the rows :meth:`visible_select` returns (same FROM / WHERE /
        QUALIFY; only the projection differs) and ``times`` lists their event times ascending (the
        registry's event time, inherited parent times included; NULL for the ``static`` table). One
        statement instead of one per table: an episode knows its table inventory, and how its rows spread
        over time, without copying any row.

        The same statement gives the key's visible encounter ids, exactly those of
        :meth:`encounter_selects` (a build passes them to every :meth:`visible_select`): ``encounter_ids``
        of an encounter table whose event time is the encounter's start
        (:func:`clinseek.store.encounter_column`: ``hosp.admissions``, ``icu.icustays``, ``ed.edstays``) lists
        the ids of its visible rows (each once or more); no row, or NULL, means none. It is NULL for every
        other table. Rows come in no particular order.

        ``indexed`` names tables the store's event index covers and may be trusted for
        (:func:`clinseek.store.valid_event_index`): those whose visible rows depend on the subject, the
        event time, the target encounter and the collapse of pending results alone (the index holds the
        intervals in which a collapsing table's row is kept) are counted from the index in one part (one scan of
        one table instead of one scan, and for inherited times one join, per table), and such a table
        gets a row only when it has visible rows: the caller counts the other tables of
        :meth:`inventory_tables` as 0 rows, ``times`` NULL (as the statement gives for an empty table).
        ``instants`` as for :meth:`visible_select` (the tables not counted from the index).

        Returns:
            ``(sql, params)``; ``None`` when no such table is present.

        Raises:
            PolicyError: ``key.policy`` is not this policy's version.
        """
        self._check(key)
        return visible_inventory_sql(
            tables(), key, op=self.operator, linked_only=self.cxr_linked_only, present=present, indexed=indexed,
            instants=instants,
        )

    def inventory_tables(self, key: EpisodeKey, *, present: Collection[str] | None = None) -> tuple[str, ...]:
        """Qualified names of the tables :meth:`visible_inventory_select` covers, in registry order.

        Raises:
            PolicyError: ``key.policy`` is not this policy's version.
        """
        self._check(key)
        return tuple(t.qualified for t in inventory_tables(tables(), key, present=present))

    def encounter_selects(
        self, key: EpisodeKey, *, present: Collection[str] | None = None
    ) -> dict[str, tuple[str, list[Any]]]:
        """Per owning encounter table (``hosp.admissions``, ``icu.icustays``, ``ed.edstays``) the store
        holds: SQL and parameters giving the patient's encounter ids visible at the cutoff (for
        :meth:`visible_select`'s ``encounters``; one id per row).

        Raises:
            PolicyError: ``key.policy`` is not this policy's version.
        """
        self._check(key)
        params = [key.subject_id, key.prediction_time]
        return {owner: (sql, list(params)) for owner, sql in encounter_sqls(self.operator, present).items()}

    def future_select(
        self, table: Table, key: EpisodeKey, *, present: Collection[str] | None = None
    ) -> tuple[str, list[Any]] | None:
        """SQL and parameters for the inverse question, for label building: what does ``T`` hide?

        Returns this patient's rows of ``table`` that the episode does *not* see because of time:
        rows whose event time is not visible (at or after ``T``; at or after for ``<``, after for
        ``<=``; an unknown event time counts as not visible), plus every row of the target
        encounter whatever its time. Values are unmasked and in registry column order, rows
        ordered by the table's sort columns. For the
        ``static`` table (``hosp.patients``) and ``never`` tables (label sources) it returns the
        patient's rows whole; visible rows ∪ future rows = all the patient's rows.

        Returns:
            ``(sql, params)``; ``None`` for dictionaries (nothing is hidden) and when the
            table's parent is absent from ``present``.

        Raises:
            PolicyError: ``key.policy`` is not this policy's version.
        """
        self._check(key)
        return future_sql(table, key, op=self.operator, present=present)

    def _check(self, key: EpisodeKey) -> None:
        if key.policy != self.version:
            raise PolicyError(
                f"episode key asks for policy {key.policy!r} but this is {self.version!r}; "
                "use get_policy(key.policy)"
            )


POLICIES: dict[str, Policy] = {
    TEXT_POLICY: Policy(
        TEXT_POLICY,
        inclusive=False,
        cxr_linked_only=False,
        description="ClinSeek-Bench text: visible iff event time < prediction_time",
    ),
    MM_POLICY: Policy(
        MM_POLICY,
        inclusive=True,
        cxr_linked_only=True,
        description="ClinSeek-Bench multimodal: visible iff event time <= prediction_time; linked CXR studies only",
    ),
}
"""Every policy, by version."""


def get_policy(version: str) -> Policy:
    """The policy called ``version``.

    Raises:
        PolicyError: the version is unknown (the message lists the known ones).
    """
    try:
        return POLICIES[version]
    except KeyError:
        raise PolicyError(f"unknown policy version {version!r}; known: {', '.join(POLICIES)}") from None
