"""A benchmark run with its tool calls through MCP gives the direct path's tool outputs, byte for byte.

The same deterministic explorer model runs a small demo benchmark three times: tools in process,
through the SDK's in-memory client (``--tools mcp``) and through a ``clinseek mcp serve`` subprocess
per question (``--tools mcp-stdio``). Every message of every row (the tool outputs the model was shown,
refusals included) and every tool record but its wall time are the same; the manifest names the route.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

import clinseek
from clinseek.bench import Question, build_benchmark, load_questions
from clinseek.errors import ClinseekError
from clinseek.mcpserver import TASK_PROMPT, EpisodeSpec, McpTransport, open_spec, session_server
from clinseek.models import GenerateConfig, Message, ModelResponse, ToolCall, Usage
from clinseek.runner import ResultRow, RunOptions, RunSettings, read_results, run_benchmark

_PLAN: list[tuple[str, dict[str, Any]]] = [
    ("ehr.load_ehr", {}),
    ("ehr.get_table_names", {}),
    ("ehr.run_sql_query", {"sql_query": "SELECT itemid, count(*) AS n, max(charttime) AS last FROM hosp.labevents "
                                        "GROUP BY itemid ORDER BY n DESC, itemid LIMIT 5"}),
    ("ehr.get_latest_records", {"table_name": "labevents"}),
    ("ehr.get_event_counts_by_time", {"start_time": "1800-01-01", "end_time": "2300-01-01"}),
    ("ehr.run_sql_query", {"sql_query": "DROP TABLE hosp.patients"}),  # refused: the same error text
    ("ehr.get_column_names", {}),  # a bad argument
    ("ehr.no_such_tool", {}),  # not offered
]


class ExplorerModel:
    """Calls the tools of :data:`_PLAN` one per turn, then answers with the question's first candidate."""

    name = "fake:explorer"
    supports_native_tools = True

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn < len(_PLAN):
            name, args = _PLAN[turn]
            message = Message(role="assistant", content="", tool_calls=[ToolCall(id=f"c{turn}", name=name,
                                                                                  arguments=args)])
        else:
            message = Message(role="assistant", content="", tool_calls=[ToolCall(
                id="done", name="ehr.finish", arguments={"response": ["yes"]})])
        return ModelResponse(model=self.name, message=message, usage=Usage(input_tokens=10, output_tokens=5),
                             cost_usd=Decimal("0"), latency_s=0.0, stop_reason="tool_calls")

    async def aclose(self) -> None:
        pass


@pytest.fixture(scope="module")
def small_bench(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Question]]:
    out = tmp_path_factory.mktemp("mcp_bench") / "bench"
    build_benchmark(demo_store, tasks=["Inpatient_Mortality", "omr"], per_task=2, seed=42, out=out)
    return out, load_questions(out)


def _run(questions: list[Question], store: Path, out: Path, transport: McpTransport | None) -> tuple[list[ResultRow], Path]:
    settings = RunSettings(run=RunOptions(concurrency=2, tool_transport=transport))
    summary = anyio.run(lambda: run_benchmark(questions, store, "agent", ExplorerModel(), out, settings=settings)).runs[0]
    rows = sorted(read_results(Path(summary.out_dir) / "results.jsonl").rows, key=lambda r: r.qid)
    return rows, Path(summary.out_dir)


def _tool_records(row: ResultRow) -> list[dict[str, Any]]:
    return [t.model_dump(exclude={"elapsed_s"}) for t in row.tools]


def _same_as_direct(direct: list[ResultRow], other: list[ResultRow]) -> None:
    assert [r.qid for r in other] == [r.qid for r in direct]
    for want, got in zip(direct, other, strict=True):
        assert json.dumps(got.messages, sort_keys=True) == json.dumps(want.messages, sort_keys=True), want.qid
        assert _tool_records(got) == _tool_records(want), want.qid
        assert (got.status, got.answer) == (want.status, want.answer)


@pytest.mark.slow
def test_tool_outputs_are_byte_identical_through_mcp(small_bench: Any, demo_store: Path, tmp_path: Path) -> None:
    _, questions = small_bench
    direct, direct_dir = _run(questions, demo_store, tmp_path / "direct", None)
    assert all([t.name for t in r.tools[:len(_PLAN)]] == [n for n, _ in _PLAN] for r in direct)
    shown = [m["content"] for r in direct for m in r.messages if m["role"] == "tool"]
    assert any(s.startswith("Error (read_only)") for s in shown) and any("unknown_tool" in s for s in shown)
    memory, memory_dir = _run(questions, demo_store, tmp_path / "memory", McpTransport(route="memory"))
    _same_as_direct(direct, memory)
    stdio, stdio_dir = _run(questions, demo_store, tmp_path / "stdio", McpTransport(route="stdio", store=demo_store))
    _same_as_direct(direct, stdio)
    manifests = [json.loads((d / "run_manifest.json").read_text()) for d in (direct_dir, memory_dir, stdio_dir)]
    assert [m.get("tool_transport") for m in manifests] == [
        None, {"kind": "mcp-memory", "external": []}, {"kind": "mcp-stdio", "external": []}]


