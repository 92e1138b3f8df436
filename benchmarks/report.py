"""HTML report size and speed on a fabricated full-size run (default: 3,000 questions × 2 models × 2 modes).

Fabricates result rows in the runner's format (``ResultRow``, validated; agent rows with 6-14 turns,
tool outputs of 0.2-4 k characters, curated rows with a 20 k-character evidence package), scores them
with ``clinseek.scoring``, writes the report, then opens it in headless Chromium (Debian's
``/usr/bin/chromium`` driven by Playwright) and prints: the report's size, the seconds to score and
to write it, the seconds from navigation to an interactive page (the script sets
``body[data-ready]`` after filling the filters and the first page of questions), to filter to one
task, and to open one question's two trajectories, plus the page's DOM element count.

Run e.g. ``python benchmarks/report.py`` or ``--questions 500 --models 1``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from clinseek.agent import CallRecord, ToolRecord, UsageTotals
from clinseek.reporting import build_report, load_inputs
from clinseek.runner import ResultRow, RunManifest, model_slug
from clinseek.scoring import score_path, write_scores

BENCH = "clinseek-bench-text"
TASKS = [(f"task_{i:02d}", "risk_prediction" if i < 18 else "decision_making", f"category_{i % 13:02d}") for i in range(45)]
TOOLS = ["ehr.run_sql_query", "ehr.get_records_by_time", "ehr.get_candidates_by_keyword", "ehr.get_latest_records",
         "browser.search", "ehr.think"]
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]


def _text(rng: random.Random, chars: int) -> str:
    words = ["lactate", "2150-01-01 08:00:00", "mg/dL", "creatinine", "|", "NULL", "\n", "sepsis", "120", "WBC"]
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(words)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _agent(rng: random.Random, qid: str, answer: list[str]) -> tuple[list[dict[str, Any]], list[CallRecord], list[ToolRecord]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a clinical research assistant. " * 40},
                                      {"role": "user", "content": f"<task_instruction>{qid} " + _text(rng, 1200)}]
    calls, tools = [], []
    turns = rng.randint(6, 14)
    for turn in range(1, turns + 1):
        last = turn == turns
        name = "ehr.finish" if last else ("ehr.load_ehr" if turn == 1 else rng.choice(TOOLS))
        args: dict[str, Any] = {"response": answer} if last else {"sql_query": "SELECT * FROM hosp.labevents LIMIT 50"}
        messages.append({"role": "assistant", "content": _text(rng, 200), "reasoning": _text(rng, 400),
                         "tool_calls": [{"id": f"c{turn}", "name": name, "arguments": args}]})
        output = "Final answer recorded." if last else _text(rng, rng.randint(200, 4000))
        messages.append({"role": "tool", "content": output, "tool_call_id": f"c{turn}", "name": name})
        calls.append(CallRecord(turn=turn, latency_s=rng.uniform(0.5, 8), input_tokens=3000 * turn,
                                output_tokens=rng.randint(50, 600), cost_usd=0.003 * turn))
        tools.append(ToolRecord(turn=turn, name=name, ok=True, elapsed_s=rng.uniform(0.001, 0.5), output_chars=len(output)))
    return messages, calls, tools


def _row(rng: random.Random, i: int, mode: str, model: str, skill: float) -> ResultRow:
    task, task_type, category = TASKS[i % len(TASKS)]
    qid = f"q{i}"
    candidates = ["yes", "no"] if task_type == "risk_prediction" else [f"item {k}" for k in range(30)]
    gold = [rng.choice(candidates)] if task_type == "risk_prediction" else rng.sample(candidates, 4)
    answer = gold if rng.random() < skill else [rng.choice(candidates)]
    if mode == "agent":
        messages, calls, tools = _agent(rng, qid, answer)
    else:
        messages = [{"role": "system", "content": "You are a clinical expert."},
                    {"role": "user", "content": _text(rng, 20_000)},
                    {"role": "assistant", "content": "<answer>" + "\n".join(answer) + "</answer>"}]
        calls, tools = [CallRecord(turn=1, latency_s=rng.uniform(2, 20), input_tokens=6000, output_tokens=200,
                                   cost_usd=0.02)], []
    counts: dict[str, int] = {}
    for record in tools:
        counts[record.name] = counts.get(record.name, 0) + 1
    return ResultRow(qid=qid, run_index=0, session_id=f"{qid}__run_0__00000000", benchmark=BENCH, task=task,
                     task_type=task_type, category=category, mode=mode, model=model,  # type: ignore[arg-type]
                     config_hash="0" * 64, prompt_version="p1", policy_version="clinseek-text-v1", status="answered",
                     completed=True, stop_reason="finish_tool_call", answer=answer, gold=gold, candidates=candidates,
                     subject_id=10_000_000 + i, prediction_time="2150-01-01 08:00:00", messages=messages,
                     usage=UsageTotals(input_tokens=sum(c.input_tokens for c in calls),
                                       output_tokens=sum(c.output_tokens for c in calls)),
                     cost_usd=sum(c.cost_usd or 0 for c in calls), latency_s=sum(c.latency_s for c in calls),
                     turns=len(calls), tool_calls=counts, calls=calls, tools=tools)


def fabricate(root: Path, questions: int, models: int, seed: int = 0) -> int:
    """Write ``questions`` × ``models`` × 2 modes result rows (and run manifests) under ``root``; return rows."""
    rows = 0
    for m in range(models):
        model = f"openai:model-{m}"
        for mode in ("agent", "curated"):
            rng = random.Random(f"{seed}-{m}-{mode}")
            folder = root / BENCH / mode / model_slug(model)
            folder.mkdir(parents=True)
            with (folder / "results.jsonl").open("w", encoding="utf-8") as handle:
                for i in range(questions):
                    handle.write(_row(rng, i, mode, model, 0.5 + 0.1 * m).model_dump_json() + "\n")
                    rows += 1
            manifest = RunManifest(benchmark=BENCH, mode=mode, model=model, config_hash="0" * 64,  # type: ignore[arg-type]
                                   prompt_version="p1", policy_versions=["clinseek-text-v1"], code_version="0.1.0",
                                   seed=seed, runs_per_question=1, questions=questions, concurrency=8, budget={},
                                   limits={}, generate={}, retry={}, tools=TOOLS, response_cache=False)
            (folder / "run_manifest.json").write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    return rows


def measure_browser(report: Path) -> dict[str, float]:
    """Seconds to interactive, to filter to one task, to open one question; DOM element count."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        page.goto(report.as_uri(), wait_until="commit", timeout=120_000)
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        ready = time.perf_counter() - started
        started = time.perf_counter()
        page.select_option("#qb-task", label="task_20")
        page.wait_for_function("document.getElementById('qb-count').dataset.total < 1000")
        filtered = time.perf_counter() - started
        started = time.perf_counter()
        page.locator("#qb-body tr.qrow").first.click()
        page.locator(".mode-col.agent .traj .tool-call").first.wait_for(timeout=60_000)
        opened = time.perf_counter() - started
        elements = page.evaluate("document.getElementsByTagName('*').length")
        browser.close()
    return {"ready_s": ready, "filter_s": filtered, "open_s": opened, "dom_elements": float(elements)}


