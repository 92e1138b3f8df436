"""The dataset card: ``card.json`` (the :class:`DatasetCard`) and its Markdown rendering ``README.md``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ._model import DatasetCard, PromptRecord, Refusal, Sample, TokenStats


def prompt_records(samples: Sequence[Sample]) -> list[PromptRecord]:
    """Each distinct (system prompt, tool set) of ``samples`` with its sample count, most used first."""
    groups: dict[tuple[str, str], list[Sample]] = {}
    for sample in samples:
        groups.setdefault((sample.system_sha256, sample.tools_sha256), []).append(sample)
    records = [
        PromptRecord(system_sha256=key[0], tools_sha256=key[1], prompt_version=group[0].prompt_version,
                     samples=len(group), system=group[0].messages[0]["content"], tools=group[0].tools)
        for key, group in groups.items()
    ]
    return sorted(records, key=lambda r: (-r.samples, r.system_sha256, r.tools_sha256))


def token_stats(samples: Sequence[Sample]) -> dict[str, TokenStats]:
    """Per split: the samples' token counts (``n_tokens``: tokenizer or approximate, as the card says)."""
    out: dict[str, TokenStats] = {}
    for split in sorted({s.split for s in samples}):
        counts = [s.n_tokens for s in samples if s.split == split]
        out[split] = TokenStats(samples=len(counts), total=sum(counts), mean=round(sum(counts) / len(counts), 1),
                                max=max(counts))
    return out


def refusal_counts(refusals: Sequence[Refusal]) -> dict[str, int]:
    """Refused runs per reason, reasons sorted."""
    counts = Counter(reason for r in refusals for reason in r.reasons)
    return dict(sorted(counts.items()))


def _table(header: tuple[str, ...], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def card_markdown(card: DatasetCard) -> str:
    """``README.md`` of a dataset: counts per task, filters, refusals, sources, teacher, prompts."""
    f = card.filters
    lines = [
        "# clinseek SFT dataset",
        "",
        f"{card.samples} trajectories exported, {card.refused} runs refused; teacher model(s): "
        f"{', '.join(card.teacher_models) or 'none'}; clinseek {card.clinseek_version}.",
        "Made with `clinseek distill export`; `card.json` holds everything below as data.",
        "",
        "## Filters",
        "",
        f"- finished with `ehr.finish`: {'required' if f.require_finish else 'not required'}",
        f"- per-sample F1 ≥ {f.min_f1} (deterministic `clinseek.scoring`)",
        "- no tool-protocol errors (malformed or unknown calls, turns without a call, unanswered calls, "
        "a corrected `ehr.finish`); no images; no compacted context",
        f"- length ≤ {f.max_tokens} tokens, measured "
        + (f"with the tokenizer at `{f.tokenizer}`" if card.length_method == "tokenizer"
           else "**approximately** (characters of the JSON messages and tools / 4)")
        + "; longer runs are dropped, never cut",
        f"- tool names as sent to `{f.wire_provider}` endpoints; reasoning text "
        + ("kept" if f.keep_reasoning else "dropped"),
        f"- excluded benchmarks ({card.excluded_questions} questions; same qid, or same subject_id and "
        f"prediction_time{', or same patient' if f.exclude_subjects else ''}): "
        + (", ".join(f"`{p}`" for p in f.exclude_benchmarks) or "none"),
        f"- validation split: {f.val_fraction:.0%} of patients (seed {f.split_seed}); samples per split: "
        + ", ".join(f"{k} {v}" for k, v in card.per_split.items()),
        "",
        "## Tokens",
        "",
        *_table(("split", "samples", "tokens", "mean", "longest"),
                [(k, t.samples, t.total, t.mean, t.max) for k, t in card.tokens.items()]),
        "",
        f"Measured {'with the tokenizer' if card.length_method == 'tokenizer' else 'approximately'}; "
        "`clinseek distill card DATASET` adds the counts of each rendered folder (exact, with loss tokens).",
        "",
        "## Samples per task",
        "",
        *_table(("task", "samples"), sorted(card.per_task.items())),
        "",
        "## Refused runs per reason",
        "",
        *_table(("reason", "runs"), sorted(card.refused_by_reason.items())),
        "",
    ]
    if card.leakage_refusals:
        lines += ["Refused because the question is in an excluded benchmark:", ""]
        lines += [f"- `{s}`" for s in card.leakage_refusals] + [""]
    lines += ["## Source runs", ""]
    lines += _table(("results", "model", "benchmark", "mode", "rows", "exported", "manifest sha256"),
                    [(s.results, s.model, s.benchmark, s.mode, s.rows, s.exported, (s.manifest_sha256 or "-")[:16])
                     for s in card.sources])
    lines += ["", "## Prompts to serve with", "",
              "Serve the student with exactly these (`clinseek distill prompts DATASET` prints them):", ""]
    lines += _table(("prompt version", "system sha256", "tools sha256", "tools", "samples"),
                    [(p.prompt_version, p.system_sha256[:16], p.tools_sha256[:16], len(p.tools), p.samples)
                     for p in card.prompts])
    return "\n".join(lines) + "\n"
