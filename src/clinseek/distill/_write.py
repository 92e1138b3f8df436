"""Writing a dataset folder: JSONL and Parquet samples, refusals, the card; all or nothing.

Parquet keeps ``messages`` and ``tools`` as JSON text columns. A Parquet struct column must have
one field set for every row, so storing per-tool argument objects there would merge the keys of
every tool into every call (``{"sql_query": .., "response": null, ...}``) and a chat template would
render those nulls as parameters. ``json.loads`` of the two columns gives the exact objects of
``train.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .._atomic import staging_dir
from ..errors import ClinseekError
from ._model import Refusal, Sample

_SCALARS: tuple[tuple[str, pa.DataType], ...] = (
    ("sample_id", pa.string()), ("split", pa.string()), ("qid", pa.string()), ("run_index", pa.int32()), ("benchmark", pa.string()),
    ("task", pa.string()), ("task_type", pa.string()), ("category", pa.string()), ("subject_id", pa.int64()),
    ("prediction_time", pa.string()), ("teacher_model", pa.string()), ("source_run", pa.string()),
    ("prompt_version", pa.string()), ("f1", pa.float64()), ("n_tokens", pa.int64()), ("length_method", pa.string()),
    ("n_assistant_turns", pa.int32()), ("n_tool_calls", pa.int32()), ("n_tool_errors", pa.int32()),
    ("system_sha256", pa.string()), ("tools_sha256", pa.string()),
)
PARQUET_SCHEMA = pa.schema([*(pa.field(n, t) for n, t in _SCALARS), pa.field("messages", pa.string()),
                            pa.field("tools", pa.string())])
"""Columns of ``train.parquet``: the :class:`Sample` fields; ``messages`` and ``tools`` as JSON text."""


def sample_table(samples: Sequence[Sample]) -> pa.Table:
    """The samples as an Arrow table with :data:`PARQUET_SCHEMA`."""
    rows = []
    for sample in samples:
        row = sample.model_dump(exclude={"schema_version", "messages", "tools"})
        row["messages"] = json.dumps(sample.messages, ensure_ascii=False)
        row["tools"] = json.dumps(sample.tools, ensure_ascii=False)
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=PARQUET_SCHEMA)


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_jsonl(path: Path, records: Sequence[Sample] | Sequence[Refusal]) -> None:
    """One JSON object per line, in the given order."""
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")


def write_samples(folder: Path, samples: Sequence[Sample], refusals: Sequence[Refusal], *,
                  with_val: bool = False) -> dict[str, str]:
    """Write ``train.{jsonl,parquet}`` (and ``val.{jsonl,parquet}`` when ``with_val``) and
    ``refused.jsonl`` into ``folder``; returns the SHA-256 of each file."""
    names = ["refused.jsonl"]
    write_jsonl(folder / "refused.jsonl", refusals)
    for split in ("train", "val") if with_val else ("train",):
        chosen = [s for s in samples if s.split == split]
        write_jsonl(folder / f"{split}.jsonl", chosen)
        pq.write_table(sample_table(chosen), folder / f"{split}.parquet", compression="zstd")
        names += [f"{split}.jsonl", f"{split}.parquet"]
    return {name: sha256_file(folder / name) for name in sorted(names)}


def check_out(out: Path) -> None:
    """Refuse an output folder that exists and is not empty (a dataset is never half-overwritten).

    Raises:
        ClinseekError: ``out`` is a file, or a non-empty folder.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ClinseekError(f"{out}: output exists and is not an empty folder; choose another --out (a new or empty folder)")


class StagingDir:
    """A temporary folder beside ``out`` that becomes ``out`` on :meth:`commit`, or is removed."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = staging_dir(out)

    def commit(self) -> None:
        """Move the staged folder to ``out`` (an empty ``out`` is replaced)."""
        if self.out.exists():
            self.out.rmdir()
        os.replace(self.path, self.out)

    def discard(self) -> None:
        """Remove the staged folder (after a failure)."""
        shutil.rmtree(self.path, ignore_errors=True)
