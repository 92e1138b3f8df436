"""``Episode.read``: a query over a table not loaded yet runs as one statement on the store, around the policy's
select, under the episode's time limit; a loaded table (or a source that does not compose) is read from its copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.episode import EpisodeKey, EpisodeTimeout, build_episode, open_store_reader
from clinseek.episode._episode import SOURCE_TOKEN
from clinseek.errors import EpisodeError
from policy.crafted import OTHER, S, T


def _created(ep: object) -> set[str]:
    rows = ep.execute(  # type: ignore[attr-defined]
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE schema_name = 'hosp' "
        "AND table_name NOT LIKE 'd\\_%' ESCAPE '\\'", tables=(), max_rows=100,
    ).rows
    return {r[0] for r in rows}


def _subjects(source: str | None) -> str:
    return f"SELECT DISTINCT subject_id, '?' AS mark, ? AS p FROM {source or 'hosp.labevents'} t ORDER BY 1"


def test_a_table_not_loaded_is_read_on_the_store_and_sees_only_its_visible_rows(small_store: Path) -> None:
    with open_store_reader(small_store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        got = ep.read("labevents", _subjects, ["x"], tables=["hosp.labevents"])
        assert got.rows == [(S, "?", "x")]  # never the other patient's rows; '?' in a string is no parameter
        assert _created(ep) == set()
        counted = ep.read("hosp.labevents", lambda s: f"SELECT count(*), max(t._event_time) FROM {s} t",
                          tables=["hosp.labevents"]).rows
        assert counted == [(ep.table_counts()["hosp.labevents"], ep.event_times("labevents")[-1].as_py())]
        ep.execute("SELECT count(*) FROM hosp.labevents", tables=["hosp.labevents"])
        assert _created(ep) == {"hosp.labevents"}
        seen: list[str | None] = []

        def statement(source: str | None) -> str:
            seen.append(source)
            return _subjects(source)

        assert ep.read("labevents", statement, ["x"], tables=["hosp.labevents"]).rows == [(S, "?", "x")]
        assert seen == [None]  # loaded: read from the copy


def test_a_read_on_the_store_has_the_episodes_time_limit(small_store: Path) -> None:
    with open_store_reader(small_store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        def slow(source: str | None) -> str:
            return f"SELECT count(*) FROM {source or 'hosp.labevents'} t, range(100000000000) r"

        for _ in range(2):
            with pytest.raises(EpisodeTimeout):
                ep.read("labevents", slow, tables=["hosp.labevents"], timeout_s=0.2)
            quick = ep.read("labevents", _subjects, [1], tables=["hosp.labevents"], timeout_s=0.2)  # not hit
            assert quick.rows == [(S, "?", 1)]
            assert ep.execute("SELECT 42", tables=(), timeout_s=0.2).rows == [(42,)]
        assert _created(ep) == set()


def test_parameters_are_counted_and_a_closed_episode_refuses(small_store: Path) -> None:
    with open_store_reader(small_store) as reader:
        ep = build_episode(reader, EpisodeKey(OTHER, T))
        with pytest.raises(ValueError, match="parameters"):
            ep.read("labevents", _subjects, [], tables=["hosp.labevents"])
        ep.close()
        with pytest.raises(EpisodeError, match="closed"):
            ep.read("labevents", _subjects, ["x"], tables=["hosp.labevents"])


def test_a_source_that_does_not_compose_loads_the_table(small_store: Path) -> None:
    with open_store_reader(small_store) as reader:
        reader.composes = False  # as a PostgreSQL source (tests/postgres/test_episodes.py runs the real one)
        with build_episode(reader, EpisodeKey(S, T)) as ep:
            assert ep.read("labevents", _subjects, ["x"], tables=["hosp.labevents"]).rows == [(S, "?", "x")]
            assert _created(ep) == {"hosp.labevents"}


def test_marks_and_the_source_token_in_strings_identifiers_and_comments_stay_as_written(small_store: Path) -> None:
    """Only what DuckDB's tokenizer sees as a parameter mark or as the source token is rewritten: a ``?`` or the
    token in a string, an E-string with an escaped quote, a quoted identifier and a comment stay as written."""
    token = SOURCE_TOKEN

    def statement(source: str | None) -> str:
        return (
            f"SELECT '?' AS a, E'it\\'s ? {token}' AS b, '{token}' AS c, 1 AS \"x?\", ? AS p -- ? {token}\n"
            f"FROM {source or 'hosp.labevents'} t /* ? {token} */ WHERE t.subject_id = ? LIMIT 1"
        )

    with open_store_reader(small_store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        got = ep.read("labevents", statement, ["x", S], tables=["hosp.labevents"])
        assert got.rows == [("?", f"it's ? {token}", token, 1, "x")]
        assert got.columns == ("a", "b", "c", "x?", "p")
        assert _created(ep) == set()
        with pytest.raises(ValueError, match="parameters"):  # the marks in strings and comments are not counted
            ep.read("labevents", statement, ["x"], tables=["hosp.labevents"])
        with pytest.raises(ValueError, match=token):  # a statement that does not read the source
            ep.read("labevents", lambda s: f"SELECT '{token}' AS a", tables=["hosp.labevents"])
