"""Curated Input from the sealed episode: EHR-Bench-style blocks, budget, verbatim text, nothing after the cutoff."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from clinseek.bench import Question, render_curated, render_text_timeline
from clinseek.episode import TEXT_POLICY, EpisodeKey, StoreReader, build_episode
from clinseek.models import estimate_tokens
from clinseek.store import open_store

_BLOCK = re.compile(r"^## (.+) \[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|None)\]$", re.M)


@pytest.fixture(scope="module")
def admission(demo_store: Path) -> tuple[int, int, dt.datetime, dt.datetime]:
    con = open_store(demo_store).connect()
    try:
        return con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions "
            "WHERE hospital_expire_flag = 1 ORDER BY hadm_id LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()


def _question(subject_id: int, cutoff: dt.datetime, **over: object) -> Question:
    fields: dict[str, object] = {
        "qid": "q1",
        "benchmark": "clinseek-bench-text",
        "source": "clinseek-build",
        "task": "Inpatient_Mortality",
        "task_type": "risk_prediction",
        "category": "mortality",
        "subject_id": subject_id,
        "prediction_time": cutoff,
        "policy": TEXT_POLICY,
        "label": ("yes",),
        "candidates": ("yes", "no"),
    }
    fields.update(over)
    return Question.model_validate(fields)


def test_timeline_blocks_are_newest_first_and_before_the_cutoff(demo_reader: StoreReader, admission: tuple) -> None:
    subject_id, _, admittime, dischtime = admission
    cutoff = admittime + (dischtime - admittime) / 2
    with build_episode(demo_reader, EpisodeKey(subject_id, cutoff)) as ep:
        curated = render_text_timeline(ep, budget_tokens=1_000_000)
    assert curated.source == "rendered" and not curated.truncated
    heads = _BLOCK.findall(curated.text)
    assert heads[0] == ("Patient Demographics", "None")
    times = [dt.datetime.fromisoformat(t) for _, t in heads[1:]]
    assert times and times == sorted(times, reverse=True)
    assert max(times) < cutoff
    for line in curated.text.splitlines():
        assert not line.strip() or line.startswith(("## ", "- ")), line


def test_timeline_does_not_show_the_outcome(demo_store: Path, admission: tuple) -> None:
    subject_id, hadm_id, admittime, dischtime = admission
    cutoff = admittime + dt.timedelta(hours=1)
    curated = render_curated(_question(subject_id, cutoff, hadm_id=hadm_id), demo_store)
    assert "DIED" not in curated.text
    assert "hospital_expire_flag: 1" not in curated.text
    assert "dod:" not in curated.text
    assert f"{dischtime:%Y-%m-%d %H:%M:%S}" not in curated.text


def test_budget_cuts_oldest_blocks_and_says_so(demo_reader: StoreReader, admission: tuple) -> None:
    subject_id, _, _, dischtime = admission
    with build_episode(demo_reader, EpisodeKey(subject_id, dischtime)) as ep:
        full = render_text_timeline(ep, budget_tokens=1_000_000)
        short = render_text_timeline(ep, budget_tokens=600)
    assert short.blocks_total == full.blocks_total > short.blocks_shown
    assert estimate_tokens(short.text) <= 600
    assert f"[{short.blocks_total - short.blocks_shown} older event blocks omitted" in short.text
    # the blocks kept are the most recent ones
    assert _BLOCK.findall(short.text)[1] == _BLOCK.findall(full.text)[1]


def test_row_curated_text_is_used_verbatim(demo_store: Path, admission: tuple) -> None:
    q = _question(admission[0], admission[2], curated_text="## Admissions [2150-01-01 00:00:00]\n- x: y")
    curated = render_curated(q, demo_store)
    assert curated.source == "verbatim" and curated.text == q.curated_text


def _line(columns: list[str], row: tuple[object, ...], skip: frozenset[str]) -> str:
    """The documented row line: ``- key: value; ...``, NULLs and internal ids left out, times to the second,
    floats as ``%g``, text on one line without surrounding blanks."""

    def fmt(value: object) -> str:
        if isinstance(value, dt.datetime):
            return value.strftime("%Y-%m-%d %H:%M:%S")
        if isinstance(value, float):
            return f"{value:g}"
        return str(value).replace("\n", " ").strip()

    return "- " + "; ".join(f"{c}: {fmt(v)}" for c, v in zip(columns, row, strict=True) if c not in skip and v is not None)


def test_timeline_lines_are_the_rows_of_the_episode_timeline(demo_reader: StoreReader, admission: tuple) -> None:
    from clinseek.bench._curated import _SKIP_COLUMNS
    from clinseek.policy import EVENT_TIME
    from clinseek.schema import get_table

    subject_id, _, admittime, dischtime = admission
    cutoff = admittime + (dischtime - admittime) / 2
    with build_episode(demo_reader, EpisodeKey(subject_id, cutoff, TEXT_POLICY)) as ep:
        text = render_text_timeline(ep, budget_tokens=10**7).text
        expected: dict[tuple[str, str], list[str]] = {}
        for name, rows in ep.table_counts().items():
            table = get_table(name)
            if not rows or table.visibility != "event" or not table.is_patient_table:
                continue
            data = ep.timeline(name)
            columns = [c for c in data.column_names if c != EVENT_TIME]
            title = table.name.replace("_", " ").title()
            values = zip(data.column(EVENT_TIME).to_pylist(), *(data.column(c).to_pylist() for c in columns), strict=True)
            for when, *row in values:
                expected.setdefault((title, f"{when:%Y-%m-%d %H:%M:%S}"), []).append(_line(columns, tuple(row), _SKIP_COLUMNS))
    blocks = text.split("\n\n")[1:]
    assert len(blocks) == len(expected) > 10
    for block in blocks:
        head, *lines = block.split("\n")
        found = _BLOCK.match(head)
        assert found is not None, head
        assert lines == expected[(found.group(1), found.group(2))], head


def test_a_rows_line_writes_each_value_as_the_one_formatter_does() -> None:
    """Column-wise formatting gives each row's ``- key: value; ...`` line as :func:`_fmt` writes each value, NULLs
    (and columns NULL in every row) left out, ids and ``_event_time`` skipped; datetimes to the second whatever
    their year, fraction or time zone."""
    from clinseek.bench._curated import _fmt, _row_lines

    utc = dt.UTC
    columns = ("_event_time", "subject_id", "charttime", "valuenum", "value", "seq", "flag", "empty")
    rows = [
        (dt.datetime(2180, 1, 1), 1, dt.datetime(2180, 7, 23, 12, 0, 0, 5), 1.5, " high\nvalue ", 3, None, None),
        (dt.datetime(2180, 1, 1), 1, dt.datetime(999, 1, 2, 3, 4, 5), float("nan"), "x", None, "abnormal", None),
        (dt.datetime(2180, 1, 1), 1, dt.datetime(2180, 1, 2, 3, 4, 5, tzinfo=utc), None, None, 7, None, None),
        (dt.datetime(2180, 1, 1), 1, None, 1e-7, "", 0, None, None),
    ]
    expected = [
        "- " + "; ".join(f"{c}: {_fmt(v)}" for c, v in zip(columns, row, strict=True)
                         if v is not None and c not in ("_event_time", "subject_id"))
        for row in rows
    ]
    assert _row_lines(columns, rows) == expected
    assert _row_lines(("_event_time", "empty"), [(dt.datetime(2180, 1, 1), None)]) == ["- "]
    for when in (dt.datetime(2180, 7, 23, 12, 0, 0, 5), dt.datetime(999, 1, 2, 3, 4, 5), dt.datetime(1000, 1, 1),
                 dt.datetime(2180, 1, 2, 3, 4, 5, tzinfo=utc), dt.datetime(9999, 12, 31, 23, 59, 59, 999_999)):
        assert _fmt(when) == when.strftime("%Y-%m-%d %H:%M:%S"), when


def test_blocks_come_newest_first_from_each_tables_times() -> None:
    """A table's blocks (its distinct event times and their rows) come newest first, converted in chunks from the
    newest end: the same sequence as counting every time, at chunk edges too; the tables' times counted together
    (one pass) never merge two tables' runs, empty tables included."""
    import random

    import numpy as np

    from clinseek.bench._curated import _distinct, _newest_first

    rng = random.Random(3)
    sizes = (0, 1, 2, 63, 64, 65, 320, 321, 2_000)
    parts = [sorted(rng.randrange(0, max(1, n // 2) + 1) * 60_000_000 for _ in range(n)) for n in sizes]
    parts += [[0, 60_000_000], [60_000_000, 60_000_000], [], [60_000_000]]  # a time shared across parts' edges
    lengths = np.array([len(p) for p in parts], dtype=np.int64)
    values, counts, firsts = _distinct(np.array([t for p in parts for t in p], dtype=np.int64), np.cumsum(lengths) - lengths)
    ends = [*firsts[1:].tolist(), len(values)]
    for times, a, b in zip(parts, firsts.tolist(), ends, strict=True):
        expected = sorted({t: times.count(t) for t in times}.items(), reverse=True)
        got = list(_newest_first(values[a:b], counts[a:b], "hosp.labevents"))
        assert got == [(t, "hosp.labevents", c) for t, c in expected], len(times)
    assert all(type(t) is int and type(c) is int for t, c in zip(values.tolist(), counts.tolist(), strict=True))
