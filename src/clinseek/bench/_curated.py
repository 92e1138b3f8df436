"""Curated Input: the one-shot evidence package, rendered from the *same sealed episode* the tools see.

Two forms:

- text (EHR-Bench style, after EHR-R1's serialisation): ``## <Section> [<time>]`` blocks of
  ``- key: value`` lines, one block per table and event time, the most recent blocks first, cut
  to a token budget (counted by the model server's tokenizer or a conservative estimate; the cut
  is announced);
- multimodal (ClinSeek-Bench-MM style): the row's question, ``<ehr_context>`` with, per table,
  the latest 80 visible rows as CSV, and ``<image_inputs>`` listing the linked image paths.

When a row already carries its curated text (EHR-Bench ``input``, MM ``input_text``) that text
is used verbatim. Rendering reads only through :class:`~clinseek.episode.Episode.execute`, so the
package can never hold anything the policy hides.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..episode import Episode, EpisodeKey, build_episode
from ..models import ESTIMATE, TokenCounter, estimate_tokens
from ..schema import Table, get_table
from ..store import Store
from ._question import Question

TEXT_BUDGET_TOKENS = 16_000
"""Default token budget of the rendered text package (``clinseek run --curated-budget``)."""
_NOTICE_TOKENS = 32
"""Tokens kept free for the line that says how many blocks were left out."""
MM_ROWS_PER_TABLE = 80
"""Rows per table in the multimodal ``<ehr_context>`` (the reference's ``--max-table-rows``)."""
_SKIP_COLUMNS = frozenset(
    {
        "subject_id",
        "hadm_id",
        "stay_id",
        "caregiver_id",
        "orderid",
        "linkorderid",
        "order_provider_id",
        "enter_provider_id",
        "admit_provider_id",
        "labevent_id",
        "microevent_id",
        "specimen_id",
        "micro_specimen_id",
        "emar_id",
        "emar_seq",
        "poe_seq",
        "pharmacy_id",
        "transfer_id",
        "storetime",
    }
)
"""Internal ids and bookkeeping times left out of the text timeline (they carry no clinical content)."""
_MAX_READ = 1_000_000


@dataclass(frozen=True, slots=True)
class CuratedInput:
    """A rendered (or verbatim) curated evidence package.

    Attributes:
        text: the package.
        source: ``verbatim`` (the row's own curated text) or ``rendered`` (from the episode).
        blocks_total: event blocks (text) or visible rows (multimodal) available.
        blocks_shown: how many of them are in ``text``.
    """

    text: str
    source: Literal["verbatim", "rendered"]
    blocks_total: int
    blocks_shown: int

    @property
    def truncated(self) -> bool:
        """True when the budget cut something."""
        return self.blocks_shown < self.blocks_total


def episode_key(question: Question) -> EpisodeKey:
    """The episode key a question pins: patient, cutoff, policy, hidden encounters, linked CXR ids."""
    return EpisodeKey(
        question.subject_id,
        question.prediction_time,
        question.policy,
        question.target_hadm_id,
        question.target_stay_id,
        question.study_ids,
        question.dicom_ids,
        question.hide_cxr_reports,
    )


def render_curated(
    question: Question, store: Store | Path | str, *, budget_tokens: int = TEXT_BUDGET_TOKENS,
    counter: TokenCounter = ESTIMATE,
) -> CuratedInput:
    """The curated package of a question: verbatim when the row carries one, else rendered.

    Rendering builds the question's sealed episode (:func:`clinseek.episode.build_episode`); the
    text timeline is cut to ``budget_tokens`` counted with ``counter`` (see
    :func:`render_text_timeline`).

    Raises:
        EpisodeError: the subject is not in the store.
    """
    if question.curated_text:
        return CuratedInput(question.curated_text, "verbatim", 1, 1)
    with build_episode(store, episode_key(question)) as episode:
        if question.task_type == "multimodal":
            return render_mm_context(episode, question)
        return render_text_timeline(episode, budget_tokens=budget_tokens, counter=counter)


@dataclass(frozen=True, slots=True)
class _Block:
    time: dt.datetime
    table: str
    lines: tuple[str, ...]

    def render(self) -> str:
        title = get_table(self.table).name.replace("_", " ").title()
        return f"## {title} [{self.time:%Y-%m-%d %H:%M:%S}]\n" + "\n".join(self.lines)


def _time_sql(table: Table) -> tuple[str, str]:
    """(select expression of the row's event time, join clause for an inherited time) in the episode."""
    et = table.event_time
    assert et is not None
    if et.parent is None:
        return et.expr, ""
    p = et.parent
    keys = ", ".join(p.on)
    on = " AND ".join(f"t.{c} = _p.{c}" for c in p.on)
    join = f" JOIN (SELECT {keys}, min({p.time}) AS parent_time FROM {p.table} t GROUP BY {keys}) _p ON {on}"
    return et.expr.replace("parent_time", "_p.parent_time"), join


def _labels_sql(table: Table) -> tuple[str, str]:
    """Dictionary label columns and joins for a table (codes shown with their names)."""
    cols: list[str] = []
    joins: list[str] = []
    for i, dj in enumerate(table.dict_joins):
        on = " AND ".join(f"d{i}.{k} = t.{c}" for c, k in zip(dj.columns, dj.keys, strict=True))
        joins.append(f" LEFT JOIN {dj.table} d{i} ON {on}")
        cols += [f"d{i}.{label} AS {label}" for label in dj.labels if label not in table.column_names]
    return "".join(f", {c}" for c in cols), "".join(joins)


def _table_rows(episode: Episode, table: Table) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Visible rows of one table with their event time first, oldest first."""
    time_expr, join = _time_sql(table)
    labels, dict_join = _labels_sql(table)
    sql = f"SELECT ({time_expr}) AS _event_time, t.*{labels} FROM {table.qualified} t{join}{dict_join} ORDER BY 1"
    result = episode.execute(sql, max_rows=_MAX_READ, timeout_s=60.0)
    return list(result.columns), result.rows


def _fmt(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("\n", " ").strip()


def _row_line(columns: Sequence[str], row: Sequence[Any]) -> str:
    pairs = [(c, v) for c, v in zip(columns, row, strict=True) if c not in _SKIP_COLUMNS and v is not None]
    return "- " + "; ".join(f"{c}: {_fmt(v)}" for c, v in pairs)


def _event_tables(episode: Episode) -> list[Table]:
    out = []
    for name in episode.table_counts():
        table = get_table(name)
        if table.visibility == "event" and table.is_patient_table and episode.table_counts()[name]:
            out.append(table)
    return out


def _blocks(episode: Episode) -> list[_Block]:
    blocks: list[_Block] = []
    for table in _event_tables(episode):
        columns, rows = _table_rows(episode, table)
        groups: dict[dt.datetime, list[str]] = {}
        for row in rows:
            if row[0] is not None:
                groups.setdefault(row[0], []).append(_row_line(columns[1:], row[1:]))
        blocks += [_Block(t, table.qualified, tuple(lines)) for t, lines in groups.items()]
    blocks.sort(key=lambda b: (b.time, b.table), reverse=True)
    return blocks


def _demographics(episode: Episode) -> str:
    result = episode.execute(
        "SELECT gender, anchor_age, anchor_year_group, dod FROM hosp.patients", max_rows=1
    )
    lines = [_row_line(result.columns, r)[2:] for r in result.rows]
    items = [f"- {item}" for line in lines for item in line.split("; ") if item]
    return "## Patient Demographics [None]\n" + "\n".join(items)


def render_text_timeline(
    episode: Episode, *, budget_tokens: int = TEXT_BUDGET_TOKENS, counter: TokenCounter = ESTIMATE
) -> CuratedInput:
    """The EHR-Bench-style timeline of an episode: demographics, then event blocks newest first.

    Each block is ``## <Table> [YYYY-MM-DD HH:MM:SS]`` followed by one ``- key: value; ...`` line
    per row at that event time (dictionary labels joined, NULLs left out). Blocks are added from
    the most recent backwards while the package fits ``budget_tokens`` as ``counter`` counts them
    (a server's tokenizer is asked a few times, never once per block: blocks are chosen by the
    conservative estimate, scaled to the server's count, and the result is checked); a last line
    says how many older blocks were left out. Times are the registry's event times (inherited
    parent times included).
    """
    head = _demographics(episode)
    texts = [block.render() for block in _blocks(episode)]
    shown = _fit(head, texts, budget_tokens - _NOTICE_TOKENS, counter)
    parts = [head, *texts[:shown]]
    if shown < len(texts):
        parts.append(f"[{len(texts) - shown} older event blocks omitted to fit {budget_tokens} tokens]")
    return CuratedInput("\n\n".join(parts), "rendered", len(texts), shown)


def _fit(head: str, texts: Sequence[str], budget: int, counter: TokenCounter) -> int:
    """How many of ``texts`` (newest first) fit after ``head`` within ``budget`` tokens of ``counter``."""
    sizes = [estimate_tokens(t) + 1 for t in texts]

    def fits(n: int, scale: float) -> bool:
        return (estimate_tokens(head) + sum(sizes[:n])) * scale <= budget

    def largest(scale: float) -> int:
        n = 0
        while n < len(texts) and fits(n + 1, scale):
            n += 1
        return n

    shown = largest(1.0)
    if not counter.exact:
        return shown

    def exact(n: int) -> int:
        return counter.count("\n\n".join([head, *texts[:n]]))

    scale = exact(shown) / max(1, estimate_tokens(head) + sum(sizes[:shown]))
    n = largest(scale * 1.02)
    for _ in range(8):  # a few server requests at most; each shrinks n in proportion to the overshoot
        tokens = exact(n)
        if tokens <= budget or n == 0:
            return n
        n = min(n - 1, int(n * budget / tokens))
    return min(n, shown)


def _csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([["" if v is None else _fmt(v) for v in r] for r in rows])
    return buf.getvalue().rstrip("\n")


def render_mm_context(
    episode: Episode, question: Question, *, rows_per_table: int = MM_ROWS_PER_TABLE
) -> CuratedInput:
    """The multimodal package: question, ``<ehr_context>`` (latest rows per table as CSV), ``<image_inputs>``.

    Tables appear by qualified name; each gives "Rows visible at the cutoff: N; rows included
    below: latest K of N" and its rows oldest first. Image paths are the question's linked images
    (relative to a MIMIC-CXR root), or ``NONE``.
    """
    sections: list[str] = []
    total = shown = 0
    for table in sorted(_event_tables(episode), key=lambda t: t.qualified):
        columns, rows = _table_rows(episode, table)
        keep = rows[-rows_per_table:]
        total += len(rows)
        shown += len(keep)
        what = (
            f"latest {len(keep)} of {len(rows)}" if len(keep) < len(rows) else f"{len(rows)} of {len(rows)}"
        )
        body = _csv(columns[1:], [r[1:] for r in keep])
        sections.append(
            f"### {table.qualified}\nRows visible at the cutoff: {len(rows)}; rows included below: {what}\n{body}"
        )
    images = "\n".join(f"- {p}" for p in question.image_paths) or "NONE"
    text = (
        f"{question.question_text or ''}\n<ehr_context>\n" + "\n\n".join(sections) + "\n</ehr_context>\n"
        f"<image_inputs>\n{images}\n</image_inputs>"
    )
    return CuratedInput(text, "rendered", total, shown)
