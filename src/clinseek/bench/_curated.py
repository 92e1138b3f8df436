"""Curated Input: the one-shot evidence package, rendered from the *same sealed episode* the tools see.

Two forms:

- text (EHR-Bench style, after EHR-R1's serialisation): ``## <Section> [<time>]`` blocks of
  ``- key: value`` lines, one block per table and event time, the most recent blocks first, cut
  to a token budget (counted by the model server's tokenizer or a conservative estimate; the cut
  is announced);
- multimodal (ClinSeek-Bench-MM style): the row's question, ``<ehr_context>`` with, per table,
  the latest 80 visible rows as CSV, and ``<image_inputs>`` listing the linked image paths.

When a row already carries its curated text (EHR-Bench ``input``, MM ``input_text``) that text
is used verbatim. Rendering reads only through the question's episode (its inventory, and
:meth:`~clinseek.episode.Episode.timeline`: the policy's own SQL for the episode's key), so the
package can never hold anything the policy hides.
"""

from __future__ import annotations

import bisect
import csv
import datetime as dt
import heapq
import io
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..episode import Episode, EpisodeKey, StoreReader, build_episode
from ..models import ESTIMATE, TokenCounter, estimate_tokens
from ..policy import EVENT_TIME
from ..schema import get_table, tables
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
    question: Question, store: StoreReader | Store | Path | str, *, budget_tokens: int = TEXT_BUDGET_TOKENS,
    counter: TokenCounter = ESTIMATE,
) -> CuratedInput:
    """The curated package of a question: verbatim when the row carries one, else rendered.

    Rendering builds the question's episode (:func:`clinseek.episode.build_episode` from ``store``: an open
    reader, or a store file; without a database, ``queries=False``: it reads the inventory and timelines
    only); the text timeline is cut to ``budget_tokens`` counted
    with ``counter`` (see :func:`render_text_timeline`).

    Raises:
        EpisodeError: the subject is not in the store.
    """
    if question.curated_text:
        return CuratedInput(question.curated_text, "verbatim", 1, 1)
    with build_episode(store, episode_key(question), queries=False) as episode:  # it reads no SQL
        if question.task_type == "multimodal":
            return render_mm_context(episode, question)
        return render_text_timeline(episode, budget_tokens=budget_tokens, counter=counter)


_ROW_TOKENS_LOW = 64
"""Fewer tokens than a timeline row takes on average (88-160 per row in the demo's packages at 16,000 tokens):
the first window read holds ``budget // _ROW_TOKENS_LOW`` rows, enough for the budget in one read."""
_MIN_FIRST_ROWS = 16
"""Rows of the first window at the least (small budgets)."""


@dataclass(frozen=True, slots=True)
class _Block:
    time: dt.datetime
    table: str
    lines: tuple[str, ...]

    def render(self) -> str:
        return f"## {_title(self.table)} [{_fmt_datetime(self.time)}]\n" + "\n".join(self.lines)


@cache
def _title(name: str) -> str:
    """A block's title: the table's name in title case (``hosp.microbiologyevents`` -> ``Microbiologyevents``)."""
    return get_table(name).name.replace("_", " ").title()


def _fmt_datetime(value: dt.datetime) -> str:
    """``value`` to the second, as ``strftime("%Y-%m-%d %H:%M:%S")`` writes it (``isoformat`` where it writes the
    same: naive, year >= 1000)."""
    if value.tzinfo is None and value.year >= 1000:
        return value.isoformat(" ", "seconds")
    return value.strftime("%Y-%m-%d %H:%M:%S")


