"""``train_sft``: supervised fine-tuning of a student on a rendered dataset with TRL's ``SFTTrainer``.

The input is the output of ``clinseek distill render``: token ids and the assistant-only loss mask that
render checked (every assistant turn, tool-call markup included, round-trips through the family's parser;
system, user and tool tokens are masked). The mask goes to TRL as ``assistant_masks``, which TRL turns into
labels (``-100`` outside assistant turns); nothing is re-tokenised, truncated or packed: a sample longer
than the model can take was dropped at render time, never cut.

The base model must use the tokenizer the dataset was rendered with (same SHA-256 over its tokenizer and
chat-template files): token ids from one tokenizer are meaningless to another. The trained model is saved
with those tokenizer files, so it is served with exactly the template it was trained on. Defaults follow
the paper's recipe (3 epochs, lr 2e-5 cosine to 2e-6, 10 warm-up steps, global batch 32, weight decay 0.1,
betas 0.9/0.95, clip 1.0); ``training_card.json`` records everything.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any, Literal

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._version import __version__
from ..errors import ClinseekError, MissingExtraError
from ._render import RenderReport
from ._tokenizer import TOKENIZER_FILE_PREFIXES, tokenizer_sha256
from ._write import StagingDir, check_out, sha256_file

TRAINING_CARD = "training_card.json"
"""File the trained model folder records its provenance in."""


class TrainConfig(BaseModel):
    """Hyper-parameters of :func:`train_sft` (defaults: the paper's recipe, ref_data_scoring.md §4.4)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    epochs: float = Field(default=3.0, gt=0)
    max_steps: int | None = Field(default=None, ge=1)
    """Stop after this many optimiser steps (overrides ``epochs``)."""
    learning_rate: float = Field(default=2e-5, gt=0)
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1)
    """Cosine decay to ``learning_rate * min_lr_ratio`` (2e-6 in the paper)."""
    warmup_steps: int = Field(default=10, ge=0)
    per_device_batch_size: int = Field(default=1, ge=1)
    gradient_accumulation_steps: int = Field(default=32, ge=1)
    """Global batch = per-device batch x accumulation x devices (32 in the paper)."""
    weight_decay: float = Field(default=0.1, ge=0)
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    max_grad_norm: float = Field(default=1.0, gt=0)
    seed: int = 42
    bf16: bool | None = None
    """bfloat16 training; ``None`` = when the accelerator supports it (never on CPU)."""
    gradient_checkpointing: bool = False
    device: Literal["auto", "cpu"] = "auto"
    """``auto`` uses an accelerator when there is one."""


