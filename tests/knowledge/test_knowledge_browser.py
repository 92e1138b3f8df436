"""The browser tools: numbered links, pages as numbered lines, cursors, find, budgets, per-episode isolation."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from clinseek.knowledge import Knowledge
from clinseek.tools import (
    BROWSER_TOOLS,
    PageBrowser,
    PageBrowserLimits,
    ToolContext,
    ToolResult,
    attach_browser,
    call_tool,
    tool_names,
    tool_schemas,
)


def _ctx(knowledge: Knowledge, **limits: Any) -> ToolContext:
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]  # the browser never reads the episode
    attach_browser(ctx, knowledge, PageBrowserLimits(**limits))
    return ctx


def _call(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return anyio.run(call_tool, ctx, name, args)


def test_the_three_tools_are_registered_with_the_reference_arguments() -> None:
    assert tool_names("browser") == BROWSER_TOOLS == ("browser.search", "browser.open", "browser.find")
    params = {s["function"]["name"]: s["function"]["parameters"]["properties"] for s in tool_schemas(BROWSER_TOOLS)}
    assert set(params["browser.search"]) == {"query", "topn"}
    assert {"id", "cursor", "loc", "num_lines", "view_source", "source"} == set(params["browser.open"])
    assert set(params["browser.find"]) == {"pattern", "cursor"}


def test_search_lists_numbered_links_as_a_page(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    result = _call(ctx, "browser.search", query="potassium protocol", topn=2)
    assert result.ok and result.data["cursor"] == 0
    lines = result.content.splitlines()
    assert lines[0].startswith("[0] Search results: potassium protocol (")
    assert lines[1].startswith("**viewing lines [0 - ")
    assert "L2: 【0†Potassium protocol†clinseek-kb】" in result.content
    assert result.data["results"][0]["url"] == "clinseek-kb://notes/potassium"
    assert len(result.data["results"]) <= 2


def test_open_follows_a_link_and_pushes_a_new_cursor(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    _call(ctx, "browser.search", query="potassium protocol")
    page = _call(ctx, "browser.open", id=0)
    assert page.ok and page.data["cursor"] == 1 and page.data["url"] == "clinseek-kb://notes/potassium"
    assert page.content.splitlines()[0] == "[1] Potassium protocol (clinseek-kb://notes/potassium)"
    assert "L0: Line 0: potassium replacement protocol step 0 for adults." in page.content
    assert page.data["total_lines"] == 200 and page.data["lines"][0] == 0
    assert page.data["lines"][1] < 199  # one view (view_chars) shows part of the page ...
    assert f"of {page.data['total_lines'] - 1}**" in page.content  # ... and the scrollbar says how much


def test_scrolling_with_loc_and_num_lines_keeps_the_cursor(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    _call(ctx, "browser.open", id="clinseek-kb://notes/potassium")
    view = _call(ctx, "browser.open", cursor=0, loc=150, num_lines=3)
    assert view.data["cursor"] == 0 and view.data["lines"] == [150, 152]
    body = [ln for ln in view.content.splitlines() if ln.startswith("L")]
    assert body == [f"L{i}: Line {i}: potassium replacement protocol step {i} for adults." for i in (150, 151, 152)]
    assert isinstance(ctx.state["browser"], PageBrowser) and ctx.state["browser"].pages[0].url == "clinseek-kb://notes/potassium"


def test_a_link_inside_a_page_is_numbered_and_followed(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    first = _call(ctx, "browser.open", id="clinseek-kb://notes/sodium")
    assert "【0†potassium protocol†clinseek-kb】" in first.content
    followed = _call(ctx, "browser.open", id="0")  # a numeric string is a link id, as in the reference
    assert followed.data["url"] == "clinseek-kb://notes/potassium" and followed.data["cursor"] == 1


def test_find_lists_matches_and_links_to_each_line(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    _call(ctx, "browser.open", id="clinseek-kb://notes/potassium")
    found = _call(ctx, "browser.find", pattern="STEP 17 ")
    assert found.ok and found.data["matches"] == 1 and found.data["cursor"] == 1
    assert "【0†match at L17†clinseek-kb】" in found.content
    jump = _call(ctx, "browser.open", id=0)
    assert jump.data["cursor"] == 0 and jump.data["lines"][0] == 17  # back to the page, at the match


def test_find_caps_its_matches_and_says_when_none(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge, find_max_hits=5)
    _call(ctx, "browser.open", id="clinseek-kb://notes/potassium")
    many = _call(ctx, "browser.find", pattern="potassium")
    assert many.data["matches"] == 5
    none = _call(ctx, "browser.find", pattern="vancomycin", cursor=0)
    assert none.ok and none.data["matches"] == 0 and "No matches" in none.content
    assert len(ctx.state["browser"].pages) == 2  # no page for an empty find


@pytest.mark.parametrize(
    ("name", "args", "kind", "words"),
    [
        ("browser.open", {"id": 3}, "bad_argument", "no page is open"),
        ("browser.find", {"pattern": "x"}, "bad_argument", "no page is open"),
        ("browser.search", {"query": "  "}, "bad_argument", "empty"),
        ("browser.open", {"id": "clinseek-kb://notes/nothing"}, "not_found", "no page"),
        ("browser.open", {"id": "https://example.org/"}, "not_found", "no web access"),
        ("browser.open", {"id": "file:///etc/passwd"}, "not_found", "no page"),
        ("browser.open", {"id": "clinseek-kb://notes/sodium", "source": "serper"}, "bad_argument", "source"),
        ("browser.open", {"id": "https://huggingface.co/datasets/UCSC-VLAA/ClinSeek-Bench"}, "blocked", "deny list"),
        ("browser.search", {"query": "sodium", "topn": "many"}, "bad_argument", "topn"),
    ],
)
def test_bad_calls_are_model_visible_errors(
    small_knowledge: Knowledge, name: str, args: dict[str, Any], kind: str, words: str
) -> None:
    result = _call(_ctx(small_knowledge), name, **args)
    assert not result.ok and result.error_kind == kind and words in result.content


def test_bad_cursor_link_and_line_name_what_exists(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    _call(ctx, "browser.open", id="clinseek-kb://notes/sepsis")
    assert "cursors 0-0" in _call(ctx, "browser.open", cursor=4, loc=0).content
    assert "has no links" in _call(ctx, "browser.open", id=2).content
    past = _call(ctx, "browser.open", cursor=0, loc=99)
    assert past.error_kind == "bad_argument" and "2 lines (L0-L1)" in past.content


def test_view_source_shows_the_raw_text(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)
    raw = _call(ctx, "browser.open", id="clinseek-kb://notes/sodium", view_source=True)
    assert "[potassium protocol](clinseek-kb://notes/potassium)" in raw.content
    assert raw.data["url"] == "view-source:clinseek-kb://notes/sodium"


def test_the_call_budget_is_announced_and_then_enforced(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge, max_calls=2)
    assert "[this was" not in _call(ctx, "browser.search", query="sodium").content
    last = _call(ctx, "browser.search", query="sepsis")
    assert last.ok and "last of 2 browser calls" in last.content
    over = _call(ctx, "browser.open", id=0)
    assert not over.ok and over.error_kind == "limit" and "all 2 browser calls" in over.content


def test_the_character_budget_cuts_a_view_with_a_notice(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge, max_chars=1_500, view_chars=1_200)
    first = _call(ctx, "browser.open", id="clinseek-kb://notes/potassium")
    assert first.ok and not first.truncated
    second = _call(ctx, "browser.open", cursor=0, loc=40)
    assert second.truncated and "browser output limit of 1,500 characters" in second.content
    assert len(second.content) < 1_200
    third = _call(ctx, "browser.open", cursor=0, loc=80)
    assert third.error_kind == "limit"


def test_num_lines_beyond_one_view_is_cut_and_flagged(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge, view_chars=600)
    view = _call(ctx, "browser.open", id="clinseek-kb://notes/potassium", num_lines=100)
    assert view.truncated and view.data["lines"][1] < 99


def test_episodes_have_separate_browsers(small_knowledge: Knowledge) -> None:
    a, b = _ctx(small_knowledge), _ctx(small_knowledge)
    _call(a, "browser.open", id="clinseek-kb://notes/potassium")
    _call(a, "browser.search", query="sodium")
    assert _call(b, "browser.open", cursor=0, loc=0).error_kind == "bad_argument"  # b has no pages
    own = _call(b, "browser.open", id="clinseek-kb://notes/sepsis")
    assert own.data["cursor"] == 0  # b's cursors start at 0, whatever a did
    assert a.state["browser"].calls == 2 and b.state["browser"].calls == 2


def test_parallel_calls_in_one_episode_get_distinct_cursors(small_knowledge: Knowledge) -> None:
    ctx = _ctx(small_knowledge)

    async def many() -> list[ToolResult]:
        out: list[ToolResult] = []

        async def one(q: str) -> None:
            out.append(await call_tool(ctx, "browser.search", {"query": q}))

        async with anyio.create_task_group() as tg:
            for q in ["sodium", "sepsis", "potassium", "lactate"] * 3:
                tg.start_soon(one, q)
        return out

    results = anyio.run(many)
    assert sorted(r.data["cursor"] for r in results) == list(range(12))


def test_without_a_knowledge_source_the_tools_say_so() -> None:
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]
    result = _call(ctx, "browser.search", query="sodium")
    assert result.error_kind == "unavailable"
