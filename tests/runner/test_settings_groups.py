"""The five settings groups only arrange the settings: what a run records and hashes is what it was."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from clinseek.agent import PROMPT_VERSION, AgentBudget
from clinseek.imaging import ImagingConfig
from clinseek.models import GenerateConfig
from clinseek.runner import (
    ModelSettings,
    RetryPolicy,
    RunOptions,
    RunSettings,
    Sources,
    config_hash,
    run_benchmark,
)
from clinseek.tools import Limits


def test_grouped_settings_hash_the_configuration_as_flat_settings_did(synthetic_bench, synthetic_store: Path,
                                                                      tmp_path: Path) -> None:
    _, questions = synthetic_bench
    generate = GenerateConfig(temperature=0.5, timeout_s=30.0)
    budget, limits = AgentBudget(max_turns=7), Limits(max_rows=50)
    settings = RunSettings(model=ModelSettings(generate=generate, retry=RetryPolicy(max_attempts=2), vision=False),
                           run=RunOptions(seed=3, concurrency=2), budget=budget, limits=limits,
                           sources=Sources(max_images=2, imaging=ImagingConfig(device="cuda")))
    question = next(q for q in questions if q.task_type == "risk_prediction")
    summary = anyio.run(lambda: run_benchmark([question], synthetic_store, "agent", "baseline:null", tmp_path,
                                              settings=settings))
    manifest = json.loads((Path(summary.runs[0].out_dir) / "run_manifest.json").read_text())
    flat = {  # the configuration hash's input as the ungrouped RunSettings made it (docs/runner.md, "Resume")
        "vision": False, "knowledge": None, "mode": "agent", "model": "baseline:null", "base_url": None,
        "prompt_version": PROMPT_VERSION, "policies": [question.policy], "budget": budget.as_dict(),
        "limits": limits.as_dict(), "generate": generate.model_dump(mode="json", exclude={"seed", "max_output_tokens"}),
        "tools": manifest["tools"], "seed": 3, "images": None, "max_images": 2, "imaging": None,
        "tool_protocol": "native",
    }
    assert manifest["config_hash"] == config_hash(flat)
    assert (manifest["seed"], manifest["concurrency"], manifest["retry"]["max_attempts"]) == (3, 2, 2)
