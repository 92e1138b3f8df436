"""Candidate tools: search the question's answer options (``candidates.<task>_candidates``)."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process, utils

from ..errors import MissingExtraError, ToolError, import_optional
from ._context import ToolContext
from ._limits import Limits
from ._query import run_query
from ._registry import tool
from ._render import Rows, echo, format_value, table_result
from ._result import ToolResult
from ._tables import resolve_table

Encoder = Callable[[list[str]], Any]
"""Maps texts to an (n, d) array of L2-normalised embeddings."""

_ALL = 1_000_000


def _candidates(ctx: ToolContext, table_name: str) -> tuple[str, list[str]]:
    ref = resolve_table(ctx, table_name, candidates=True)
    rows = run_query(
        ctx,
        f"SELECT DISTINCT candidate FROM {ref.qualified} WHERE candidate IS NOT NULL ORDER BY candidate",
        max_rows=_ALL,
        tables=(),  # candidate tables exist from the build
    ).rows
    return ref.qualified, [r[0] for r in rows]


def _as_list(value: str | list[str], field: str) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    items = [i for i in (x.strip() for x in items) if i]
    if not items:
        raise ToolError("bad_argument", f"{field} is empty")
    return items


def _text_columns(ctx: ToolContext, qualified: str) -> list[str]:
    """The text columns of a candidate table, ``candidate`` first (codes and titles follow)."""
    shape = run_query(ctx, f"SELECT * FROM {qualified} LIMIT 0", tables=())
    text = [c for c, t in zip(shape.columns, shape.types, strict=True) if t == "VARCHAR" and c != "candidate"]
    return ["candidate", *text]


@tool("ehr.get_candidates_by_keyword")
def get_candidates_by_keyword(ctx: ToolContext, table_name: str, keyword: str) -> ToolResult:
    """Candidates (answer options) of a candidate table whose row contains keyword, alphabetically.

    Literal, case-insensitive substring match (no regular expressions) over every text column of the
    table: the candidate name and, where the table has them, its dictionary columns (e.g. the ICD titles
    of each CCS category in diagnoses_ccs_candidates). Each candidate is listed once.

    Args:
        table_name: a candidate table, e.g. 'diagnoses_ccs_candidates'.
        keyword: the text to look for.
    """
    if not keyword.strip():
        raise ToolError("bad_argument", "keyword is empty")
    ref = resolve_table(ctx, table_name, candidates=True)
    columns = _text_columns(ctx, ref.qualified)
    match = " OR ".join(f"strpos(lower(coalesce({c}, '')), $1) > 0" for c in columns)
    sql = (
        f"SELECT candidate, count(*) OVER () AS _total FROM (SELECT DISTINCT candidate FROM {ref.qualified} "
        f"WHERE candidate IS NOT NULL AND ({match})) c ORDER BY candidate"
    )
    result = run_query(ctx, sql, [keyword.strip().lower()], tables=())
    total = result.rows[0][-1] if result.rows else 0
    rows = Rows(("candidate",), [r[:1] for r in result.rows], total, result.truncated, unit="candidate")
    narrow = "use a more specific keyword."
    return table_result(f"{ref.qualified} containing {echo(keyword.strip())}", rows, ctx.limits, narrow=narrow)


@tool("ehr.get_candidates_by_fuzzy_matching")
def get_candidates_by_fuzzy_matching(
    ctx: ToolContext, table_name: str, keywords: str | list[str]
) -> ToolResult:
    """The closest candidates to each keyword by fuzzy string similarity (0-100, best first).

    Uses rapidfuzz WRatio on lower-cased text; per keyword at most candidate_top_k results
    (5 by default) scoring at least fuzzy_min_score (50 by default) — possibly none.

    Args:
        table_name: a candidate table, e.g. 'diagnoses_ccs_candidates'.
        keywords: one keyword or a list of keywords.
    """
    qualified, choices = _candidates(ctx, table_name)
    results: dict[str, list[tuple[str, float]]] = {}
    for kw in _as_list(keywords, "keywords"):
        hits = process.extract(
            kw,
            choices,
            scorer=fuzz.WRatio,
            processor=utils.default_process,
            limit=ctx.limits.candidate_top_k,
            score_cutoff=ctx.limits.fuzzy_min_score,
        )
        results[kw] = [(choice, round(float(score), 1)) for choice, score, _ in hits]
    return _ranked(qualified, results, "similarity", f"fuzzy score >= {ctx.limits.fuzzy_min_score:g}", ctx)


def _ranked(
    qualified: str, results: dict[str, list[tuple[str, float]]], label: str, rule: str, ctx: ToolContext
) -> ToolResult:
    lines = []
    for kw, hits in results.items():
        lines.append(f"--- {echo(kw)} in {qualified} ({len(hits)} with {rule}) ---")
        lines += [f"{format_value(c, ctx.limits.max_cell_chars)}|{s:g}" for c, s in hits] or ["(no match)"]
    data = {
        "table": qualified,
        "results": {k: [[c, s] for c, s in v] for k, v in results.items()},
        "score": label,
    }
    return ToolResult(ok=True, content="\n".join(lines), data=data)


EHR_SEMANTIC_TOOL = "ehr.get_candidates_by_semantic_similarity"
"""The tool that needs the [semantic] extra and a local model (offered only when available)."""


def semantic_available(limits: Limits) -> bool:
    """Whether :data:`EHR_SEMANTIC_TOOL` can run under ``limits``: a local model directory is set
    (``Limits.semantic_model_path``) and sentence-transformers is importable (extra ``semantic``).
    Cheap: nothing is imported or loaded."""
    path = limits.semantic_model_path
    return bool(path) and importlib.util.find_spec("sentence_transformers") is not None


def available_tools(names: Sequence[str], limits: Limits) -> tuple[str, ...]:
    """``names`` without the tools that cannot run under ``limits`` (today: :data:`EHR_SEMANTIC_TOOL`
    without its model or extra), order kept."""
    return tuple(n for n in names if n != EHR_SEMANTIC_TOOL or semantic_available(limits))


@tool(EHR_SEMANTIC_TOOL)
def get_candidates_by_semantic_similarity(
    ctx: ToolContext, table_name: str, query: str | list[str]
) -> ToolResult:
    """The candidates closest in meaning to each query (cosine similarity of sentence embeddings).

    Needs the optional [semantic] extra and a local sentence-transformers model
    (Limits.semantic_model_path). Per query at most candidate_top_k results (5 by default)
    with similarity >= semantic_min_score (0.5 by default).

    Args:
        table_name: a candidate table, e.g. 'diagnoses_ccs_candidates'.
        query: one query or a list of queries.
    """
    path = ctx.limits.semantic_model_path
    if not path:
        raise ToolError(
            "not_enabled",
            "semantic search is not enabled: install 'clinseek[semantic]' and give a local "
            "sentence-transformers model directory (Limits.semantic_model_path / --semantic-model); "
            "use ehr.get_candidates_by_fuzzy_matching or ehr.get_candidates_by_keyword instead",
        )
    queries = _as_list(query, "query")
    qualified, choices = _candidates(ctx, table_name)
    try:
        encode = load_encoder(path)
    except MissingExtraError as err:
        raise ToolError("missing_extra", f"{err}; use ehr.get_candidates_by_fuzzy_matching instead") from None
    matrix = _embed_candidates(path, tuple(choices))
    scores = np.asarray(encode(queries)) @ matrix.T if choices else np.zeros((len(queries), 0))
    results: dict[str, list[tuple[str, float]]] = {}
    for q, row in zip(queries, scores, strict=True):
        order = np.argsort(-row)[: ctx.limits.candidate_top_k]
        results[q] = [
            (choices[i], round(float(row[i]), 3)) for i in order if row[i] >= ctx.limits.semantic_min_score
        ]
    return _ranked(qualified, results, "cosine", f"cosine >= {ctx.limits.semantic_min_score:g}", ctx)


@functools.lru_cache(maxsize=4)
def load_encoder(path: str) -> Encoder:
    """A sentence-transformers encoder loaded once per process from the local ``path``.

    Raises:
        MissingExtraError: sentence-transformers is not installed (extra ``semantic``).
    """
    st = import_optional("sentence_transformers", "ehr.get_candidates_by_semantic_similarity", extra="semantic")
    model = st.SentenceTransformer(path, local_files_only=True)

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)

    return encode


@functools.lru_cache(maxsize=32)
def _embed_candidates(path: str, choices: Sequence[str]) -> Any:
    if not choices:
        return np.zeros((0, 1))
    return np.asarray(load_encoder(path)(list(choices)))
