"""The distillation loop closed on CPU: export -> render (Qwen3 template) -> TRL SFT of a tiny random model built
here -> the student served over a loopback OpenAI-compatible endpoint -> ``clinseek run`` writes its rows.

Time-boxed: the teacher runs use three tools and short tool outputs, the tokenizer is trained on the
trajectories' own text, the model has 2 layers of width 32, and training stops after 2 optimiser steps.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest
from _distill_helpers import build_family_tokenizer
from typer.testing import CliRunner

from clinseek.agent import AgentBudget
from clinseek.bench import select_questions
from clinseek.cli import app
from clinseek.distill import (
    TRAINING_CARD,
    ExportFilters,
    StudentModel,
    StudentServer,
    TrainConfig,
    card_text,
    export_dataset,
    read_samples,
    render_dataset,
    train_sft,
)
from clinseek.runner import RunOptions, RunSettings, read_results, run_benchmark


@pytest.fixture(autouse=True, scope="module")
def _distill_extra() -> None:
    """trl and torch are imported when these tests run, not when they are collected."""
    pytest.importorskip("trl", reason="the [distill] extra (TRL) is not installed")
    pytest.importorskip("torch", reason="the [distill] extra (torch) is not installed")


TOOLS = ("ehr.load_ehr", "ehr.run_sql_query", "ehr.finish")


@pytest.fixture(scope="module")
def small_export(distill_bench, synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Evidence-baseline trajectories of the risk questions with three tools and 300-character tool outputs."""
    _, questions = distill_bench
    risk = [q for q in questions if q.task_type == "risk_prediction"]
    runs = tmp_path_factory.mktemp("loop_runs")
    settings = RunSettings(run=RunOptions(concurrency=2, tools=TOOLS), budget=AgentBudget(max_tool_chars=300))
    anyio.run(lambda: run_benchmark(risk, synthetic_store, "agent", "baseline:evidence", runs, settings=settings))
    return export_dataset([runs], tmp_path_factory.mktemp("loop") / "ds", ExportFilters(include_baselines=True, min_f1=0.0)).out


def _tiny_model(folder: Path, tokenizer: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    vocab = len(AutoTokenizer.from_pretrained(str(tokenizer), local_files_only=True))
    config = Qwen3Config(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=16384,
                         tie_word_embeddings=True, attn_implementation="eager")  # sdpa's CPU backward is slower here
    torch.manual_seed(0)
    Qwen3ForCausalLM(config).save_pretrained(str(folder))
    for file in tokenizer.iterdir():
        shutil.copy2(file, folder / file.name)  # the base model's tokenizer is the rendered one, byte for byte
    return folder


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_export_train_serve_evaluate(small_export: Path, distill_bench, synthetic_store: Path, tmp_path: Path) -> None:
    texts = [json.dumps(s.messages) + json.dumps(s.tools) for s in read_samples(small_export)]
    tokenizer = build_family_tokenizer(tmp_path / "tok", "qwen3", vocab_size=3000, corpus=texts)
    report = render_dataset(small_export, tokenizer, tmp_path / "rendered", family="qwen3")
    assert report.rendered >= 2 and not report.round_trip_failures and not report.mask_failures
    base = _tiny_model(tmp_path / "base", tokenizer)

    card = train_sft(tmp_path / "rendered", base, tmp_path / "student",
                     TrainConfig(max_steps=2, gradient_accumulation_steps=1, warmup_steps=0, learning_rate=1e-3,
                                 device="cpu"))
    assert card.steps == 2 and card.train_loss is not None and card.family == "qwen3"
    assert card.train_loss_tokens == report.loss_tokens and card.tokenizer_sha256 == report.tokenizer_sha256
    assert (tmp_path / "student" / "model.safetensors").is_file() and (tmp_path / "student" / TRAINING_CARD).is_file()

    bench, questions = distill_bench
    student = StudentModel(tmp_path / "student")
    assert student.tool_parser == "hermes"
    with StudentServer(student) as server:
        done = CliRunner().invoke(app, [
            "run", "--bench", str(bench), "--store", str(synthetic_store), "--model", "openai:student",
            "--base-url", server.url, "--out", str(tmp_path / "eval"), "--limit", "2", "--max-turns", "1",
            "--max-output-tokens", "8", "--knowledge", "off", "--concurrency", "1", "--no-progress",
        ])
    assert done.exit_code == 0, done.output
    rows = read_results(tmp_path / "eval" / "clinseek-bench-text" / "agent" / "openai_student" / "results.jsonl").rows
    assert len(rows) == 2 and {r.qid for r in rows} == {q.qid for q in select_questions(questions, limit=2)}
    assert all(r.status in ("answered", "no_answer") and r.usage.output_tokens > 0 for r in rows)


def test_card_states_teacher_filters_exclusions_and_tokens(small_export: Path, tmp_path: Path) -> None:
    card = json.loads((small_export / "card.json").read_text(encoding="utf-8"))
    samples = read_samples(small_export)
    assert card["tokens"]["train"]["total"] == sum(s.n_tokens for s in samples)
    assert card["tokens"]["train"]["max"] == max(s.n_tokens for s in samples)
    done = CliRunner().invoke(app, ["distill", "card", str(small_export)])
    assert done.exit_code == 0, done.output
    for needle in ("baseline:evidence", "per-sample F1 ≥ 0.0", "excluded benchmarks (0 questions", "## Tokens",
                   f"| train | {len(samples)} | {card['tokens']['train']['total']} |", "## Rendered", "Not rendered yet"):
        assert needle in done.output, needle
    tokenizer = build_family_tokenizer(tmp_path / "tok", "qwen3.5")
    report = render_dataset(small_export, tokenizer, small_export / "rendered" / "tok", family="qwen3.5")
    text = card_text(small_export)
    assert f"{report.rendered} of {report.samples_in} samples, {report.tokens} tokens of which {report.loss_tokens} trained" in text
    assert 'template arguments {"enable_thinking": false}' in text
