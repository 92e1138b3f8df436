"""``demo.json``: the configuration an OUT directory of ``clinseek demo`` was made with (resume key)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .._atomic import write_text_atomic
from ..errors import ClinseekError

CONFIG_FILE = "demo.json"
"""Name of the configuration file at the top of a demo directory."""

DEMO_MODELS = ("baseline:evidence", "baseline:null")
"""The offline baselines the demo runs (docs/agent.md): evidence-seeking rules, and the do-nothing floor."""


@dataclass(frozen=True, slots=True)
class DemoSettings:
    """Sizes and knobs of one demo run (all recorded in ``demo.json`` except ``progress``).

    The defaults run in a few minutes on 2 CPU cores (docs/demo.md gives measured times).
    """

    patients: int = 150
    """Synthetic patients (ignored when a store is given)."""
    per_task: int = 3
    """Questions per task (45 text subtasks and the multimodal categories)."""
    seed: int = 7
    """Seed of the synthetic store, the benchmark sampling and the runs."""
    concurrency: int = 4
    """Questions run at once per (model, mode)."""
    n_resamples: int = 2000
    """Paired bootstrap resamples per comparison group."""
    progress: bool = False
    """Show the runner's progress bars."""


class DemoConfig(BaseModel):
    """What a demo directory holds; a rerun with another configuration is refused, not mixed in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    store: str
    """The store the benchmark was drawn from (``store.duckdb`` inside OUT when synthesized)."""
    synthesized: bool
    """True when the demo synthesized the store itself."""
    patients: int | None
    """Synthetic patients; ``None`` for a given store."""
    per_task: int
    seed: int
    tasks: list[str] | None
    """Tasks asked for; ``None`` = every task the builder knows."""
    models: list[str]


def check_config(out: Path, config: DemoConfig) -> None:
    """Check that ``out`` may hold a demo of ``config``; writes nothing (see :func:`write_config`).

    ``out`` may be missing or empty, hold a ``demo.json`` equal to ``config`` (resume), or hold a
    ``demo.json`` and nothing else (a run that failed before its first stage finished: the folder
    is re-used with the new options).

    Raises:
        ClinseekError: OUT holds files but no ``demo.json`` (not a demo directory), or results
            and an unreadable ``demo.json`` or one of another configuration (names the first
            field that differs).
    """
    path = out / CONFIG_FILE
    if not path.exists():
        if out.exists() and any(out.iterdir()):
            raise ClinseekError(f"{out}: not empty and not a demo directory (no {CONFIG_FILE}); choose another --out")
        return
    if [p.name for p in out.iterdir()] == [CONFIG_FILE]:
        return  # no results yet: the options of a failed run do not lock the folder
    try:
        found = DemoConfig.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as err:
        raise ClinseekError(f"{path}: not a valid demo configuration: {err}") from None
    found = _normalized(found)
    if found != config:
        field = next(k for k in DemoConfig.model_fields if getattr(found, k) != getattr(config, k))
        raise ClinseekError(
            f"{path}: this directory was made with {field}={_shown(field, getattr(found, field))}, this run asks "
            f"for {_shown(field, getattr(config, field))}; use another --out (or the same options to resume)"
        )


def _normalized(found: DemoConfig) -> DemoConfig:
    """A ``demo.json`` of an earlier version: its store as this version names it (a synthesized store
    relative to OUT, a given one absolute, resolved from the current directory)."""
    store = Path(found.store)
    name = store.name if found.synthesized else str(store.resolve())
    return found if name == found.store else found.model_copy(update={"store": name})


def _shown(field: str, value: object) -> str:
    return "every task" if field == "tasks" and value is None else repr(value)


def write_config(out: Path, config: DemoConfig) -> None:
    """Write ``OUT/demo.json`` (atomically) once the demo's first stage has succeeded.

    Raises:
        OSError: OUT cannot be written.
    """
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / CONFIG_FILE, config.model_dump_json(indent=2) + "\n")
