"""A command that needs an extra that is not installed says exactly what to install, in one line (the
model SDKs are extras since the base install holds only what the offline demo needs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clinseek.bench import build_benchmark

_WITHOUT = """
import sys
for name in {absent!r}:
    sys.modules[name] = None  # as if not installed: `import name` raises ModuleNotFoundError
sys.argv = ["clinseek", *{args!r}]
from clinseek.cli import main
main()
"""


def _clinseek_without(absent: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT.format(absent=absent, args=args)], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def one_question(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("extras") / "bench"
    build_benchmark(synthetic_store, tasks=["ED_Hospitalization"], per_task=1, out=out)
    return out


@pytest.mark.parametrize(("model", "absent", "extra"), [
    ("openai:gpt-5.1", ["aiohttp"], "openai"),
    ("anthropic:claude-opus-4-6", ["anthropic"], "anthropic"),
    ("bedrock:us.anthropic.claude-opus-4-6-v1", ["anthropic"], "bedrock"),
])
def test_run_with_a_model_whose_sdk_is_absent_names_the_extra(model: str, absent: list[str], extra: str,
                                                               one_question: Path, synthetic_store: Path,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "runs"
    done = _clinseek_without(absent, ["run", "--bench", str(one_question), "--store", str(synthetic_store),
                                      "--model", model, "--mode", "curated", "--out", str(out), "--no-progress"])
    assert done.returncode == 2, done.stderr
    from clinseek.errors import install_hint

    assert done.stderr.strip().splitlines()[-1] == (
        f"error: {model} needs the optional extra [{extra}]: "
        + install_hint(extra, f"{'aiohttp' if extra == 'openai' else 'the Anthropic SDK'} is not installed"))
    assert not any(out.rglob("results*.jsonl"))  # refused before any row is written


def test_the_offline_demo_commands_need_no_model_sdk(one_question: Path, synthetic_store: Path,
                                                     tmp_path: Path) -> None:
    done = _clinseek_without(["openai", "anthropic", "httpx2", "scipy"],
                             ["run", "--bench", str(one_question), "--store", str(synthetic_store), "--model",
                              "baseline:evidence", "--mode", "both", "--out", str(tmp_path / "r"), "--no-progress"])
    assert done.returncode == 0, done.stderr
    done = _clinseek_without(["openai", "anthropic", "httpx2", "scipy"], ["score", str(tmp_path / "r")])
    assert done.returncode == 0, done.stderr
