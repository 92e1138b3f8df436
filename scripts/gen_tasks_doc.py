"""Regenerate docs/tasks.md from the task registry: ``python scripts/gen_tasks_doc.py``."""

from __future__ import annotations

from pathlib import Path

from clinseek.bench import tasks_markdown

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "docs" / "tasks.md"
    target.write_text(tasks_markdown(), encoding="utf-8")
    print(f"wrote {target}")
