"""docs/tasks.md is generated from the registry and up to date; docs/benchmarks.md names every command and task."""

from __future__ import annotations

from pathlib import Path

from clinseek.bench import MM_TASKS, TEXT_TASKS, tasks_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_committed_tasks_doc_is_up_to_date() -> None:
    committed = (DOCS / "tasks.md").read_text(encoding="utf-8")
    assert committed == tasks_markdown(), "docs/tasks.md is stale: run python scripts/gen_tasks_doc.py"


def test_every_task_has_a_section_with_a_label_definition() -> None:
    doc = tasks_markdown()
    for spec in TEXT_TASKS:
        assert f"### `{spec.name}`" in doc and spec.label_definition in doc
    for mm in MM_TASKS:
        assert f"### `{mm.category}`" in doc


def test_benchmarks_doc_names_the_commands_and_files() -> None:
    text = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    for needle in (
        "clinseek bench validate",
        "clinseek bench build",
        "clinseek bench join",
        "--release",
        "--store",
        "build_manifest.json",
        "ClinSeek-Bench_text.json",
        "ClinSeek-Bench_multimodal.jsonl",
        "future_select",
        "render_curated",
        "prescriptions_atc",
        "procedures_ccs",
    ):
        assert needle in text, needle