def main() -> None:
    """Fabricate, score, write the report, open it, print figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=3000)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--keep", help="folder to keep the run and report in (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep or tmp)
        started = time.perf_counter()
        rows = fabricate(root / "runs", args.questions, args.models)
        fabricated = time.perf_counter() - started
        results_mb = sum(p.stat().st_size for p in (root / "runs").rglob("results.jsonl")) / 1e6
        started = time.perf_counter()
        write_scores(score_path(root / "runs", n_resamples=2000), root / "runs")
        scored = time.perf_counter() - started
        started = time.perf_counter()
        stats = build_report(load_inputs([root / "runs"]), root / "report.html")
        written = time.perf_counter() - started
        print(f"rows {rows} ({args.questions} questions × {args.models} models × 2 modes), results.jsonl {results_mb:.1f} MB, "
              f"fabricated in {fabricated:.1f} s, scored in {scored:.1f} s")
        print(f"report {stats.size_bytes / 1e6:.1f} MB ({stats.size_bytes / rows / 1e3:.1f} kB per run), "
              f"{stats.question_rows} question rows, {stats.trajectories} trajectories, written in {written:.1f} s")
        browser = measure_browser(stats.path)
        print(f"chromium: interactive {browser['ready_s']:.2f} s after navigation; filter to one task "
              f"{browser['filter_s']:.3f} s; open one question (2 trajectories) {browser['open_s']:.3f} s; "
              f"{int(browser['dom_elements'])} DOM elements")


if __name__ == "__main__":
    main()