def test_cli_tools_option_is_checked(small_bench: Any, demo_store: Path, tmp_path: Path) -> None:
    from clinseek.cli import app

    bench, _ = small_bench
    for value, message in [("mcp-http", "expected direct, mcp, mcp-stdio or mcp+URL"), ("mcp", None)]:
        args = ["run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null", "--mode",
                "agent", "--out", str(tmp_path / value), "--tools", value, "--tools", "mcp-stdio"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.replace("│", " ").split())
        assert (message or "one route for our tools") in said, said


def test_a_benchmark_question_is_served_with_its_task_never_its_label(small_bench: Any, demo_store: Path) -> None:
    bench, questions = small_bench
    question = next(q for q in questions if q.task == "omr")

    async def main() -> None:
        async with await open_spec(EpisodeSpec(store=demo_store, bench=bench, qid=question.qid)) as served, \
                await clinseek.open_question_episode_async(bench, question.qid, demo_store) as direct, \
                Client(session_server(served)) as client:
            system = next(m.content for m in direct.messages if m.role == "system")
            assert client.server_info is not None and client.instructions == system
            assert [p.name for p in (await client.list_prompts()).prompts] == [TASK_PROMPT]
            prompt = await client.get_prompt(TASK_PROMPT)
            text = prompt.messages[0].content.text
            assert text == "\n\n".join(m.content for m in direct.messages if m.content)
            assert question.instruction in text
            loaded = (await client.call_tool("ehr.load_ehr", {})).structured_content["data"]
            assert (loaded["subject_id"], loaded["prediction_time"]) == (
                question.subject_id, question.prediction_time.isoformat(sep=" "))
            assert "label" not in text.lower() + json.dumps(loaded)  # the turns of an agent run: never the label

    anyio.run(main)


class _AsksTheGuideline:
    """Calls the external ``guidelines.lookup`` tool once, then finishes."""

    name = "fake:guideline"
    supports_native_tools = True

    def __init__(self) -> None:
        self.offered: list[str] = []

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        self.offered = [t["function"]["name"] for t in tools]
        turn = sum(1 for m in messages if m.role == "assistant")
        call = (ToolCall(id="g", name="guidelines.lookup", arguments={"term": "sepsis"}) if turn == 0 else
                ToolCall(id="done", name="ehr.finish", arguments={"response": ["yes"]}))
        return ModelResponse(model=self.name, message=Message(role="assistant", content="", tool_calls=[call]),
                             usage=Usage(input_tokens=10, output_tokens=5), cost_usd=Decimal("0"), latency_s=0.0,
                             stop_reason="tool_calls")

    async def aclose(self) -> None:
        pass


def test_an_external_servers_tools_are_offered_beside_ours_and_recorded(small_bench: Any, demo_store: Path,
                                                                         tmp_path: Path) -> None:
    from _mcp_helpers import http_server
    from mcp.server.mcpserver import MCPServer

    external = MCPServer("guidelines")

    @external.tool(name="guidelines.lookup", description="A guideline's summary for a term.")
    def lookup(term: str) -> str:
        return f"Guideline for {term}: start antibiotics within the hour."

    _, questions = small_bench
    question = next(q for q in questions if q.task_type == "risk_prediction")
    model = _AsksTheGuideline()
    with http_server(external.streamable_http_app()) as url:
        transport = McpTransport(route="memory", external=(url,))
        settings = RunSettings(run=RunOptions(concurrency=1, tool_transport=transport))
        summary = anyio.run(lambda: run_benchmark([question], demo_store, "agent", model, tmp_path,
                                                  settings=settings)).runs[0]
        clash = MCPServer("clash")
        clash.tool(name="ehr.think")(lookup)
        with http_server(clash.streamable_http_app()) as clash_url:
            bad = RunSettings(run=RunOptions(tool_transport=McpTransport(route="memory", external=(url, clash_url))))
            with pytest.raises(ClinseekError, match=r"tool 'ehr.think' of MCP server .* is also offered by clinseek"):
                anyio.run(lambda: run_benchmark([question], demo_store, "agent", _AsksTheGuideline(),
                                                tmp_path / "clash", settings=bad))
    (row,) = read_results(Path(summary.out_dir) / "results.jsonl").rows
    assert "guidelines.lookup" in model.offered and "ehr.run_sql_query" in model.offered
    shown = [m["content"] for m in row.messages if m["role"] == "tool"]
    assert shown[0] == "Guideline for sepsis: start antibiotics within the hour."
    manifest = json.loads((Path(summary.out_dir) / "run_manifest.json").read_text())
    assert manifest["tool_transport"] == {"kind": "mcp-memory", "external": [{"url": url, "tools": ["guidelines.lookup"]}]}
    assert not (tmp_path / "clash").exists(), "refused before any row"
