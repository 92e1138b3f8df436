"""Where the reference's result files live and what their folders are called.

Layout of ClinSeek-Evaluation-Results (seed 002; ref_data_scoring.md §5)::

    <bench>/<agentic|oneshot>/<split>/<model>/results.jsonl      (or merged_unique.jsonl)
    mm_bench/<agentic|oneshot>/scored/<model>/{scored,rescored}.jsonl
    hierarchical/<agentic|oneshot>/<bench>/<model>/L1.*/.../rows.jsonl

``<bench>`` is ``ehr_bench``, ``mm_bench`` or ``agent_ehr_bench``; ``<split>`` is ``full1800``,
``full2703``, ``subset600``, ``smoke20``...; ``<model>`` is a snake-case name (``claude_opus_4_6``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

BENCH_DIRS: dict[str, str] = {
    "clinseek-bench-text": "ehr_bench",
    "clinseek-bench-mm": "mm_bench",
    "agentehr-bench": "agent_ehr_bench",
}
"""clinseek benchmark name → the reference's benchmark folder."""
REFERENCE_BENCHES: tuple[str, ...] = ("ehr_bench", "mm_bench", "agent_ehr_bench")
MODE_DIRS: dict[str, str] = {"agent": "agentic", "curated": "oneshot"}
"""clinseek mode → the reference's mode folder (``oneshot`` is its name for Curated Input)."""
_MODES = {"agentic": "agent", "oneshot": "curated"}
WRAPPER = re.compile(r"(?:full|subset|smoke)\d+(?:_.*)?|scored|scored_vocab|rescored|hierarchical|L\d\..*|_.*")
"""Folder names between the mode and the files that are not a model name (splits, scored copies, raw
batch folders such as ``_multi_eval_raw/full5_<time>``)."""
_REGION = re.compile(r"(?:us|eu|apac|global|jp|au|ca)\.")
_VENDOR = re.compile(r"[a-z]+\.(?=[a-z])")


def bench_dir(benchmark: str, task_type: str | None = None) -> str:
    """The reference's folder for a clinseek benchmark (``clinseek-bench-mm`` → ``mm_bench``).

    A reference name is kept; another name goes to ``mm_bench`` for multimodal rows, else ``ehr_bench``.
    """
    if benchmark in REFERENCE_BENCHES:
        return benchmark
    if benchmark in BENCH_DIRS:
        return BENCH_DIRS[benchmark]
    return "mm_bench" if task_type == "multimodal" else "ehr_bench"


def reference_model_name(spec: str) -> str:
    """The reference's snake-case folder name of a model (``anthropic:claude-opus-4-6`` → ``claude_opus_4_6``).

    The ``provider:`` prefix, an organisation (``Qwen/``), a Bedrock region and vendor prefix
    (``us.anthropic.``), a Bedrock version suffix (``-v1``, ``-1:0``) and a date suffix
    (``-20250514``) are dropped; the rest is lower-cased with every run of other characters turned
    into ``_``: ``openai:Qwen/Qwen3.5-35B-A3B`` → ``qwen3_5_35b_a3b``. The offline baselines keep
    their prefix (``baseline:evidence`` → ``baseline_evidence``).
    """
    provider, sep, name = spec.partition(":")
    if not sep or not re.fullmatch(r"[a-z][a-z0-9_-]*", provider):
        provider, name = "", spec
    name = name.rsplit("/", 1)[-1]
    name = _REGION.sub("", name, count=1) if _REGION.match(name) else name
    name = _VENDOR.sub("", name, count=1) if _VENDOR.match(name) else name
    name = re.sub(r"-v?\d+:\d+$|-v\d+$|:\d+$", "", name)
    name = re.sub(r"[-_@]\d{8}$", "", name)
    if provider == "baseline":
        name = f"baseline_{name}"
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "model"


def default_split(n_questions: int) -> str:
    """The split folder of a run over ``n_questions`` questions: ``full<N>`` (the reference's ``full1800``)."""
    return f"full{n_questions}"


def reference_results_dir(root: Path | str, benchmark: str, mode: str, split: str, model: str,
                          task_type: str | None = None) -> Path:
    """``root/<bench>/<agentic|oneshot>/<split>/<snake model>``: where one run's ``results.jsonl`` goes.

    Raises:
        ValueError: ``mode`` is not ``agent`` or ``curated``, or ``split`` is not one folder name.
    """
    if mode not in MODE_DIRS:
        raise ValueError(f"mode must be 'agent' or 'curated', got {mode!r}")
    if not split or "/" in split or split in (".", ".."):
        raise ValueError(f"split must be one folder name (full1800, smoke20, ...), got {split!r}")
    return Path(root) / bench_dir(benchmark, task_type) / MODE_DIRS[mode] / split / reference_model_name(model)


def visible_parts(path: Path | str) -> tuple[str, ...]:
    """The parts of ``path`` made absolute without resolving symbolic links (the path the user sees)."""
    return Path(os.path.abspath(path)).parts


def path_run_key(path: Path | str) -> tuple[str, str, str] | None:
    """(benchmark folder, mode, model) of a file in the reference layout, from the path the user sees.

    The mode is the last ``agentic``/``oneshot`` folder (read as ``agent``/``curated``); the
    benchmark is the last ``ehr_bench``/``mm_bench``/``agent_ehr_bench`` folder (``unknown`` when
    none); the model is the first folder after both that is not a split or scored wrapper
    (``unknown`` when none). ``None`` when no folder is ``agentic`` or ``oneshot``. Symbolic links
    are not resolved: ``full2703/claude_sonnet_4_6 → _multi_eval_raw/...`` is ``claude_sonnet_4_6``.
    """
    parts = visible_parts(path)
    modes = [i for i, p in enumerate(parts) if p in _MODES]
    if not modes:
        return None
    benches = [i for i, p in enumerate(parts) if p in REFERENCE_BENCHES]
    bench = parts[benches[-1]] if benches else "unknown"
    start = max([modes[-1], *benches]) + 1
    model = next((p for p in parts[start:-1] if not WRAPPER.fullmatch(p)), "unknown")
    return bench, _MODES[parts[modes[-1]]], model


def path_split(path: Path | str) -> str | None:
    """The split folder (``full1800``, ``smoke20``, ``scored``...) between mode and model, if any."""
    parts = visible_parts(path)
    modes = [i for i, p in enumerate(parts) if p in _MODES]
    if not modes:
        return None
    return next((p for p in parts[modes[-1] + 1 : -1] if WRAPPER.fullmatch(p)), None)
