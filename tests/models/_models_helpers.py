"""Shared bits of the models tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

SECRET = "sk-test-SECRET-0123456789abcdef"
"""The API key the tests use; it must never appear in any record or message."""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "ehr.run_sql_query",
            "description": "Run one read-only SQL query on the patient's records.",
            "parameters": {
                "type": "object",
                "properties": {"sql_query": {"type": "string"}},
                "required": ["sql_query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "ehr.finish",
            "description": "Submit the final answer.",
            "parameters": {
                "type": "object",
                "properties": {"response": {"type": "array", "items": {"type": "string"}}},
                "required": ["response"],
            },
        },
    },
    {"name": "browser.search", "description": "Search the web.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
]


def run(fn: Callable[[], Awaitable[T]]) -> T:
    """Run an async test body on a fresh event loop."""
    return anyio.run(fn)