class TrainCard(BaseModel):
    """``training_card.json``: which data, base model, tokenizer and settings produced a student."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    clinseek_version: str
    base_model: str
    base_model_config_sha256: str
    rendered: str
    render_report_sha256: str
    tokenizer_sha256: str
    family: str | None
    tool_parser: str
    template_kwargs: dict[str, Any]
    """Serve the student with these chat-template arguments (the ones it was rendered with)."""
    config: TrainConfig
    train_samples: int
    train_tokens: int
    train_loss_tokens: int
    val_samples: int
    steps: int
    train_loss: float | None
    eval_loss: float | None = None
    log_history: list[dict[str, Any]]
    versions: dict[str, str]
    device: str
    wall_s: float
    data_files: dict[str, str]
    """SHA-256 of the rendered Parquet files trained on."""


def _report(rendered: Path) -> RenderReport:
    path = rendered / "render_report.json"
    try:
        return RenderReport.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as err:
        raise ClinseekError(f"{path}: not a render report; render the dataset first with "
                            f"'clinseek distill render' ({err})") from err


def _columns(path: Path) -> dict[str, list[Any]]:
    table = pq.read_table(path, columns=["input_ids", "loss_mask"])
    return {"input_ids": table.column("input_ids").to_pylist(), "assistant_masks": table.column("loss_mask").to_pylist()}


def _imports() -> Any:
    try:
        import datasets
        import torch
        import transformers
        import trl
    except ImportError as err:
        raise MissingExtraError("clinseek distill train", extra="distill", detail=str(err)) from err
    return datasets, torch, transformers, trl


def _check_base(base: Path, report: RenderReport) -> None:
    if not (base / "config.json").is_file():
        raise ClinseekError(f"{base}: not a local model folder (no config.json); nothing is downloaded")
    found = tokenizer_sha256(base)
    if found != report.tokenizer_sha256:
        raise ClinseekError(f"{base}: its tokenizer files (sha256 {found[:12]}) are not the ones the dataset was "
                            f"rendered with ({report.tokenizer}, sha256 {report.tokenizer_sha256[:12]}); render "
                            "with the base model's own tokenizer folder")


def _sft_config(trl: Any, torch: Any, out: Path, config: TrainConfig, has_val: bool) -> tuple[Any, str]:
    cpu = config.device == "cpu" or not torch.cuda.is_available()
    bf16 = (not cpu and torch.cuda.is_bf16_supported()) if config.bf16 is None else config.bf16
    args = trl.SFTConfig(
        output_dir=str(out), num_train_epochs=config.epochs, max_steps=config.max_steps or -1,
        learning_rate=config.learning_rate, lr_scheduler_type="cosine_with_min_lr",
        lr_scheduler_kwargs={"min_lr_rate": config.min_lr_ratio}, warmup_steps=config.warmup_steps,
        per_device_train_batch_size=config.per_device_batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps, weight_decay=config.weight_decay,
        adam_beta1=config.adam_beta1, adam_beta2=config.adam_beta2, max_grad_norm=config.max_grad_norm,
        seed=config.seed, data_seed=config.seed, bf16=bf16, use_cpu=cpu, max_length=None, packing=False,
        save_strategy="no", report_to="none", logging_steps=1, disable_tqdm=True,
        eval_strategy="epoch" if has_val else "no", per_device_eval_batch_size=1, **_checkpointing(trl, config),
    )
    return args, "cpu" if cpu else "cuda"


def _checkpointing(trl: Any, config: TrainConfig) -> dict[str, bool]:
    """The activation-checkpointing switch, always explicit (TRL turns it on by default), under the name this
    transformers version reads (``gradient_checkpointing`` became ``activation_checkpointing`` in 5.x)."""
    fields = getattr(trl.SFTConfig, "__dataclass_fields__", {})
    name = "activation_checkpointing" if "activation_checkpointing" in fields else "gradient_checkpointing"
    return {name: config.gradient_checkpointing}


def _copy_tokenizer(base: Path, target: Path) -> None:
    for file in base.iterdir():
        if file.is_file() and file.name.startswith(TOKENIZER_FILE_PREFIXES):
            shutil.copy2(file, target / file.name)


def train_sft(rendered: Path | str, base_model: Path | str, out: Path | str, config: TrainConfig | None = None
              ) -> TrainCard:
    """Fine-tune ``base_model`` on a rendered dataset; write the student and ``training_card.json`` to ``out``.

    Args:
        rendered: a folder written by :func:`render_dataset` (``train.parquet``, optional ``val.parquet``,
            ``render_report.json``).
        base_model: a local Hugging Face model folder whose tokenizer files are the ones rendered with.
        out: the student's folder (absent or empty); written in a staging folder and moved into place.
        config: hyper-parameters (default :class:`TrainConfig`, the paper's recipe).

    Returns:
        The training card (also in ``out/training_card.json``).

    Raises:
        ClinseekError: no render report, a base model that is not a local folder or whose tokenizer differs,
            a token id beyond the model's vocabulary, no training sample, or ``out`` not empty.
        MissingExtraError: torch, transformers, TRL or datasets is missing (``pip install 'clinseek[distill]'``).
    """
    rendered, base, target, config = Path(rendered), Path(base_model), Path(out), config or TrainConfig()
    report = _report(rendered)
    _check_base(base, report)
    check_out(target)
    datasets, torch, transformers, trl = _imports()
    train = _columns(rendered / "train.parquet")
    if not train["input_ids"]:
        raise ClinseekError(f"{rendered}/train.parquet: no sample to train on")
    val_path = rendered / "val.parquet"
    val = _columns(val_path) if val_path.is_file() and pq.read_metadata(val_path).num_rows else None
    model = transformers.AutoModelForCausalLM.from_pretrained(str(base), local_files_only=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    vocab = model.get_input_embeddings().num_embeddings
    top = max(max(ids) for ids in train["input_ids"])
    if top >= vocab:
        raise ClinseekError(f"{base}: token id {top} of the dataset is beyond the model's {vocab} embeddings")
    staging = StagingDir(target)
    try:
        args, device = _sft_config(trl, torch, staging.path / "trainer", config, val is not None)
        trainer = trl.SFTTrainer(model=model, args=args, processing_class=tokenizer,
                                 train_dataset=datasets.Dataset.from_dict(train),
                                 eval_dataset=datasets.Dataset.from_dict(val) if val is not None else None)
        started = time.perf_counter()
        result = trainer.train()
        wall = time.perf_counter() - started
        trainer.save_model(str(staging.path))
        shutil.rmtree(staging.path / "trainer", ignore_errors=True)
        _copy_tokenizer(base, staging.path)
        history = [dict(h) for h in trainer.state.log_history]
        evals = [h["eval_loss"] for h in history if "eval_loss" in h]
        card = TrainCard(
            clinseek_version=__version__, base_model=str(base), base_model_config_sha256=sha256_file(base / "config.json"),
            rendered=str(rendered), render_report_sha256=sha256_file(rendered / "render_report.json"),
            tokenizer_sha256=report.tokenizer_sha256, family=report.family, tool_parser=report.tool_parser,
            template_kwargs=report.template_kwargs, config=config, train_samples=len(train["input_ids"]),
            train_tokens=sum(map(len, train["input_ids"])), train_loss_tokens=sum(map(sum, train["assistant_masks"])),
            val_samples=len(val["input_ids"]) if val else 0, steps=int(result.global_step),
            train_loss=float(result.training_loss) if result.training_loss is not None else None,
            eval_loss=float(evals[-1]) if evals else None, log_history=history,
            versions={"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
            device=device, wall_s=round(wall, 3),
            data_files={n: sha256_file(rendered / n) for n in ("train.parquet", "val.parquet") if (rendered / n).is_file()},
        )
        (staging.path / TRAINING_CARD).write_text(json.dumps(card.model_dump(mode="json"), indent=2) + "\n",
                                                  encoding="utf-8")
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    return card
