"""Ray is imported only by a run on the Ray executor: never by ``clinseek --help``, ``clinseek run
--help``, the runner package or a local run; without the extra, ``--executor ray`` names it."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_help_and_the_runner_do_not_import_ray() -> None:
    out = _python("""\
        import contextlib, io, sys
        from clinseek.cli import app
        for argv in (["--help"], ["run", "--help"]):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
                app(argv)
        import clinseek.runner, clinseek.runner._ray, clinseek.runner._ray_worker
        print(sorted(m for m in sys.modules if m.split(".")[0] == "ray"))
    """)
    assert out == "[]"


def test_the_ray_executor_without_the_extra_names_it(tmp_path) -> None:
    out = _python(f"""\
        import sys
        from importlib.abc import MetaPathFinder

        class Hide(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "ray":
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, Hide())
        import anyio
        from clinseek.runner import RunOptions, RunSettings
        from clinseek.runner._ray import RayExecutor
        try:
            RayExecutor("openai:m", RunSettings(run=RunOptions(executor="ray")), {str(tmp_path / 's.duckdb')!r}, None)
        except Exception as err:
            print(type(err).__name__, err)
    """)
    assert out.startswith("MissingExtraError") and "pip install 'clinseek[ray]'" in out and "--executor ray" in out
