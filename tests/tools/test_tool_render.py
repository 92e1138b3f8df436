"""Compact rendering: no padding, NULL handling, escaping, and announced cuts."""

from __future__ import annotations

import datetime as dt

from clinseek.tools import Limits, Rows, format_value, render_rows


def test_values_are_compact() -> None:
    assert format_value(None, 10) == ""
    assert format_value(7.0, 10) == "7"
    assert format_value(2.500000000000001, 10) == "2.5"
    assert format_value(dt.datetime(2150, 1, 2, 3, 4, 5), 10) == "2150-01-02 03:04:05"
    assert format_value(dt.date(2150, 1, 2), 10) == "2150-01-02"
    assert format_value("a|b\nc", 10) == "a\\|b\\nc"
    assert format_value(True, 10) == "true"


def test_long_text_is_cut_with_a_marker() -> None:
    assert format_value("x" * 25, 10) == "x" * 10 + "…[+15 chars]"


def test_rows_render_without_padding() -> None:
    rows = Rows(("a", "b", "c", "d"), [(1, None, "x", 7), (22, None, "yy", 7)], 2, False)
    text, cut = render_rows("T", rows, Limits(), narrow="narrow")
    assert text.splitlines() == ["T: 2 rows", "a|b|c|d", "1||x|7", "22||yy|7"]  # listing b and d once is longer
    assert not cut


def test_null_and_constant_columns_are_listed_once_when_that_is_shorter() -> None:
    rows = Rows(
        ("charttime", "valuenum", "valueuom", "comments"),
        [(dt.datetime(2150, 1, 1, i % 24, i // 24), float(i), "mg/dL", None) for i in range(30)],
        30,
        False,
    )
    text, _ = render_rows("T", rows, Limits(), narrow="")
    assert text.splitlines() == [
        "T: 30 rows",
        "same in all rows shown: valueuom=mg/dL",
        "NULL in all rows shown: comments",
        "charttime|valuenum",
        "2150-01-01 00:00|0",
        *(f"{i % 24:02d}:{i // 24:02d}|{i}" for i in range(1, 30)),  # the same date as the row above
    ]


def test_a_single_row_shows_every_column() -> None:
    text, _ = render_rows("T", Rows(("a", "b"), [(1, None)], 1, False), Limits(), narrow="")
    assert text.splitlines() == ["T: 1 row", "a|b", "1|"]


def test_without_a_title_the_header_comes_first() -> None:
    assert render_rows(None, Rows(("n",), [(136,)], 1, False), Limits(), narrow="")[0] == "n\n136"
    assert render_rows(None, Rows(("n",), [], 0, False), Limits(), narrow="") == ("No rows.", False)


def test_timestamps_show_seconds_only_where_a_column_has_them() -> None:
    rows = Rows(
        ("a", "b"),
        [(dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 2, 3, 4, 5)), (None, dt.datetime(2150, 1, 2, 3, 4))],
        2,
        False,
    )
    text, _ = render_rows(None, rows, Limits(), narrow="")
    assert text.splitlines() == ["a|b", "2150-01-02 03:04|2150-01-02 03:04:05", "|03:04:00"]


def test_a_time_on_the_date_of_the_row_above_shows_its_time_of_day_only() -> None:
    day, later = dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 3, 0, 0)
    rows = Rows(
        ("t", "v", "u"),
        [(day, 1, later), (day.replace(hour=9), 2, later), (None, 3, later), (day.replace(hour=23), 4, day),
         (later, 5, day), (later.replace(minute=5), 6, None), (later.replace(year=2151), 7, later)],
        7,
        False,
    )
    text, _ = render_rows(None, rows, Limits(), narrow="")
    assert text.splitlines() == [
        "t|v|u",
        "2150-01-02 03:04|1|2150-01-03 00:00",
        "09:04|2|2150-01-03 00:00",  # newcomer21: dated again beside a time of another date (read left to right)
        "|3|00:00",
        "2150-01-02 23:04|4|2150-01-02 03:04",  # after a NULL the date is shown again
        "2150-01-03 00:00|5|2150-01-02 03:04",
        "00:05|6|",
        "2151-01-03 00:00|7|2150-01-03 00:00",
    ]


def test_a_header_with_a_pipe_is_escaped() -> None:
    text, _ = render_rows(None, Rows(("a|b", "c"), [(1, 2)], 1, False), Limits(), narrow="")
    assert text.splitlines()[0] == "a\\|b|c"


def test_uniform_rows_keep_one_grid_column() -> None:
    text, _ = render_rows("T", Rows(("a", "b"), [(1, 22222)] * 8, 8, False), Limits(), narrow="")
    assert text.splitlines() == ["T: 8 rows", "same in all rows shown: b=22222", "a", *["1"] * 8]


def test_row_cap_is_announced_with_the_total_and_how_to_narrow() -> None:
    rows = Rows(("a",), [(i,) for i in range(5)], 1234, True)
    text, cut = render_rows("T", rows, Limits(), narrow="use a time window.")
    assert cut
    assert text.splitlines()[-1] == (
        "[TRUNCATED: showing the first 5 of 1234 rows (the row limit). To see the rest, use a time window.]"
    )


def test_character_cap_cuts_at_a_row_and_says_so() -> None:
    rows = Rows(("a",), [(f"{i:03d}" + "v" * 97,) for i in range(100)], 100, False)
    limits = Limits(max_tool_chars=2_000)
    text, cut = render_rows("T", rows, limits, narrow="page.")
    assert cut and len(text) <= limits.max_tool_chars
    assert "the output character limit" in text.splitlines()[-1]
    shown = int(text.splitlines()[-1].split("first ")[1].split(" ")[0])
    assert shown == len(text.splitlines()) - 3  # title, header, notice


def test_empty_result() -> None:
    text, cut = render_rows("T", Rows(("a",), [], 0, False), Limits(), narrow="")
    assert (text, cut) == ("T: no rows.", False)


def test_a_single_row_renders_as_the_grid_would() -> None:
    """The one-row path (a count, a maximum, one record) gives the grid's text and cut for every kind of value."""
    from decimal import Decimal

    from clinseek.tools._render import _render_grid

    values = [
        0, -7, 2**40, True, False, 2.5, 7.0, float("nan"), float("inf"), Decimal("1.50"), "", "text", "a|b\\c\nd\r",
        "x" * 1_500, dt.date(2150, 1, 2), dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 2, 3, 4, 5),
        dt.datetime(2150, 1, 2, 3, 4, 5, 600), dt.time(3, 4), dt.timedelta(hours=5), [1, 2], {"k": 1}, b"\x00", None,
    ]
    names = ("n", "a|b", "new\nline", "label")
    for title in (None, "T"):
        for truncated, total in ((False, 1), (True, None), (True, 40)):
            for i, value in enumerate(values):
                row = (value, values[-1 - i], None, values[(i * 7) % len(values)])
                for width in (1, 4):  # one column, and several with a NULL among them
                    rows = Rows(names[:width], [row[:width]], total, truncated)
                    for narrow in ("page.", lambda n: f"{n} shown"):
                        assert render_rows(title, rows, Limits(), narrow=narrow) == _render_grid(title, rows, Limits(), narrow)


def test_a_single_row_of_nulls_says_so() -> None:
    assert render_rows(None, Rows(("a", "b"), [(None, None)], 1, False), Limits(), narrow="") == (
        "NULL in all rows shown: a, b\n(1 row, all values NULL)", False
    )
