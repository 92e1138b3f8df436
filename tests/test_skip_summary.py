"""The session summary counts skipped tests by what would run them (tests/conftest.py), so a checkout
without ../shared/data says once how many tests it skipped and how to enable them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_tests_without_the_shared_data_are_counted_with_the_variable_that_enables_them(tmp_path: Path) -> None:
    tests = ["tests/cli/test_cli_errors.py::test_ingest_without_sources_names_the_options",
             "tests/cli/test_cli_errors.py::test_ctrl_c_during_ingest_without_progress_exits_130_with_one_line"]
    env = {**os.environ, "CLINSEEK_SHARED_DATA": str(tmp_path / "absent")}
    out = subprocess.run([sys.executable, "-m", "pytest", *tests, "-p", "no:cacheprovider", "-q"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300).stdout
    assert "1 passed, 1 skipped" in out, out
    assert "1 skipped, by what would run them (pytest -rs lists each)" in out
    assert (f"    1  need the open MIMIC-IV demo (and -ED demo, CXR samples), not found at {tmp_path / 'absent'}: "
            "set CLINSEEK_SHARED_DATA") in out


def test_skips_for_a_missing_extra_name_the_install_command() -> None:
    from conftest import SHARED_DATA_SKIP, _skip_groups

    groups = dict((what, n) for n, what in _skip_groups([
        "could not import 'torch': No module named 'torch'", "could not import 'torchxrayvision': No module",
        f"{SHARED_DATA_SKIP} /x (set CLINSEEK_SHARED_DATA)", "Chromium not installed (apt-get install chromium)",
    ]))
    assert groups["need the [imaging] extra: pip install -e '.[dev,imaging]'"] == 2
    assert groups["Chromium not installed (apt-get install chromium)"] == 1
    assert next(iter(groups)).startswith("need the open MIMIC-IV demo")  # shared data first
