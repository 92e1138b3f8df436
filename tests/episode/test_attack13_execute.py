"""attack13: ``Episode._execute`` folded into one frame (sqlpy13) keeps its time limit, its cut and its shapes.

The folded frame must still interrupt a long query, never start a statement past its deadline, give the same cut
and totals, keep the result shape apart per parameter types, and leave the episode usable after a timeout, a
refusal or an error (then a correct next query).
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import (
    Episode,
    EpisodeError,
    EpisodeKey,
    EpisodeQueryError,
    EpisodeTimeout,
    build_episode,
)
from policy.crafted import S, T

_SLOW = "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = -1"


def _fine(ep: Episode) -> None:
    r = ep.execute("SELECT 42 AS answer")
    assert (r.columns, r.types, r.rows, r.truncated, r.row_count) == (("answer",), ("INTEGER",), [(42,)], False, 1)


def test_attack13_a_long_query_is_interrupted_and_the_episode_stays_usable(sealed: Episode) -> None:
    started = time.monotonic()
    with pytest.raises(EpisodeTimeout):
        sealed.execute(_SLOW, timeout_s=0.05)
    assert time.monotonic() - started < 5
    _fine(sealed)


@pytest.mark.parametrize("limit", [0.0, -1.0])
def test_attack13_no_statement_starts_past_its_deadline(sealed: Episode, limit: float) -> None:
    with pytest.raises(EpisodeTimeout):
        sealed.execute("SELECT 1", timeout_s=limit)  # it would finish before any interrupt: refused, not run
    _fine(sealed)


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("SELEC 1", duckdb.ParserException),
        ("SELECT nope FROM range(1)", duckdb.BinderException),
        ("SELECT 1/0::INTEGER, 'a'::INTEGER", duckdb.ConversionException),
        ("CREATE TABLE x (a INT)", EpisodeQueryError),
        ("SELECT 1; SELECT 2", EpisodeQueryError),
    ],
)
def test_attack13_the_episode_answers_after_an_error(sealed: Episode, sql: str, error: type[Exception]) -> None:
    for _ in range(2):  # the second time from the kept parse / verdict
        with pytest.raises(error):
            sealed.execute(sql)
        _fine(sealed)


def test_attack13_cut_and_totals_after_a_cut(sealed: Episode) -> None:
    sql = "SELECT range AS i FROM range(10)"
    cut = sealed.execute(sql, max_rows=2)
    assert (cut.rows, cut.truncated, cut.row_count) == ([(0,), (1,)], True, None)
    exact = sealed.execute(sql, max_rows=10)
    assert (len(exact.rows), exact.truncated, exact.row_count) == (10, False, 10)
    none = sealed.execute(sql, max_rows=0)
    assert (none.rows, none.truncated, none.row_count, none.columns) == ([], True, None, ("i",))
    _fine(sealed)


def test_attack13_a_parameter_of_another_type_gets_its_own_shape(sealed: Episode) -> None:
    sql = "SELECT ? AS x"
    assert sealed.execute(sql, [1]).types == ("INTEGER",)
    assert sealed.execute(sql, ["a"]).types == ("VARCHAR",)
    assert sealed.execute(sql, [1.5]).types == ("DOUBLE",)


def test_attack13_a_closed_episode_refuses(small_store: Path) -> None:
    ep = build_episode(small_store, EpisodeKey(S, T))
    _fine(ep)
    ep.close()
    with pytest.raises(EpisodeError):
        ep.execute("SELECT 42 AS answer")
