"""``clinseek distill ...``: export scored agent runs as SFT data, render them for a model, print serving prompts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import distill_app
from ._out import check_out

_Dataset = Annotated[Path, typer.Argument(help="A dataset folder written by 'clinseek distill export'.")]
_Tokenizer = Annotated[
    Path | None, typer.Option("--tokenizer", help="Local Hugging Face tokenizer directory with a chat template.")
]


@distill_app.command("export")
def export_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Results roots or results.jsonl files (scored runs).")],
    out: Annotated[Path, typer.Option("--out", help="Dataset folder to write (absent or empty).")],
    min_f1: Annotated[float, typer.Option("--min-f1", min=0.0, max=1.0, help="Keep runs with F1 >= this.")] = 0.5,
    require_finish: Annotated[
        bool, typer.Option("--require-finish/--no-require-finish", help="Keep only runs ended by ehr.finish.")
    ] = True,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Drop longer runs (never cut).")] = 52_000,
    tokenizer: _Tokenizer = None,
    exclude_bench: Annotated[
        list[Path] | None,
        typer.Option("--exclude-bench", help="Evaluation benchmark (manifest or directory) not to train on; repeatable."),
    ] = None,
    exclude_subjects: Annotated[
        bool, typer.Option("--exclude-subjects", help="Also refuse every patient of an excluded benchmark.")
    ] = False,
    val_fraction: Annotated[
        float, typer.Option("--val-fraction", min=0.0, max=0.99, help="Share of patients in val.jsonl/val.parquet.")
    ] = 0.0,
    split_seed: Annotated[int, typer.Option("--split-seed", help="Seed of the patient-level split.")] = 42,
    wire_provider: Annotated[
        str, typer.Option("--wire-provider", help="Tool names as this provider sends them (openai for vLLM).")
    ] = "openai",
    keep_reasoning: Annotated[
        bool, typer.Option("--keep-reasoning", help="Keep teacher reasoning as reasoning_content.")
    ] = False,
    include_baselines: Annotated[
        bool, typer.Option("--include-baselines", help="Also export the scripted baseline:* runs (refused by default).")
    ] = False,
) -> None:
    """Write train.jsonl, train.parquet, refused.jsonl and a dataset card from scored agent runs."""
    from ..distill import ExportFilters, export_dataset

    check_out(out, "dir")
    filters = ExportFilters(
        min_f1=min_f1, require_finish=require_finish, max_tokens=max_tokens,
        tokenizer=str(tokenizer) if tokenizer else None, wire_provider=wire_provider,
        keep_reasoning=keep_reasoning, exclude_benchmarks=[str(p) for p in exclude_bench or []],
        exclude_subjects=exclude_subjects, val_fraction=val_fraction, split_seed=split_seed,
        include_baselines=include_baselines,
    )
    result = export_dataset(runs, out, filters)
    card = result.card
    splits = ", ".join(f"{k} {v}" for k, v in card.per_split.items()) or "train 0"
    typer.echo(f"{card.samples} samples exported ({splits}), {card.refused} runs refused -> {result.out}")
    for reason, count in card.refused_by_reason.items():
        typer.echo(f"  refused {reason}: {count}")
    for refusal in result.leakage_refusals:
        typer.echo(f"refused (in an excluded benchmark): {refusal.benchmark}/{refusal.qid}/run{refusal.run_index}: "
                   + "; ".join(refusal.detail.get("in_excluded_benchmark", [])), err=True)


@distill_app.command("render")
def render_cmd(
    dataset: _Dataset,
    tokenizer: Annotated[Path, typer.Option("--tokenizer", help="Local Hugging Face tokenizer directory.")],
    out: Annotated[Path | None, typer.Option("--out", help="Default: DATASET/rendered/<tokenizer name>.")] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=1, help="Drop longer samples (default: the export's).")
    ] = None,
    tool_parser: Annotated[
        str, typer.Option("--tool-parser", help="auto, hermes, qwen3_xml, llama3_json or gemma4 (default: the family's).")
    ] = "auto",
    workers: Annotated[int, typer.Option("--workers", min=1, help="Processes rendering in parallel.")] = 1,
    family: Annotated[
        str | None, typer.Option("--family", help="Template family: qwen3, qwen3.5, llama3 or gemma4 (parser + template arguments).")
    ] = None,
    template_kwarg: Annotated[
        list[str] | None,
        typer.Option("--template-kwarg", help="KEY=JSON chat-template argument, e.g. enable_thinking=false; repeatable."),
    ] = None,
) -> None:
    """Token ids and assistant-only loss masks via the tokenizer's chat template; tool calls re-parsed."""
    from ..distill import TOOL_PARSERS, render_dataset

    if tool_parser not in TOOL_PARSERS:
        raise typer.BadParameter(f"expected one of {', '.join(TOOL_PARSERS)}, got {tool_parser!r}",
                                 param_hint="--tool-parser")
    if out is not None:
        check_out(out, "dir")
    report = render_dataset(dataset, tokenizer, out, max_tokens=max_tokens, tool_parser=tool_parser,  # type: ignore[arg-type]
                            workers=workers, family=family, template_kwargs=template_kwargs(template_kwarg))
    typer.echo(f"{report.rendered} of {report.samples_in} samples rendered ({report.tokens} tokens, "
               f"{report.loss_tokens} with loss); dropped: {len(report.too_long)} too long, "
               f"{len(report.round_trip_failures)} tool calls not round-tripping, {len(report.mask_failures)} mask failures")
    for problem in report.round_trip_failures + report.mask_failures:
        typer.echo(f"problem: {problem.sample_id}: {'; '.join(problem.problems)}", err=True)


