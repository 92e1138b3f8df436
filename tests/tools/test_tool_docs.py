"""docs/tools.md has a section for every registered tool, naming each of its arguments."""

from __future__ import annotations

from pathlib import Path

from clinseek.tools import get_tool, tool_names

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def _sections() -> dict[str, str]:
    text = DOCS.read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for chunk in text.split("\n## ")[1:]:
        title, _, body = chunk.partition("\n")
        out[title.strip()] = body
    return out


def test_every_tool_is_documented() -> None:
    sections = _sections()
    missing = [name for name in tool_names() if f"`{name}`" not in sections]
    assert not missing, f"docs/tools.md has no section for {missing}"


def test_every_argument_is_documented() -> None:
    sections = _sections()
    for name in tool_names():
        body = sections[f"`{name}`"]
        absent = [arg for arg in get_tool(name).arguments.model_fields if f"`{arg}`" not in body]
        assert not absent, f"docs/tools.md section {name} does not mention {absent}"
