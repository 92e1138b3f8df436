"""Reading what a cutoff hides, for labels: every label value comes through ``Policy.future_select``.

The builder may look at the store to *choose* questions (which patients, encounters and times
exist), but the content of a label (a death, a discharge time, the next lab tests) is only ever
read from the rows the episode policy hides at a cutoff, so a label can never be built from
something the episode shows.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..errors import PolicyError
from ..policy import TEXT_POLICY, EpisodeKey, get_policy
from ..schema import get_table


@dataclass(slots=True)
class FutureReader:
    """Runs ``future_select`` queries on a store connection.

    Attributes:
        con: a read-only store connection.
        present: qualified names of the tables the store holds.
    """

    con: duckdb.DuckDBPyConnection
    present: frozenset[str]

    def rows(
        self, table: str, key: EpisodeKey, where: str = "", params: Sequence[Any] = (), *, select: str = "*"
    ) -> list[dict[str, Any]]:
        """The rows of ``table`` hidden from the episode ``key``, optionally filtered.

        Args:
            table: qualified table name.
            key: the episode key (its policy decides the inequality).
            where: SQL over the hidden rows (alias ``f``); ``?`` placeholders take ``params``.
            params: values for the placeholders in ``where``.
            select: what to select from the hidden rows (default every column).

        Raises:
            PolicyError: the table is absent from the store or its parent is.
        """
        if table not in self.present:
            raise PolicyError(f"{table} is not in the store")
        policy = get_policy(key.policy)
        found = policy.future_select(get_table(table), key, present=self.present)
        if found is None:
            raise PolicyError(f"{table}: no future rows can be read (dictionary, or its parent is absent)")
        sql, base = found
        where_sql = where
        for i in range(len(params)):
            where_sql = where_sql.replace("?", f"${len(base) + i + 1}", 1)
        # static and label-source tables ignore the cutoff parameter; DuckDB refuses unused ones
        unused = [
            f"CAST(${i} AS VARCHAR) IS NULL"
            for i in range(1, len(base) + 1)
            if not re.search(rf"\${i}(?!\d)", sql)
        ]
        conds = [w for w in (where_sql, " AND ".join(f"({u} OR TRUE)" for u in unused)) if w]
        query = f"SELECT {select} FROM ({sql}) f" + (
            f" WHERE {' AND '.join(f'({c})' for c in conds)}" if conds else ""
        )
        cur = self.con.execute(query, [*base, *params])
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def first_time(self, table: str, key: EpisodeKey) -> dt.datetime | None:
        """The earliest event time among the rows of ``table`` hidden from ``key`` (``None`` if none).

        A parent's time is read by key from the whole store (:meth:`clinseek.schema.EventTime.row_sql`).
        """
        spec = get_table(table)
        if spec.event_time is None:
            raise PolicyError(f"{table}: first_time needs an event table")
        expr = spec.event_time.row_sql("f")
        found = self.rows(table, key, select=f"min({expr}) AS first")
        return found[0]["first"] if found else None

    def encounter(
        self, table: str, subject_id: int, start: dt.datetime, column: str, value: int
    ) -> dict[str, Any] | None:
        """The full row of one encounter as it was hidden when the encounter began.

        An admission, ICU stay or ED stay becomes visible at its own start time, so at a cutoff
        equal to that start (strict text policy) the row is still hidden and comes back with every
        outcome column unmasked (dischtime, deathtime, outtime, los, disposition, hadm_id).
        """
        key = EpisodeKey(subject_id, start, TEXT_POLICY)
        found = self.rows(table, key, f"f.{column} = ?", [value])
        return found[0] if found else None
