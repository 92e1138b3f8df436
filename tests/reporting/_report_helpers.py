"""Fabricated runner result folders for report tests: real ResultRow / RunManifest files on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clinseek.agent import CallRecord, ToolRecord, UsageTotals
from clinseek.runner import ResultRow, RunManifest, model_slug

BENCH = "synthetic-bench"
SYSTEM = "You are a clinical research assistant. " * 20


def agent_messages(qid: str, output: str, image: Path | None = None) -> list[dict[str, Any]]:
    """A three-turn agent trajectory: load_ehr, one SQL query (returning ``output``), finish."""
    user: dict[str, Any] = {"role": "user", "content": f"<task_instruction>question {qid}</task_instruction>"}
    if image is not None:
        user["images"] = [{"path": str(image)}]
    return [
        {"role": "system", "content": SYSTEM},
        user,
        {"role": "assistant", "reasoning": "Load the record first.",
         "tool_calls": [{"id": "c1", "name": "ehr.load_ehr", "arguments": {"subject_id": 1, "timestamp": "2150-01-01"}}]},
        {"role": "tool", "content": "EHR loaded", "tool_call_id": "c1", "name": "ehr.load_ehr"},
        {"role": "assistant", "content": "Now the labs.",
         "tool_calls": [{"id": "c2", "name": "ehr.run_sql_query", "arguments": {"sql_query": "SELECT 1"}}]},
        {"role": "tool", "content": output, "tool_call_id": "c2", "name": "ehr.run_sql_query"},
        {"role": "assistant", "tool_calls": [{"id": "c3", "name": "ehr.finish", "arguments": {"response": ["yes"]}}]},
        {"role": "tool", "content": "Final answer recorded.", "tool_call_id": "c3", "name": "ehr.finish"},
    ]


def result_row(qid: str, mode: str, model: str, *, gold: list[str], answer: list[str] | None,
               status: str = "answered", task: str = "ED_Hospitalization", task_type: str = "risk_prediction",
               category: str = "escalation_of_care", output: str = "f\n1", image: Path | None = None,
               bench: str = BENCH, cost_usd: float | None = 0.01) -> ResultRow:
    """One result row; agent rows carry a three-turn trajectory with call and tool records."""
    agent = mode == "agent"
    messages = agent_messages(qid, output, image) if agent else [
        {"role": "system", "content": "You are a clinical expert."},
        {"role": "user", "content": "## Patient Demographics\n- gender: F"},
        {"role": "assistant", "content": f"<answer>{'; '.join(answer or [])}</answer>"},
    ]
    calls = [CallRecord(turn=t, latency_s=0.5 * t, input_tokens=100 * t, output_tokens=10 * t, cost_usd=0.001)
             for t in range(1, 4 if agent else 2)]
    tools = [ToolRecord(turn=1, name="ehr.load_ehr", ok=True, elapsed_s=0.01, output_chars=10),
             ToolRecord(turn=2, name="ehr.run_sql_query", ok=True, elapsed_s=0.25, output_chars=len(output), truncated=True),
             ToolRecord(turn=3, name="ehr.finish", ok=True, elapsed_s=0.0, output_chars=22)] if agent else []
    return ResultRow(
        qid=qid, run_index=0, session_id=f"{qid}__run_0__abcdef12", benchmark=bench, task=task, task_type=task_type,
        category=category, mode=mode, model=model, config_hash="abc", prompt_version="p1", policy_version="v1",
        status=status, completed=status == "answered", stop_reason="finish_tool_call" if agent else "answer_block",
        error="boom" if status == "infra_error" else None, answer=answer, gold=gold, candidates=["yes", "no"],
        subject_id=1, prediction_time="2150-01-01 00:00:00", messages=messages,
        usage=UsageTotals(input_tokens=600 if agent else 100, output_tokens=60 if agent else 10),
        cost_usd=cost_usd, latency_s=2.0 if agent else 0.5, turns=3 if agent else 1,
        tool_calls={"ehr.load_ehr": 1, "ehr.run_sql_query": 1, "ehr.finish": 1} if agent else {},
        calls=calls, tools=tools,
    )


def write_run(root: Path, rows: list[ResultRow], *, bench: str = BENCH) -> Path:
    """Write ``rows`` (one mode, one model) as ``root/<bench>/<mode>/<slug>/results.jsonl`` + manifest."""
    mode, model = rows[0].mode, rows[0].model
    folder = root / bench / mode / model_slug(model)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    manifest = RunManifest(benchmark=bench, mode=mode, model=model, config_hash="abc", prompt_version="p1",  # type: ignore[arg-type]
                           policy_versions=["v1"], code_version="0.1.0", git_commit="0123456789abcdef", seed=3,
                           runs_per_question=1, questions=len(rows), concurrency=1, budget={}, limits={},
                           generate={}, retry={}, tools=["ehr.load_ehr"], response_cache=False)
    (folder / "run_manifest.json").write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return folder


QUESTIONS = [  # qid, gold, agent answer, curated answer, agent status
    ("q1", ["yes"], ["yes"], ["no"], "answered"),
    ("q2", ["no"], ["yes"], ["no"], "answered"),
    ("q3", ["yes"], None, ["yes"], "no_answer"),
    ("q10", ["no"], None, ["no"], "infra_error"),
]


def write_fabricated(root: Path, model: str = "openai:gpt-x", *, output: str = "f\n1",
                     image: Path | None = None, modes: tuple[str, ...] = ("agent", "curated")) -> Path:
    """Four questions (right, wrong, invalid, infra error for the agent) in the given modes under ``root``."""
    for mode in modes:
        rows = [result_row(qid, mode, model, gold=gold, answer=agent if mode == "agent" else curated,
                           status=status if mode == "agent" else "answered", output=output,
                           image=image if qid == "q1" else None)
                for qid, gold, agent, curated, status in QUESTIONS]
        write_run(root, rows)
    return root


def open_offline(browser: Any, path: Path) -> Iterator[Any]:
    """``path`` opened in a new page with every non-file request refused and recorded; after the test, no
    script error and no network request."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.outside: list[str] = []  # type: ignore[attr-defined]
    page.errors: list[str] = []  # type: ignore[attr-defined]

    def guard(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            page.outside.append(url)
            route.abort()

    page.route("**/*", guard)
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    yield page
    assert page.errors == [], f"script errors: {page.errors}"
    assert page.outside == [], f"the page asked the network for {page.outside}"
    context.close()
