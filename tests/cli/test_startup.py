"""``clinseek --help`` (and each command's ``--help``) loads only the command line: no store, no scorer,
no model SDK. Counted in a fresh interpreter, the way the console script starts (docs/cli: < 300 modules)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

MAX_MODULES = 300
HEAVY = ("duckdb", "pyarrow", "numpy", "scipy", "sqlglot", "rich", "anyio", "httpx", "httpx2", "openai",
         "anthropic", "PIL", "pydicom", "polars", "rapidfuzz", "bm25s", "torch", "transformers")
"""Packages a help text never needs (typer itself imports pydantic to coerce a command's options, so a
command's help has it; the top-level help does not)."""

_PROBE = """
import json, sys
sys.argv = ["clinseek", *{args!r}]
from clinseek.cli import main
try:
    main()
except SystemExit as done:
    code = done.code
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}), file=sys.stderr)
"""


def _help(*args: str) -> tuple[int, list[str], str]:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(args=list(args))], capture_output=True, text=True,
                          timeout=120)
    found = json.loads(done.stderr.strip().splitlines()[-1])
    return found["code"], found["modules"], done.stdout


@pytest.mark.parametrize("args", [("--help",), ("run", "--help"), ("bench", "build", "--help"), ("score", "--help"),
                                  ("demo", "--help"), ("data", "ingest", "--help")])
def test_help_imports_only_the_command_line(args: tuple[str, ...]) -> None:
    code, modules, text = _help(*args)
    assert code in (0, None) and "Usage: clinseek" in text
    assert len(modules) <= MAX_MODULES, f"{len(modules)} modules for clinseek {' '.join(args)}"
    heavy = set(HEAVY) | ({"pydantic"} if args == ("--help",) else set())
    loaded = sorted({m.split(".")[0] for m in modules} & heavy)
    assert not loaded, f"clinseek {' '.join(args)} imported {loaded}"
