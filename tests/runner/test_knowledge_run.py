"""The browser tools in agent runs: real results from the offline index, recorded in the manifest,
one browser per episode, and none offered with ``--knowledge off``.

The offline index of the synthetic store is built once per session in ``$CLINSEEK_CACHE_DIR``
(tests/conftest.py); every run here, and ``clinseek run`` with its default cache, loads it from there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.errors import ClinseekError
from clinseek.knowledge import Knowledge, KnowledgeConfig
from clinseek.models import GenerateConfig, Message, ModelResponse, ToolCall, Usage
from clinseek.runner import ModelSettings, RunOptions, RunSettings, Sources, read_results, run_benchmark
from clinseek.tools import BROWSER_TOOLS, EHR_SEMANTIC_TOOL, EHR_TOOLS
from fakes.llm_servers import OpenAIFake, RecordedRequest, Reply


@pytest.fixture(scope="module")
def kb_config(knowledge_cache: Path, synthetic_store: Path) -> KnowledgeConfig:
    """What ``clinseek run --store <synthetic>`` opens by default (same cache, same corpus version)."""
    return KnowledgeConfig(cache_dir=knowledge_cache, store=synthetic_store)


@pytest.fixture(scope="module")
def kb(kb_config: KnowledgeConfig) -> Knowledge:
    from clinseek.bench import TEXT_TASKS
    from clinseek.knowledge import open_knowledge, task_documents

    return open_knowledge(kb_config, task_documents(TEXT_TASKS))


@pytest.fixture(scope="module")
def risk_questions(synthetic_bench) -> list:
    _, questions = synthetic_bench
    return [q for q in questions if q.task_type == "risk_prediction"]


def _browse_and_finish(server: OpenAIFake):
    """search → open the first result → find "CCS" in it → ehr.finish, one step per request."""
    steps = [
        [("browser__search", {"query": "ICD-10 I50.23 congestive heart failure", "topn": 5})],
        [("browser__open", {"id": 0})],
        [("browser__find", {"pattern": "CCS"})],
        [("ehr__finish", {"response": ["no"]})],
    ]

    def respond(request: RecordedRequest) -> Reply:
        done = sum(m["role"] == "tool" for m in request.json["messages"])
        return server.tool_calls(steps[min(done, len(steps) - 1)])

    return respond


def _tool_text(row, name: str) -> str:
    calls = {c["id"]: c["name"] for m in row.messages for c in m.get("tool_calls", [])}
    return next(m["content"] for m in row.messages if m["role"] == "tool" and calls.get(m["tool_call_id"]) == name)


def test_model_browses_the_offline_index_over_real_http(
    risk_questions, synthetic_store: Path, kb_config: KnowledgeConfig, kb: Knowledge, tmp_path: Path,
    openai_server: OpenAIFake,
) -> None:
    openai_server.responder = _browse_and_finish(openai_server)
    settings = RunSettings(model=ModelSettings(base_url=openai_server.url, generate=GenerateConfig(timeout_s=5.0)), run=RunOptions(concurrency=1), sources=Sources(knowledge=kb_config))
    run = anyio.run(lambda: run_benchmark(risk_questions[:1], synthetic_store, "agent", "openai:gpt-test", tmp_path,
                                          settings=settings)).runs[0]
    (row,) = read_results(Path(run.out_dir) / "results.jsonl").rows
    assert row.status == "answered" and row.answer == ["no"]
    assert [(t.name, t.ok) for t in row.tools] == [("browser.search", True), ("browser.open", True),
                                                   ("browser.find", True), ("ehr.finish", True)]
    assert "【0†ICD-10-CM I50.23: Acute on chronic systolic" in _tool_text(row, "browser.search")
    assert "CCS category 108: 【0†Congestive heart failure; nonhypertensive" in _tool_text(row, "browser.open")
    assert "Matches for 'CCS'" in _tool_text(row, "browser.find")
    offered = [t["function"]["name"] for t in openai_server.requests[0].json["tools"]]
    assert {"browser__search", "browser__open", "browser__find"} <= set(offered)
    system = openai_server.requests[0].json["messages"][0]["content"]
    assert "browser.search" in system  # the system prompt says what the browser is for

    manifest = json.loads((Path(run.out_dir) / "run_manifest.json").read_text())
    # the semantic candidate tool is offered only with its model and extra (none here)
    assert set(manifest["tools"][:15]) == set(EHR_TOOLS) - {EHR_SEMANTIC_TOOL}
    assert manifest["tools"][15:] == list(BROWSER_TOOLS)
    knowledge = manifest["knowledge"]
    assert knowledge["backend"] == "offline" and knowledge["corpus_version"] == kb.describe()["corpus_version"]
    assert knowledge["documents"] > 90_000 and knowledge["deny"] and knowledge["store"] == str(synthetic_store)
    assert Path(knowledge["index_dir"]).is_dir()
    assert manifest["browser"]["max_calls"] == 40


class _TwoSearches:
    """Each conversation searches its own term, waits until every conversation has searched, then
    scrolls its page at cursor 0 and finishes: shared browser state would show the other's page."""

    supports_native_tools = True
    supports_vision = False

    def __init__(self, terms: dict[int, str]) -> None:
        self.name = "scripted:browser"
        self.terms = terms
        self.searched = 0
        self.all_searched = anyio.Event()

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        subject = next(s for s in self.terms if f"Patient Subject ID: {s}" in messages[1].content)
        turn = sum(m.role == "assistant" for m in messages)
        if turn == 0:
            call = ToolCall(id="s", name="browser.search", arguments={"query": self.terms[subject]})
        elif turn == 1:
            self.searched += 1
            if self.searched == len(self.terms):
                self.all_searched.set()
            with anyio.fail_after(30):  # both episodes must be in flight at once (concurrency 2)
                await self.all_searched.wait()
            call = ToolCall(id="o", name="browser.open", arguments={"cursor": 0})
        else:
            call = ToolCall(id="f", name="ehr.finish", arguments={"response": ["no"]})
        message = Message(role="assistant", content="", tool_calls=[call])
        return ModelResponse(model=self.name, message=message, usage=Usage(input_tokens=1, output_tokens=1),
                             cost_usd=Decimal(0), latency_s=0.0, stop_reason="tool_calls")

    async def aclose(self) -> None:
        pass


