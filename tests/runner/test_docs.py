"""docs/runner.md and docs/agent.md cover every option, setting and budget (STYLE rule 17)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

from clinseek.agent import AgentBudget
from clinseek.cli._run import run_cmd
from clinseek.runner import ModelSettings, RunOptions, RunSettings, Sources

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_run_option_is_documented() -> None:
    text = (DOCS / "runner.md").read_text()
    options = [f"--{name.replace('_', '-')}" for name in inspect.signature(run_cmd).parameters]
    missing = [o for o in options if o not in text]
    assert not missing, f"docs/runner.md does not mention {missing}"


def test_every_run_setting_and_budget_is_documented() -> None:
    runner_text = (DOCS / "runner.md").read_text()
    agent_text = (DOCS / "agent.md").read_text()
    assert [f.name for f in dataclasses.fields(RunSettings) if f"`{f.name}`" not in runner_text] == []
    grouped = [f.name for group in (ModelSettings, RunOptions, Sources) for f in dataclasses.fields(group)]
    assert [name for name in grouped if f"`{name}`" not in runner_text] == []
    assert [f.name for f in dataclasses.fields(AgentBudget) if f"`{f.name}`" not in agent_text] == []
