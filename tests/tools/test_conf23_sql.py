"""Conformance 23: SQLite's integers, BigQuery's CAST and DAYOFWEEK, and SQLite's names of translated columns.

Measured before the fixes (the translator against the standard library's ``sqlite3``, ``ehr.run_sql_query`` against
ZetaSQL's documented rules):

- ``CAST(x AS INTEGER)`` of an integer above 2^53 read as SQLite went through a DOUBLE: 9007199254740993 came back
  9007199254740992 (SQLite keeps every digit).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

import duckdb
import pytest
import sqlglot

from clinseek.tools._sqlite_dialect import translate

ROWS = [
    (1, 2147483647, 9223372036854775807, 1.5, "9007199254740993"),
    (2, -5, -9223372036854775808, -2.5, " 12"),
    (3, 46341, 9007199254740993, 9007199254740993.0, "-9007199254740993.9"),
    (4, 32767, -9007199254740993, -0.5, "9223372036854775808"),
    (5, None, None, None, None),
]
"""Integers at the edges of 32, 53 and 64 bits (``i`` is a DuckDB INTEGER, as the episode's id columns are)."""


def both(sql: str, rows: list[tuple[Any, ...]] = ROWS) -> tuple[Any, Any, str]:
    """``sql`` run by SQLite and, translated, by DuckDB over the same table ``t``: (SQLite's, DuckDB's, DuckDB SQL);
    an error is ``("error", message)``."""
    lite, duck = sqlite3.connect(":memory:"), duckdb.connect()
    try:
        lite.execute("CREATE TABLE t (k INTEGER, i INTEGER, b INTEGER, r REAL, s TEXT)")
        duck.execute("CREATE TABLE t (k INTEGER, i INTEGER, b BIGINT, r DOUBLE, s VARCHAR)")
        lite.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
        duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
        tree, _ = translate(sqlglot.parse_one(sql, read="sqlite"), dt.datetime(2100, 12, 31))
        translated = tree.sql(dialect="duckdb")
        out = []
        for con, text in ((lite, sql), (duck, translated)):
            try:
                out.append(con.execute(text).fetchall())
            except (sqlite3.Error, duckdb.Error) as err:
                out.append(("error", str(err)))
        return out[0], out[1], translated
    finally:
        lite.close()
        duck.close()


# -- 2. CAST(x AS INTEGER) keeps every digit ---------------------------------------------------------------------------


@pytest.mark.parametrize("expr", ["CAST(b AS INTEGER)", "CAST(i AS INTEGER)", "CAST(r AS INTEGER)", "CAST(s AS INTEGER)",
                                  "printf('%d', b)", "CAST(b / 2 AS INTEGER) - CAST(s AS INTEGER) / 2",
                                  "CAST(CAST(b AS TEXT) AS INTEGER)", "CAST(9007199254740993 AS INTEGER)",
                                  "CAST(-9007199254740993 AS BIGINT)", "CAST(9007199254740993.0 AS INTEGER)"])
def test_sqlite_cast_to_integer_is_exact_above_2_to_the_53(expr: str) -> None:
    """SQLite converts an integer to INTEGER as it is and text by its digits; only a REAL is a double (2^53 + 1 as a
    REAL is 2^53). Before: every number went through a DOUBLE (9007199254740993 -> 9007199254740992)."""
    lite, duck, translated = both(f"SELECT k, {expr} FROM t ORDER BY k")
    assert duck == lite, translated