def test_concurrent_episodes_keep_separate_browsers(risk_questions, synthetic_store: Path, kb: Knowledge,
                                                    tmp_path: Path) -> None:
    first, second = risk_questions[0], next(q for q in risk_questions if q.subject_id != risk_questions[0].subject_id)
    terms = {first.subject_id: "potassium reference range", second.subject_id: "septicemia CCS category"}
    model = _TwoSearches(terms)
    settings = RunSettings(run=RunOptions(concurrency=2), sources=Sources(knowledge=kb))
    run = anyio.run(lambda: run_benchmark([first, second], synthetic_store, "agent", model, tmp_path,
                                          settings=settings)).runs[0]
    rows = read_results(Path(run.out_dir) / "results.jsonl").rows
    assert len(rows) == 2 and all(r.status == "answered" for r in rows)
    for row in rows:
        own, other = terms[row.subject_id], next(t for s, t in terms.items() if s != row.subject_id)
        page = _tool_text(row, "browser.open")
        assert page.startswith(f"[0] Search results: {own}") and other not in page
        search = next(t for t in row.tools if t.name == "browser.search")
        assert search.ok


def test_knowledge_off_offers_no_browser_tools(synthetic_bench, synthetic_store: Path, tmp_path: Path) -> None:
    bench, _ = synthetic_bench
    result = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(synthetic_store), "--model", "baseline:evidence",
        "--mode", "agent", "--out", str(tmp_path), "--tasks", "Inpatient_Mortality", "--no-progress",
        "--knowledge", "off",
    ])
    assert result.exit_code == 0, result.output
    (manifest_path,) = (tmp_path / "clinseek-bench-text" / "agent").glob("*/run_manifest.json")
    manifest = json.loads(manifest_path.read_text())
    assert not set(BROWSER_TOOLS) & set(manifest["tools"]) and manifest["knowledge"] is None
    (row,) = read_results(manifest_path.parent / "results.jsonl").rows
    assert "browser" not in row.messages[0]["content"]


def test_baselines_default_to_no_browser_and_models_to_the_offline_index(
    synthetic_bench, synthetic_store: Path, tmp_path: Path
) -> None:
    from clinseek.cli._run import _default_knowledge, _Knowledge

    assert _default_knowledge("openai:gpt-5.1") is _Knowledge.offline
    assert _default_knowledge("baseline:evidence") is _Knowledge.off  # never browses; no index built for it
    bench, _ = synthetic_bench
    result = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(synthetic_store), "--model", "baseline:null",
        "--mode", "agent", "--out", str(tmp_path), "--tasks", "Inpatient_Mortality", "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    (manifest_path,) = (tmp_path / "clinseek-bench-text" / "agent").glob("*/run_manifest.json")
    assert json.loads(manifest_path.read_text())["knowledge"] is None


def test_clinseek_run_offline_uses_the_cached_index(synthetic_bench, synthetic_store: Path, kb: Knowledge,
                                                    knowledge_cache: Path, tmp_path: Path) -> None:
    bench, _ = synthetic_bench
    result = CliRunner().invoke(app, [
        "run", "--bench", str(bench), "--store", str(synthetic_store), "--model", "baseline:evidence",
        "--mode", "both", "--out", str(tmp_path), "--tasks", "Inpatient_Mortality", "--no-progress",
        "--knowledge", "offline",
    ])
    assert result.exit_code == 0, result.output
    agent = json.loads(next((tmp_path / "clinseek-bench-text" / "agent").glob("*/run_manifest.json")).read_text())
    assert agent["tools"][15:] == list(BROWSER_TOOLS)  # 15 EHR tools: no semantic model here
    assert agent["knowledge"]["corpus_version"] == kb.describe()["corpus_version"]  # loaded, not rebuilt elsewhere
    assert agent["knowledge"]["index_dir"].startswith(str(knowledge_cache))
    curated = json.loads(next((tmp_path / "clinseek-bench-text" / "curated").glob("*/run_manifest.json")).read_text())
    assert curated["tools"] == [] and curated["knowledge"] is None


def test_browser_tools_without_a_knowledge_source_are_refused(risk_questions, synthetic_store: Path,
                                                              tmp_path: Path) -> None:
    settings = RunSettings(run=RunOptions(tools=(*EHR_TOOLS, "browser.search")))
    with pytest.raises(ClinseekError, match="no knowledge source"):
        anyio.run(lambda: run_benchmark(risk_questions[:1], synthetic_store, "agent", "baseline:null", tmp_path,
                                        settings=settings))


def test_knowledge_changes_the_configuration_hash(risk_questions, synthetic_store: Path, kb: Knowledge,
                                                  tmp_path: Path) -> None:
    def run(knowledge: Knowledge | None) -> str:
        summary = anyio.run(lambda: run_benchmark(risk_questions[:1], synthetic_store, "agent", "baseline:null",
                                                  tmp_path / str(knowledge is None), settings=RunSettings(sources=Sources(knowledge=knowledge))))
        return read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows[0].config_hash

    assert run(kb) != run(None)
