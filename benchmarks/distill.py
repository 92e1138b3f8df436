"""Export and render throughput of ``clinseek.distill`` on baseline runs, short and inflated to many turns.

Builds a synthetic store, a small benchmark and evidence-baseline agent runs (or reads ``--runs``),
then, for the trajectories as run (3-4 turns) and inflated to ``--turns`` assistant turns (each
extra turn repeats a real SQL call and its result with fresh call ids, like a long teacher
trajectory), it times: export with the approximate length, export measured with a tokenizer, and
render (chat template, loss mask, tool-call round trip). The tokenizer is a small byte-level BPE
trained here with a Hermes-style template (no download), so tokens per character are higher than
a real model's, and the first export with a tokenizer includes importing transformers (~2-3 s);
the figures show how cost grows with trajectory length (render renders each
assistant turn's prefix, so it grows with turns × length).

Run: ``.venv/bin/python benchmarks/distill.py [--turns 40] [--runs DIR]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "distill"))

from _distill_helpers import HERMES_TEMPLATE, build_tokenizer, update, write_run  # noqa: E402

from clinseek.distill import ExportFilters, export_dataset, render_dataset  # noqa: E402
from clinseek.runner import ResultRow  # noqa: E402


def make_runs(root: Path) -> Path:
    """Evidence-baseline agent runs on a benchmark built from a 40-patient synthetic store."""
    import anyio

    from clinseek.bench import build_benchmark, load_questions
    from clinseek.runner import RunOptions, RunSettings, run_benchmark
    from clinseek.store import synthesize

    synthesize(out=root / "s.duckdb", patients=40, seed=7)
    tasks = ["Inpatient_Mortality", "ED_Hospitalization", "labevents", "transfers", "prescriptions"]
    build_benchmark(root / "s.duckdb", tasks=tasks, per_task=6, seed=42, out=root / "bench")
    questions = load_questions(root / "bench")
    anyio.run(lambda: run_benchmark(questions, root / "s.duckdb", "agent", "baseline:evidence", root / "runs",
                                    settings=RunSettings(run=RunOptions(concurrency=4))))
    return next((root / "runs").rglob("results.jsonl"))


def inflate(row: ResultRow, turns: int) -> ResultRow:
    """``row`` with extra (assistant call, tool result) pairs copied from its first SQL call, up to ``turns``."""
    messages = list(row.messages)
    pairs = [(i, m) for i, m in enumerate(messages) if m["role"] == "assistant" and m.get("tool_calls")]
    source = next((i for i, m in pairs if m["tool_calls"][0]["name"] == "ehr.run_sql_query"), pairs[0][0])
    call, result = messages[source]["tool_calls"][0], messages[source + 1]
    extra = []
    for k in range(max(0, turns - len(pairs))):
        call_id = f"inflated_{k}"
        extra.append({"role": "assistant", "tool_calls": [{**call, "id": call_id}]})
        extra.append({**result, "tool_call_id": call_id})
    insert_at = source + 1 + len(messages[source]["tool_calls"])
    return update(row, messages=messages[:insert_at] + extra + messages[insert_at:])


def timed(label: str, n: int, fn) -> object:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - started
    print(f"  {label:<34} {wall:7.2f} s   {1000 * wall / max(n, 1):8.1f} ms/sample")
    return out


def bench(results: Path, tokenizer: Path, root: Path, turns: int | None) -> None:
    name = f"inflated to {turns} turns" if turns else "as run"
    folder = root / (f"t{turns}" if turns else "asis")
    src = write_run(folder / "run", results, lambda rows: [inflate(r, turns) if turns else r for r in rows])
    loose = ExportFilters(min_f1=0.0, max_tokens=10**9)
    rows = sum(1 for _ in src.open())
    print(f"{name}: {rows} runs")
    ds = timed("export (approximate length)", rows, lambda: export_dataset([src], folder / "ds", loose))
    n = ds.card.samples  # type: ignore[attr-defined]
    tok = loose.model_copy(update={"tokenizer": str(tokenizer)})
    timed("export (tokenizer length)", n, lambda: export_dataset([src], folder / "ds_tok", tok))
    report = timed("render (mask + round trip)", n, lambda: render_dataset(folder / "ds", tokenizer, folder / "r"))
    tokens = report.tokens  # type: ignore[attr-defined]
    print(f"  rendered {report.rendered} samples, {tokens} tokens ({tokens // max(n, 1)} per sample), "  # type: ignore[attr-defined]
          f"{report.loss_tokens} with loss")  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40, help="assistant turns of the inflated trajectories")
    parser.add_argument("--runs", type=Path, default=None, help="an agent-mode results.jsonl to use instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results = args.runs or make_runs(root)
        tokenizer = build_tokenizer(root / "tok", HERMES_TEMPLATE)
        for turns in (None, args.turns):
            bench(results, tokenizer, root, turns)


if __name__ == "__main__":
    main()
