"""SQLite's names of a query's unaliased output columns: the exact source text of each expression.

SQLite names an output column without ``AS`` by its expression's text as written, spaces, case and comments inside
included (``SELECT  COUNT( * ) FROM t`` -> ``COUNT( * )``, ``max(b)+1``, ``count(*) /* n */``), a column by its name
(``t.b``, ``(b)`` -> ``b``). The translator (``_sqlite_dialect``) gives the translated result those names; this
module finds each expression's span in the text from the tokens (sqlglot keeps the position of a function's,
literal's and identifier's first token only).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import Token
from sqlglot.tokens import TokenType

_ITEM_END = frozenset({
    TokenType.COMMA, TokenType.FROM, TokenType.WHERE, TokenType.GROUP_BY, TokenType.HAVING, TokenType.ORDER_BY,
    TokenType.LIMIT, TokenType.OFFSET, TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.SEMICOLON,
    TokenType.WINDOW,
})  # fmt: skip
"""Tokens that end a select item at its own depth (a comma, the next clause)."""
SelectLists = list[tuple[int, list[tuple[int, int]]]]
"""Every ``SELECT`` of a text: its position and its items' spans (:func:`select_lists`)."""


def select_lists(sql: str) -> SelectLists | None:
    """Every ``SELECT`` of ``sql`` (SQLite's tokens) with its items' spans: ``(SELECT's position, [(start, end)])``,
    ``sql[start:end]`` an item's text up to the next comma or clause, comments inside it kept; ``None`` when the text
    does not tokenize."""
    try:
        tokens = sqlglot.Dialect.get_or_raise("sqlite").tokenize(sql)
    except SqlglotError:
        return None
    out = []
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.SELECT:
            out.append((token.start, _items(sql, tokens, i + 1)))
    return out


def _items(sql: str, tokens: list[Token], i: int) -> list[tuple[int, int]]:
    while i < len(tokens) and tokens[i].token_type in (TokenType.DISTINCT, TokenType.ALL):
        i += 1
    items: list[tuple[int, int]] = []
    start, depth = None, 0
    for token in tokens[i:]:
        kind = token.token_type
        if depth == 0 and (kind in _ITEM_END or kind == TokenType.R_PAREN):
            if start is not None:
                items.append((start, token.start))
            if kind != TokenType.COMMA:
                return items
            start = None
            continue
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(kind, 0)
        start = token.start if start is None else start
    if start is not None:
        items.append((start, len(sql)))
    return items


def _anchor(node: exp.Expr) -> int | None:
    """The position of ``node``'s first token that sqlglot kept, outside any sub-query of it; ``None`` if none."""
    starts = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current is not node and isinstance(current, (exp.Subquery, exp.Query)):
            continue
        if isinstance(current.meta.get("start"), int):
            starts.append(current.meta["start"])
        stack.extend(current.iter_expressions())
    return min(starts) if starts else None


def source_texts(select: exp.Select, sql: str, lists: SelectLists) -> list[str | None]:
    """The source text of each of ``select``'s outputs (``None`` where it cannot be placed): the innermost ``SELECT``
    of ``lists`` with as many items, each holding its output's first token."""
    anchors = [_anchor(e) for e in select.expressions]
    if not any(a is not None for a in anchors):
        return [None] * len(anchors)
    found = None
    for position, items in lists:
        if len(items) == len(anchors) and all(
            a is None or s <= a < e for a, (s, e) in zip(anchors, items, strict=True)
        ) and (found is None or position > found[0]):
            found = (position, items)
    if found is None:
        return [None] * len(anchors)
    return [sql[s:e].rstrip(" \t\n\r\f\v") or None for s, e in found[1]]
