"""Shared parts of the decision-making builders: the text-policy key, item names, and next-batch tasks.

A *next batch* task picks an event time ``t*`` of the task's table for a patient (the anchor), sets
``prediction_time = t*`` (rows at ``t*`` are hidden under the strict text policy; AgentEHR asks a
minute earlier) and takes the distinct item names of the hidden rows whose event time equals ``t*``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from ..policy import TEXT_POLICY, EpisodeKey
from ..schema import get_table
from ._anchor import Anchor, BuildContext

Labelled = Iterator[tuple[Anchor, tuple[str, ...]]]
"""What a decision-making builder yields: anchors with their gold item names (empty: dropped)."""


def text_key(anchor: Anchor) -> EpisodeKey:
    """The text-policy episode key of an anchor (what the question's episode shows)."""
    return EpisodeKey(
        anchor.subject_id, anchor.prediction_time, TEXT_POLICY, anchor.target_hadm_id, anchor.target_stay_id
    )


def item_names(values: list[object]) -> tuple[str, ...]:
    """Distinct non-empty names, stripped and sorted."""
    return tuple(sorted({str(v).strip() for v in values if v is not None and str(v).strip()}))


def known_admission(sql: str, lead: dt.timedelta = dt.timedelta(0)) -> str:
    """Wrap an anchor query (subject_id, t_star, hadm_id) so hadm_id is kept only if that admission began
    before the cutoff (``t* - lead``).

    A row can carry the hadm_id of an admission that starts later (labs drawn in the ED before
    admission); naming it in the question would reveal that the patient is going to be admitted.
    """
    cutoff = f"s.t_star - INTERVAL {int(lead.total_seconds())} SECOND" if lead else "s.t_star"
    return (
        f"SELECT s.subject_id, s.t_star, CASE WHEN a.admittime < {cutoff} THEN s.hadm_id END AS hadm_id "
        f"FROM ({sql}) s LEFT JOIN hosp.admissions a ON a.hadm_id = s.hadm_id AND a.subject_id = s.subject_id"
    )


@dataclass(frozen=True, slots=True)
class NextBatch:
    """A next-batch task.

    Attributes:
        table: the qualified table.
        item: SQL for the item name over the row (alias ``f``) and an optional dictionary ``d``.
        join: dictionary join (``JOIN hosp.d_labitems d ON d.itemid = f.itemid``), or ``""``.
        encounter: anchor only rows with this column set (``hadm_id``/``stay_id``), or ``None``.
        linksto: for ICU item tables, the ``d_items.linksto`` value the candidates are limited to.
        where: a further condition on the rows (alias ``f``) both drawn from and labelled, e.g.
            ``f.eventtype = 'transfer'``.
        lead: the cutoff is this long before the event time t* (AgentEHR asks one minute before); the
            label is still the rows at exactly t*.
        time: SQL of t* over the row (alias ``f``) where a task defines it apart from the registry's event
            time (AgentEHR's prescriptions: ``f.starttime``; a row's event time is never earlier, so the rows
            at t* stay hidden at the cutoff); ``""``: the registry's event time.
    """

    table: str
    item: str
    join: str = ""
    encounter: str | None = "hadm_id"
    linksto: str | None = None
    where: str = ""
    lead: dt.timedelta = dt.timedelta(0)
    time: str = ""

    @property
    def time_sql(self) -> str:
        """t* over alias ``f``: :attr:`time`, else the table's event time (the registry's expression, a parent's
        time inlined)."""
        if self.time:
            return self.time
        et = get_table(self.table).event_time
        assert et is not None
        return et.row_sql("f")

    def candidates_sql(self) -> str:
        """SQL of the store-wide vocabulary of the item (dictionary labels where a dictionary names the item)."""
        if self.linksto:
            return f"SELECT DISTINCT label FROM icu.d_items WHERE linksto = '{self.linksto}' AND label IS NOT NULL"
        if "d_labitems" in self.join:
            return "SELECT DISTINCT label FROM hosp.d_labitems WHERE label IS NOT NULL"
        return f"SELECT DISTINCT {self.item} FROM {self.table} f {self.join} WHERE {self.item} IS NOT NULL"

    def vocabulary(self, ctx: BuildContext) -> list[str]:
        """The store-wide vocabulary of the item (the task's candidates rule)."""
        return SqlVocabulary(self.candidates_sql())(ctx)

    def __call__(self, ctx: BuildContext) -> Labelled:
        """Yield anchors at sampled event times with the items of the hidden rows at that time."""
        where = f"{self.time_sql} IS NOT NULL" + (
            f" AND f.{self.encounter} IS NOT NULL" if self.encounter else ""
        ) + (f" AND {self.where}" if self.where else "")
        hadm = "f.hadm_id" if "hadm_id" in get_table(self.table).column_names else "NULL"
        sample = max(ctx.pool * 4, 200)
        sql = (
            f"SELECT DISTINCT f.subject_id, {self.time_sql} AS t_star, {hadm} AS hadm_id FROM "
            f"(SELECT * FROM {self.table} f WHERE {where} USING SAMPLE reservoir({sample} ROWS) REPEATABLE "
            f"({ctx.rng.randrange(2**31)})) f"
        )
        for r in ctx.shuffled(ctx.query(known_admission(sql, self.lead))):
            anchor = Anchor(r["subject_id"], r["t_star"] - self.lead, hadm_id=r["hadm_id"], info={"t_star": r["t_star"]})
            yield anchor, self.items(ctx, anchor)

    def items(self, ctx: BuildContext, anchor: Anchor) -> tuple[str, ...]:
        """Distinct item names of the hidden rows at exactly t* (the cutoff, or ``info["t_star"]``)."""
        at = anchor.info.get("t_star", anchor.prediction_time)
        cond = f"{self.time_sql} = ?" + (f" AND {self.where}" if self.where else "")
        rows = ctx.future.rows(self.table, text_key(anchor), cond, [at])
        if not rows:
            return ()
        if not self.join:
            col = self.item.removeprefix("f.")
            return item_names([row[col] for row in rows])
        keys = sorted({row["itemid"] for row in rows if row.get("itemid") is not None})
        dictionary = "hosp.d_labitems" if "d_labitems" in self.join else "icu.d_items"
        found = ctx.query(f"SELECT label FROM {dictionary} WHERE list_contains(?, itemid)", [keys])
        return item_names([f["label"] for f in found])


@dataclass(frozen=True, slots=True)
class SqlVocabulary:
    """A candidates rule read from the store: the distinct non-null values of the query's first column."""

    sql: str

    def __call__(self, ctx: BuildContext) -> list[str]:
        """The values, as text."""
        return [str(r[0]) for r in ctx.con.execute(self.sql).fetchall() if r[0] is not None]