def template_kwargs(items: list[str] | None) -> dict[str, object]:
    """``KEY=JSON`` options as a dict (a value that is not JSON is kept as text)."""
    out: dict[str, object] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--template-kwarg")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


@distill_app.command("prompts")
def prompts_cmd(
    dataset: _Dataset,
    out: Annotated[Path | None, typer.Option("--out", help="Write system_<n>.txt and tools_<n>.json here.")] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 unless 'clinseek run' sends exactly the trained prompts.")
    ] = False,
) -> None:
    """Print the system prompt(s) and tool schemas the samples were trained on (serve with these)."""
    from ..distill import check_serving, serving_prompts

    if out is not None:
        check_out(out, "dir")
    for n, record in enumerate(serving_prompts(dataset), start=1):
        typer.echo(f"# prompt {n}: {record.prompt_version}, {record.samples} samples, system "
                   f"{record.system_sha256[:16]}, tools {record.tools_sha256[:16]}")
        if out is None:
            typer.echo(record.system + "\n\n" + json.dumps(record.tools, indent=2, ensure_ascii=False))
            continue
        out.mkdir(parents=True, exist_ok=True)
        (out / f"system_{n}.txt").write_text(record.system, encoding="utf-8")
        (out / f"tools_{n}.json").write_text(json.dumps(record.tools, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
    if check:
        problems = check_serving(dataset)
        for problem in problems:
            typer.echo(f"mismatch: {problem}", err=True)
        typer.echo("serving prompts match the trained ones" if not problems else f"{len(problems)} mismatch(es)")
        if problems:
            raise SystemExit(1)


@distill_app.command("card")
def card_cmd(dataset: _Dataset) -> None:
    """Print the dataset card: teacher, filters, exclusions, refusals, token counts (export and rendered)."""
    from ..distill import card_text

    typer.echo(card_text(dataset), nl=False)


@distill_app.command("train")
def train_cmd(
    rendered: Annotated[Path, typer.Argument(help="A rendered folder (clinseek distill render).")],
    base_model: Annotated[Path, typer.Option("--base-model", help="Local model folder; its tokenizer is the rendered one.")],
    out: Annotated[Path, typer.Option("--out", help="The student's folder (absent or empty).")],
    epochs: Annotated[float, typer.Option("--epochs", min=0.001, help="Passes over the data.")] = 3.0,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Stop after this many optimiser steps.")] = None,
    learning_rate: Annotated[float, typer.Option("--learning-rate", min=0.0, help="Peak learning rate (cosine to 10 %).")] = 2e-5,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Sequences per device per step.")] = 1,
    grad_accum: Annotated[int, typer.Option("--grad-accum", min=1, help="Gradient accumulation steps.")] = 32,
    warmup_steps: Annotated[int, typer.Option("--warmup-steps", min=0, help="Linear warm-up steps.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Training seed.")] = 42,
    cpu: Annotated[bool, typer.Option("--cpu", help="Train on the CPU even when an accelerator is there.")] = False,
    gradient_checkpointing: Annotated[bool, typer.Option("--gradient-checkpointing", help="Trade compute for memory.")] = False,
) -> None:
    """Fine-tune a local model on rendered tokens with TRL's SFT trainer (assistant-only loss)."""
    from ..distill import TrainConfig, train_sft

    check_out(out, "dir")
    config = TrainConfig(epochs=epochs, max_steps=max_steps, learning_rate=learning_rate, per_device_batch_size=batch_size,
                         gradient_accumulation_steps=grad_accum, warmup_steps=warmup_steps, seed=seed,
                         device="cpu" if cpu else "auto", gradient_checkpointing=gradient_checkpointing)
    card = train_sft(rendered, base_model, out, config)
    typer.echo(f"trained {card.steps} steps on {card.train_samples} samples ({card.train_loss_tokens} loss tokens) "
               f"on {card.device} in {card.wall_s:.1f} s; train loss {card.train_loss}; -> {out}")


@distill_app.command("serve")
def serve_cmd(
    model: Annotated[Path, typer.Argument(help="A model folder (clinseek distill train output).")],
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0 = any free one).")] = 8000,
    name: Annotated[str, typer.Option("--name", help="Model name the endpoint reports.")] = "student",
    tool_parser: Annotated[str | None, typer.Option("--tool-parser", help="Default: the training card's.")] = None,
    template_kwarg: Annotated[
        list[str] | None, typer.Option("--template-kwarg", help="KEY=JSON (default: the training card's).")
    ] = None,
    device: Annotated[str, typer.Option("--device", help="torch device.")] = "cpu",
) -> None:
    """Serve a student as an OpenAI-compatible endpoint (transformers generate) until Ctrl-C."""
    import threading

    from ..distill import TOOL_PARSERS, StudentModel, StudentServer

    if tool_parser is not None and tool_parser not in TOOL_PARSERS:
        raise typer.BadParameter(f"expected one of {', '.join(TOOL_PARSERS)}", param_hint="--tool-parser")
    student = StudentModel(model, tool_parser=tool_parser, device=device,  # type: ignore[arg-type]
                           template_kwargs=template_kwargs(template_kwarg) if template_kwarg else None)
    with StudentServer(student, host=host, port=port, name=name) as server:
        typer.echo(f"serving {model} as {name!r} at {server.url} (clinseek run --model openai:{name} "
                   f"--base-url {server.url}); Ctrl-C stops")
        threading.Event().wait()