def _fmt(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return _fmt_datetime(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("\n", " ").strip()


def _row_lines(columns: Sequence[str], rows: Sequence[tuple[Any, ...]]) -> list[str]:
    """The text line of every row (``columns``: their names): ``- key: value; ...`` over its columns but
    ``_event_time`` and :data:`_SKIP_COLUMNS`, NULLs left out, values as :func:`_fmt` writes them (formatted
    column by column: one formatter per column's value type, not a type test per value)."""
    keep = [i for i, name in enumerate(columns) if name != EVENT_TIME and name not in _SKIP_COLUMNS]
    if not keep:
        return ["- "] * len(rows)
    if not rows:
        return []
    by_column = list(zip(*rows, strict=True))
    cells: list[list[str | None]] = []
    for i in keep:
        values, prefix = by_column[i], f"{columns[i]}: "
        kind = next((type(v) for v in values if v is not None), None)
        if kind is None:  # NULL in every row: left out of every line
            continue
        if kind is dt.datetime:  # _fmt of a datetime
            cells.append([None if v is None else prefix + _fmt_datetime(v) for v in values])
        elif kind is float:
            cells.append([None if v is None else f"{prefix}{v:g}" for v in values])
        elif kind is int:
            cells.append([None if v is None else f"{prefix}{v}" for v in values])
        elif kind is str:  # _fmt of a str
            cells.append([None if v is None else prefix + v.replace("\n", " ").strip() for v in values])
        else:
            cells.append([None if v is None else prefix + _fmt(v) for v in values])
    if not cells:
        return ["- "] * len(rows)
    return ["- " + "; ".join([c for c in row if c is not None]) for row in zip(*cells, strict=True)]


def _event_tables(episode: Episode) -> list[str]:
    """Qualified names of the episode's patient event tables with visible rows, in registry order."""
    return [name for name, rows in episode.table_counts().items() if rows and _patient_event_table(name)]


@cache
def _patient_event_table(name: str) -> bool:
    table = get_table(name)
    return table.visibility == "event" and table.is_patient_table


_MOMENT_TIME = pa.timestamp("us")
"""The unit of a block's time in :class:`_Moments` (an ``int``: microseconds since the epoch, as Arrow keeps it)."""


class _Moments:
    """Every (event time, table, rows) block of an episode, most recent first, from its inventory (no read): a
    sequence whose length is known at once and whose items are merged from the tables' times only as far as they
    are asked for (a package shows the newest few dozen of a record's thousands). Times are :data:`_MOMENT_TIME`
    integers (see :func:`_datetimes`); blocks of one instant are ordered by table name, descending."""

    def __init__(self, episode: Episode) -> None:
        names: list[str] = []
        parts: list[npt.NDArray[np.int64]] = []
        for name in _event_tables(episode):
            times = episode.event_times(name)
            if times is not None and len(times):
                if times.type != _MOMENT_TIME:
                    times = times.cast(_MOMENT_TIME)
                names.append(name)
                parts.append(times.view(pa.int64()).to_numpy(zero_copy_only=False))
        # every table's distinct times at once (one pass over their concatenation, never across two tables)
        lengths = np.fromiter(map(len, parts), np.int64, len(parts))
        values, counts, firsts = _distinct(np.concatenate(parts) if parts else np.empty(0, np.int64),
                                           np.cumsum(lengths) - lengths)
        self._total = len(values)
        ends = [*firsts[1:].tolist(), len(values)][: len(names)]
        runs = [_newest_first(values[a:b], counts[a:b], name) for name, a, b in zip(names, firsts.tolist(), ends, strict=True)]
        self._merged = heapq.merge(*runs, reverse=True)  # by time, then table name: one block per (time, table)
        self._seen: list[tuple[int, str, int]] = []

    def __len__(self) -> int:
        return self._total

    def __getitem__(self, i: int) -> tuple[int, str, int]:
        self._merge(i + 1)
        return self._seen[i]

    def between(self, start: int, stop: int) -> list[tuple[int, str, int]]:
        """Blocks ``start`` to ``stop`` (exclusive; fewer at the end)."""
        self._merge(stop)
        return self._seen[start:stop]

    def _merge(self, n: int) -> None:
        """Merge the first ``n`` blocks (all there are, when fewer)."""
        if n > len(self._seen):
            self._seen += itertools.islice(self._merged, n - len(self._seen))


_TAIL_BLOCKS = 64
"""Blocks of one table turned into Python values at a time, newest first (then four times as many each time)."""


def _distinct(
    times: npt.NDArray[np.int64], starts: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct values of each part of ``times`` (parts ascending, each starting at its index in ``starts``,
    ascending; an empty part is a repeated start), how many times each occurs in its part, and where each part's
    values begin (its first index in the values): one pass of numpy over every part (a record has ~20 tables)."""
    new = np.ones(len(times), np.bool_)
    new[1:] = times[1:] != times[:-1]
    new[starts[starts < len(times)]] = True  # a part's first time starts a run, whatever the previous part ended with
    heads = np.flatnonzero(new)
    return times[heads], np.diff(np.append(heads, len(times))), np.searchsorted(heads, starts)


def _newest_first(values: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], name: str) -> Iterator[tuple[int, str, int]]:
    """``(time, name, rows)`` of a table's blocks, newest first (``values``: its distinct times ascending, ``counts``:
    their rows), turned into Python values from the newest end only as far as they are taken (a package shows a few
    dozen blocks of a record's thousands)."""
    stop, size = len(values), _TAIL_BLOCKS
    while stop > 0:
        start = max(0, stop - size)
        yield from zip(values[start:stop][::-1].tolist(), itertools.repeat(name), counts[start:stop][::-1].tolist())
        stop, size = start, size * 4


def _datetimes(micros: Sequence[int]) -> list[dt.datetime]:
    """:data:`_MOMENT_TIME` integers back as ``datetime`` (what the store's times are)."""
    return pa.array(micros, _MOMENT_TIME).to_pylist()  # type: ignore[no-any-return]


def _window(moments: _Moments, start: int, rows: int) -> int:
    """How many blocks from ``moments[start]`` on hold about ``rows`` rows: at least one, and never part of
    the blocks of one instant (a window holds every table's rows of the instants it covers)."""
    i, n = start, 0
    while i < len(moments) and (i == start or n < rows or moments[i][0] == moments[i - 1][0]):
        n += moments[i][2]
        i += 1
    return i - start


class _Window:
    """The blocks of ``moments`` (a window of consecutive instants, newest first) rendered one by one, newest
    first: a table's rows of the whole window are read (one statement) when its first block is rendered, so a
    table none of whose blocks is rendered costs nothing."""

    def __init__(self, episode: Episode, moments: Sequence[tuple[int, str, int]], before: dt.datetime | None) -> None:
        self.episode = episode
        self.names = [name for _, name, _ in moments]
        self.whens = _datetimes([when for when, _, _ in moments])
        self.before = before
        self.lines: dict[str, dict[dt.datetime, list[str]]] = {}
        """Each table read: the lines of its rows by event time."""

    def __len__(self) -> int:
        return len(self.names)

    def block(self, i: int) -> str:
        """The rendered block ``i`` (``## <Table> [<time>]`` and the lines of its rows)."""
        at, name = self.whens[i], self.names[i]
        lines = self.lines.get(name)
        if lines is None:
            lines = self.lines[name] = self._read(name)
        return _Block(at, name, tuple(lines.get(at, ()))).render()

    def _read(self, name: str) -> dict[dt.datetime, list[str]]:
        data = self.episode.timeline_rows(name, since=self.whens[-1], until=self.before)
        at = data.columns.index(EVENT_TIME)
        lines: dict[dt.datetime, list[str]] = {}
        for row, line in zip(data.rows, _row_lines(data.columns, data.rows), strict=True):
            lines.setdefault(row[at], []).append(line)
        return lines


@lru_cache(maxsize=1)
def _registry_positions() -> dict[str, int]:
    return {t.qualified: i for i, t in enumerate(tables())}


def _registry_order(name: str) -> int:
    return _registry_positions()[name]


def _demographics(episode: Episode) -> str:
    lines: list[str] = []
    if episode.has_table("hosp.patients"):
        data = episode.timeline_rows("hosp.patients")
        wanted = [(c, data.columns.index(c)) for c in ("gender", "anchor_age", "anchor_year_group", "dod") if c in data.columns]
        for row in data.rows[:1]:
            lines = [f"- {c}: {_fmt(row[i])}" for c, i in wanted if row[i] is not None]
    return "## Patient Demographics [None]\n" + "\n".join(lines)


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

    Only the recent part of the record is read: the blocks and their sizes are known from the
    episode's inventory, the newest ones are read first (:meth:`~clinseek.episode.Episode.timeline`, about
    ``budget_tokens // _ROW_TOKENS_LOW`` rows: each table with rows in that window is one statement), and
    older ones, twice as many each time, only while the budget has room. What is read never changes the
    text: blocks are added newest first until the budget is full.
    """
    head = _demographics(episode)
    moments = _Moments(episode)
    texts: list[str] = []
    totals = _Totals(head, texts)
    budget = budget_tokens - _NOTICE_TOKENS
    want = max(_MIN_FIRST_ROWS, budget_tokens // _ROW_TOKENS_LOW)
    while True:
        start = len(texts)
        if start < len(moments):
            taken = _window(moments, start, want)
            before = _datetimes([moments[start - 1][0]])[0] if start else None
            window = _Window(episode, moments.between(start, start + taken), before)
            for i in range(len(window)):
                texts.append(window.block(i))
                if not counter.exact and totals.largest(budget) < len(texts):
                    break  # past the estimate's budget: no later block is shown (an exact count may show more)
        shown = _fit(head, texts, totals, budget, counter)
        if shown < len(texts) or len(texts) == len(moments):
            break
        want *= 2
    parts = [head, *texts[:shown]]
    if shown < len(moments):
        parts.append(f"[{len(moments) - shown} older event blocks omitted to fit {budget_tokens} tokens]")
    return CuratedInput("\n\n".join(parts), "rendered", len(moments), shown)


class _Totals:
    """Token estimates of ``head`` plus the first n of ``texts`` (a list that only grows), each text estimated
    once and only when a budget asks that far (most blocks read are never shown)."""

    def __init__(self, head: str, texts: list[str]) -> None:
        self.texts = texts
        self.totals = [estimate_tokens(head)]  # totals[n]: head + the first n texts, each + 1 for its separator

    def __getitem__(self, n: int) -> int:
        self.largest(float("inf"), upto=n)
        return self.totals[n]

    def largest(self, limit: float, *, upto: int | None = None) -> int:
        """The largest n with ``totals[n] <= limit`` (estimating texts until a total exceeds ``limit``, or up
        to text ``upto``)."""
        totals, texts = self.totals, self.texts
        while len(totals) <= len(texts) and (totals[-1] <= limit or (upto is not None and len(totals) <= upto)):
            totals.append(totals[-1] + estimate_tokens(texts[len(totals) - 1]) + 1)
        return max(0, bisect.bisect_right(totals, limit) - 1)


def _fit(head: str, texts: Sequence[str], totals: _Totals, budget: int, counter: TokenCounter) -> int:
    """How many of ``texts`` (newest first; ``totals``: their estimates) fit after ``head`` within ``budget``
    tokens of ``counter``."""

    def largest(scale: float) -> int:
        return totals.largest(budget / scale) if scale > 0 else len(texts)

    shown = largest(1.0)
    if not counter.exact:
        return shown

    def exact(n: int) -> int:
        return counter.count("\n\n".join([head, *texts[:n]]))

    scale = exact(shown) / max(1, totals[shown])
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
    for name in sorted(_event_tables(episode)):
        times = episode.event_times(name)
        assert times is not None
        n = len(times)
        since = times[n - rows_per_table].as_py() if n > rows_per_table else None
        data = episode.timeline(name, since=since)
        columns = [c for c in data.column_names if c != EVENT_TIME]
        keep = list(zip(*(data.column(c).to_pylist() for c in columns), strict=True))[-rows_per_table:]
        total += n
        shown += len(keep)
        what = f"latest {len(keep)} of {n}" if len(keep) < n else f"{n} of {n}"
        body = _csv(columns, keep)
        sections.append(f"### {name}\nRows visible at the cutoff: {n}; rows included below: {what}\n{body}")
    images = "\n".join(f"- {p}" for p in question.image_paths) or "NONE"
    text = (
        f"{question.question_text or ''}\n<ehr_context>\n" + "\n\n".join(sections) + "\n</ehr_context>\n"
        f"<image_inputs>\n{images}\n</image_inputs>"
    )
    return CuratedInput(text, "rendered", total, shown)
