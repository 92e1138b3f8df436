"""The documented error tree is complete: every exception class clinseek defines is a ClinseekError and
is shown in the tree of ``clinseek.errors`` and of ``docs/errors.md``."""

from __future__ import annotations

import ast
from pathlib import Path

import clinseek.errors

REPO = Path(__file__).resolve().parents[1]
_BUILTIN = {"Exception", "BaseException", "ValueError", "RuntimeError", "KeyError", "TypeError", "OSError",
            "LookupError", "ImportError", "ArithmeticError"}


def _exception_classes() -> dict[str, set[str]]:
    """Every exception class defined under src/clinseek: name -> the names of its bases."""
    classes: dict[str, set[str]] = {}
    for path in (REPO / "src" / "clinseek").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = {b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases}
    errors = {"ClinseekError"}
    while True:
        more = {n for n, bases in classes.items() if bases & (errors | _BUILTIN)} - errors
        if not more:
            return {n: classes[n] for n in errors}
        errors |= more


def _is_clinseek_error(name: str, classes: dict[str, set[str]]) -> bool:
    return name == "ClinseekError" or any(_is_clinseek_error(b, classes) for b in classes[name] & set(classes))


def test_every_exception_is_a_clinseek_error_in_both_trees() -> None:
    classes = _exception_classes()
    assert {"ModelCallError", "ParseFailure", "MaskError", "AnswerFormatError"} <= set(classes)
    tree_in_code = clinseek.errors.__doc__ or ""
    tree_in_docs = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    for name in set(classes) - {"ClinseekError"}:
        assert _is_clinseek_error(name, classes), f"{name} is not a ClinseekError"
        assert f"─ {name} " in tree_in_code, f"{name} is missing from the tree in clinseek/errors.py"
        assert f"─ {name} " in tree_in_docs, f"{name} is missing from the tree in docs/errors.md"
