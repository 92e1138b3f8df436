"""docs/sql.md's translation table is what the dialect layer gives (and what SQLite gives, where the
local SQLite knows the form)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import duckdb
import pytest
import sqlglot

from clinseek.tools._sqlite_dialect import translate

DOC = Path(__file__).resolve().parents[2] / "docs" / "sql.md"
_ROW = re.compile(r"^\| `(.+)` \| `(.+)` \|$")


def _examples() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## What the translation does", 1)[1].split("\n## ", 1)[0]
    return [(m[1], m[2]) for line in section.splitlines() if (m := _ROW.match(line))]


def test_the_table_is_there() -> None:
    assert len(_examples()) >= 20


@pytest.mark.parametrize(("sqlite", "expected"), _examples())
def test_documented_translation(sqlite: str, expected: str) -> None:
    tree, _ = translate(sqlglot.parse_one(f"SELECT {sqlite}", read="sqlite"), None)
    con = duckdb.connect()
    try:
        got = con.execute(tree.sql(dialect="duckdb")).fetchall()[0][0]
    finally:
        con.close()
    assert str(got) == expected
    try:
        native = sqlite3.connect(":memory:").execute(f"SELECT {sqlite}").fetchall()[0][0]
    except sqlite3.Error:
        return  # a form newer than the local SQLite
    if native is None:
        return  # a modifier newer than the local SQLite, which returns NULL for it
    assert str(native) == {"True": "1", "False": "0"}.get(expected, expected)
