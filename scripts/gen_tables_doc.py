"""Regenerate docs/tables.md from the schema registry (``python scripts/gen_tables_doc.py``)."""

from __future__ import annotations

from pathlib import Path

from clinseek.schema import tables_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "tables.md"

if __name__ == "__main__":
    DOC.write_text(tables_markdown(), encoding="utf-8")
    print(f"wrote {DOC}")
