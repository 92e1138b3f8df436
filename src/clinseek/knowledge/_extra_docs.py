"""Corpus documents from outside the bundled sources: a user's folder, and injected task definitions.

Task definitions live in ``clinseek.bench``, above this package; the caller (runner, CLI) passes
them in as objects with the attributes of :class:`TaskLike`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Protocol

from ._document import KnowledgeDocument, kb_url

FOLDER_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf")
"""File suffixes read from a user's folder (PDF only when ``pypdf`` is installed)."""


class TaskLike(Protocol):
    """The attributes of a benchmark task definition (``clinseek.bench.TaskSpec``) the corpus uses."""

    @property
    def name(self) -> str: ...
    @property
    def task_type(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def instruction(self) -> str: ...
    @property
    def prediction_time(self) -> str: ...
    @property
    def label_definition(self) -> str: ...
    @property
    def candidate_source(self) -> str: ...
    @property
    def label_source(self) -> str: ...


def task_documents(tasks: Iterable[TaskLike]) -> list[KnowledgeDocument]:
    """One document per benchmark task: instruction, prediction time, label definition, candidates."""
    out = []
    for task in tasks:
        text = "\n".join([
            f"# Task {task.name} ({task.task_type}, category {task.category})",
            f"Instruction: {task.instruction}",
            f"Prediction time: {task.prediction_time}",
            f"Label definition: {task.label_definition}",
            f"Candidate answers: {task.candidate_source}",
            f"Source: {task.label_source}",
        ])
        out.append(KnowledgeDocument(kb_url("tasks", task.name), f"Task definition: {task.name}", text, "tasks"))
    return out


class _TextOnly(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template", "head"})
    _BLOCK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip += 1
        self._in_title = tag == "title"
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skip:
            self._skip -= 1
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data.strip()
        elif not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, plain text) of an HTML document with the standard library (no extra needed)."""
    parser = _TextOnly()
    parser.feed(html)
    parser.close()
    text = re.sub(r"[ \t]+", " ", "".join(parser.parts))
    text = re.sub(r"\n\s*\n+", "\n\n", text).strip()
    return parser.title, text


def _pdf_text(path: Path) -> str | None:
    try:
        from pypdf import PdfReader
    except ImportError:
        return None
    try:
        return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)
    except OSError:
        raise
    except Exception as err:  # pypdf raises its own error tree for damaged files
        raise ValueError(f"not a readable PDF: {err}") from err


def read_document_file(path: Path, root: Path) -> KnowledgeDocument | None:
    """A document from one file of a user's folder, or ``None`` for an unsupported file.

    Raises:
        OSError, UnicodeDecodeError, ValueError: the file cannot be read or parsed (the caller
            records the problem and goes on with the next file).
    """
    suffix = path.suffix.lower()
    title = ""
    if suffix == ".pdf":
        text = _pdf_text(path)
        if text is None:
            return None
    else:
        text = path.read_text(encoding="utf-8")
        if suffix in (".html", ".htm"):
            title, text = html_to_text(text)
    heading = re.search(r"^#\s+(.+)$", text, flags=re.MULTILINE)
    title = title or (heading.group(1).strip() if heading else path.stem.replace("_", " "))
    return KnowledgeDocument(path.resolve().as_uri(), title, text, f"folder:{root.name}")


def folder_documents(root: Path) -> tuple[list[KnowledgeDocument], list[str]]:
    """Documents from every supported file under ``root`` (recursively, sorted by path).

    Returns:
        (documents, problems): a file that cannot be read is skipped and named in ``problems``
        as ``"<path>: <what went wrong>"``; the other files still count.
    """
    docs: list[KnowledgeDocument] = []
    problems: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES):
        try:
            doc = read_document_file(path, root)
        except (OSError, UnicodeDecodeError, ValueError) as err:
            problems.append(f"{path}: cannot read as {path.suffix.lower()[1:]} ({err.__class__.__name__}: {err})")
            continue
        if doc is None:
            problems.append(f"{path}: skipped (PDF needs the optional package pypdf)")
        elif doc.text.strip():
            docs.append(doc)
    return docs, problems
