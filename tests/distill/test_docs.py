"""docs/distill.md covers every option, filter setting and refusal reason (STYLE rule 17)."""

from __future__ import annotations

import inspect
import typing
from pathlib import Path

import pytest

from clinseek.cli._distill import card_cmd, export_cmd, prompts_cmd, render_cmd, serve_cmd, train_cmd
from clinseek.distill import ExportFilters, RefusalReason

DOCS = Path(__file__).resolve().parents[2] / "docs" / "distill.md"


@pytest.mark.parametrize("command", [export_cmd, render_cmd, prompts_cmd, card_cmd, train_cmd, serve_cmd])
def test_every_option_is_documented(command) -> None:
    text = DOCS.read_text()
    skip = {"runs", "dataset", "rendered", "model"}  # positional arguments
    options = [f"--{n.replace('_', '-')}" for n in inspect.signature(command).parameters if n not in skip]
    assert [o for o in options if o not in text] == []


def test_every_refusal_reason_is_documented() -> None:
    text = DOCS.read_text()
    assert [r for r in typing.get_args(RefusalReason) if f"`{r}`" not in text] == []


def test_every_filter_setting_has_an_option() -> None:
    text = DOCS.read_text()
    fields = [f for f in ExportFilters.model_fields if f != "exclude_benchmarks"]
    assert [f for f in fields if f"--{f.replace('_', '-')}" not in text] == []


def test_public_names_are_exported_sorted() -> None:
    import clinseek.distill as distill

    def isort_style(name: str) -> tuple[int, str]:  # ruff RUF022: CONSTANTS, then Classes, then functions
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert distill.__all__ == sorted(distill.__all__, key=isort_style)
    assert all(hasattr(distill, name) for name in distill.__all__)


def test_every_template_family_is_documented() -> None:
    from clinseek.distill import TEMPLATE_FAMILIES

    text = DOCS.read_text()
    assert [f for f in TEMPLATE_FAMILIES if f"| `{f}` |" not in text] == []
