"""Tool-argument fuzz: whatever a model sends, every registered tool answers with a result.

Each argument of every tool in the registry (EHR, browser, imaging; all live: a real episode, a
knowledge source and the linked CXR images attached) is replaced in turn by hostile values: wrong
types, extreme and malformed dates (9999-12-31, 0001-01-01, 2150-02-30), huge, negative and
non-finite numbers, empty and enormous strings, unicode and control characters; then random
combinations of them, and whole argument payloads that are not objects. A call may fail only as a
structured :class:`~clinseek.tools.ToolResult` (``ok=False``, a ToolError kind): an exception would
end the question as an infrastructure error because of what the model sent.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from clinseek.tools import ToolContext, ToolResult, call_tool, get_tool, tool_names

HOSTILE: tuple[Any, ...] = (
    None,
    "",
    " ",
    "9999-12-31",
    "9999-12-31 23:59:59",
    "0001-01-01",
    "0000-00-00",
    "2150-02-30",
    "2150-13-01 25:61:61",
    "-infinity",
    "infinity",
    "NaN",
    "1e309",
    "-1",
    "99999999999999999999999",
    0,
    -1,
    -(2**63),
    2**63,
    10**40,
    1e308,
    -1e308,
    float("inf"),
    float("-inf"),
    float("nan"),
    True,
    [],
    ["a", 1, None],
    {},
    {"a": {"b": [1]}},
    "🩺💉 naïve 名前 \u202e\u200b",
    "\x00\x01\x1b[31m",
    "' OR 1=1; DROP TABLE x; --",
    "%s %n {0} ${x}",
    "x" * 100_000,
)
"""Values a model (or a broken provider decoder) can put in any argument (JSON allows Infinity/NaN)."""

PAYLOADS: tuple[Any, ...] = ("", "{}", "[]", "null", "not json", '{"a": ', "[1, 2]", 7, [1], {"": None})


def _valid(name: str, ctx: ToolContext, dicom_id: str) -> dict[str, Any]:
    """A plausible, valid call of tool ``name`` (the baseline each argument is fuzzed from)."""
    cutoff = ctx.episode.key.prediction_time
    by_arg = {
        "table_name": "labevents",
        "column_name": "itemid",
        "keyword": "glucose",
        "keywords": ["glucose"],
        "value": "50912",
        "start_time": (cutoff - dt.timedelta(days=3)).isoformat(sep=" "),
        "end_time": cutoff.isoformat(sep=" "),
        "sql_query": "SELECT count(*) FROM labevents",
        "response": ["yes"],
        "query": "potassium",
        "pattern": "potassium",
        "dicom_path": dicom_id,
        "image_path": dicom_id,
        "phrase": "pleural effusion",
    }
    if name.startswith("ehr.get_candidates"):
        by_arg["table_name"] = next(iter(ctx.candidates), "x") + "_candidates"
    spec = get_tool(name)
    return {a: by_arg[a] for a, f in spec.arguments.model_fields.items() if f.is_required() and a in by_arg}


def _call(ctx: ToolContext, name: str, arguments: Any) -> ToolResult:
    try:
        result = anyio.run(call_tool, ctx, name, arguments)
    except Exception as err:  # the failure this test exists to catch
        pytest.fail(f"{name}({str(arguments)[:200]}) raised {type(err).__name__}: {err}")
    assert isinstance(result, ToolResult)
    assert result.ok or result.error_kind, (name, arguments)
    return result


@pytest.fixture(scope="module")
def live_ctx(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ToolContext, str]]:
    """A multimodal episode of the synthetic store with every tool family attached: knowledge and images."""
    from clinseek.episode import MM_POLICY, EpisodeKey, build_episode
    from clinseek.imaging import CxrLocator, store_cxr_root
    from clinseek.knowledge import KnowledgeConfig, KnowledgeDocument, kb_url, open_knowledge
    from clinseek.schema import STUDY_TIME_SQL
    from clinseek.store import open_store
    from clinseek.tools import attach_browser, attach_imaging

    root = store_cxr_root(synthetic_store)
    assert root is not None
    sql = f"SELECT subject_id, study_id, {STUDY_TIME_SQL} AS t, dicom_id FROM cxr.metadata t ORDER BY ALL LIMIT 1"
    with open_store(synthetic_store).connect() as con:
        subject_id, study_id, taken, dicom_id = con.execute(sql).fetchone()  # type: ignore[misc]
    key = EpisodeKey(subject_id, taken + dt.timedelta(hours=1), MM_POLICY, study_ids=(study_id,), dicom_ids=(dicom_id,))
    docs = (KnowledgeDocument(kb_url("notes", "k"), "Potassium", "Potassium 3.5-5.0 mEq/L.", "notes"),)
    with build_episode(synthetic_store, key, candidates={"labevents": ["Glucose", "Potassium"]}) as episode:
        ctx = ToolContext(episode=episode, candidates={"labevents": ["Glucose", "Potassium"]})
        attach_browser(ctx, open_knowledge(KnowledgeConfig(bundled=False), docs))
        attach_imaging(ctx, CxrLocator((root,)), artifact_dir=tmp_path_factory.mktemp("artifacts"))
        yield ctx, dicom_id


def _fuzz_tool(ctx: ToolContext, dicom_id: str, name: str) -> None:
    valid = _valid(name, ctx, dicom_id)
    _call(ctx, name, valid)
    for argument in get_tool(name).arguments.model_fields:
        for value in HOSTILE:
            _call(ctx, name, {**valid, argument: value})
    _call(ctx, name, {**valid, "unexpected_argument": 1})
    for payload in PAYLOADS:
        _call(ctx, name, payload)


@pytest.mark.parametrize("name", tool_names())
def test_every_argument_of_every_tool_takes_hostile_values(live_ctx: tuple[ToolContext, str], name: str) -> None:
    ctx, dicom_id = live_ctx
    _fuzz_tool(ctx, dicom_id, name)


@pytest.mark.parametrize("name", [n for n in tool_names() if n.startswith("ehr.")])
def test_random_combinations_of_hostile_values(live_ctx: tuple[ToolContext, str], name: str) -> None:
    ctx, dicom_id = live_ctx
    rng = random.Random(name)
    fields = list(get_tool(name).arguments.model_fields)
    valid = _valid(name, ctx, dicom_id)
    for _ in range(40):
        chosen = rng.sample(fields, k=rng.randint(1, len(fields))) if fields else []
        _call(ctx, name, {**valid, **{a: rng.choice(HOSTILE) for a in chosen}})


def test_ehr_tools_take_hostile_values_on_the_mimic_demo(episode: Any) -> None:
    ctx = ToolContext(episode=episode, candidates={"labevents": ["Glucose"]})
    for name in tool_names():
        if name.startswith("ehr."):
            _fuzz_tool(ctx, "", name)


@pytest.mark.parametrize("end_time", ["9999-12-31", "9999-12-31 23:59:59", "0001-01-01"])
def test_extreme_windows_are_bad_arguments_or_empty_windows(episode: Any, end_time: str) -> None:
    ctx = ToolContext(episode=episode)
    for name in ("ehr.get_records_by_time", "ehr.get_event_counts_by_time"):
        args = {"table_name": "labevents", "start_time": "2100-01-01", "end_time": end_time}
        if name == "ehr.get_event_counts_by_time":
            del args["table_name"]
        result = _call(ctx, name, args)
        assert result.ok or result.error_kind == "bad_argument", result.content
