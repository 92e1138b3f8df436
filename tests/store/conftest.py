"""Fixtures for store tests: README row counts and throw-away MIMIC-shaped source directories."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from clinseek.schema import tables

_README_ROW = re.compile(r"^\|\s*((?:hosp|icu|ed)/\w+)\.csv\.gz\s*\|\s*([\d,]+)\s*\|", re.MULTILINE)


def readme_counts(readme: Path, module_prefix: str) -> dict[str, int]:
    """``{"hosp.admissions": 275, ...}`` from a shared-data README's row-count table."""
    out = {}
    for stem, count in _README_ROW.findall(readme.read_text(encoding="utf-8")):
        module, name = stem.split("/")
        out[f"{module}.{name}"] = int(count.replace(",", ""))
    assert out, f"no row counts found in {readme}"
    return out


@pytest.fixture(scope="session")
def demo_counts(shared_data: Path) -> dict[str, int]:
    """Row count per table, as the MIMIC-IV demo and MIMIC-IV-ED demo READMEs state them."""
    counts = readme_counts(shared_data / "mimic-iv-demo-2.2" / "README.md", "hosp")
    counts.update(readme_counts(shared_data / "mimic-iv-ed-demo-2.2" / "README.md", "ed"))
    return counts


@pytest.fixture()
def mimic_dir(shared_data: Path, tmp_path: Path) -> Path:
    """A MIMIC-IV directory with only the required hosp/icu tables, linked to the demo's files.

    Tests replace single links with broken files; the demo itself is never modified.
    """
    demo = shared_data / "mimic-iv-demo-2.2"
    root = tmp_path / "mimic-iv"
    for table in tables(("hosp", "icu")):
        if table.required:
            (root / table.module).mkdir(parents=True, exist_ok=True)
            name = f"{table.name}.csv.gz"
            (root / table.module / name).symlink_to(demo / table.module / name)
    return root


def _replace(root: Path, stem: str, suffix: str, content: bytes) -> Path:
    """Replace ``root/<stem>.csv(.gz)`` (a link to the demo) with ``<stem><suffix>`` holding ``content``."""
    for old_suffix in (".csv.gz", ".csv"):
        old = root / (stem + old_suffix)
        if old.is_symlink() or old.exists():
            old.unlink()
    path = root / (stem + suffix)
    path.write_bytes(content)
    return path


@pytest.fixture()
def replace() -> Callable[[Path, str, str, bytes], Path]:
    """``replace(root, "hosp/labevents", ".csv", data)``: swap a demo link for a (broken) file."""
    return _replace
