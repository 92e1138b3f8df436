"""Optional extras: a missing package names its extra; an installed package whose own dependency is
missing says what is missing (never "install clinseek[web]" when clinseek[web] is installed)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import clinseek.errors as clinseek_errors
from clinseek.errors import MissingExtraError, import_optional, install_hint


def _package(root: Path, name: str, body: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(textwrap.dedent(body))


def test_an_absent_package_names_the_extra_to_install() -> None:
    with pytest.raises(MissingExtraError) as info:
        import_optional("clinseek_no_such_package", "browser.open on web pages", "web")
    assert info.value.module_absent
    assert str(info.value) == ("browser.open on web pages needs the optional extra [web]: "
                               + install_hint("web", "clinseek_no_such_package is not installed"))
    assert str(info.value).startswith("browser.open on web pages needs the optional extra [web]: pip install "
                                      "'clinseek[web]' (clinseek_no_such_package is not installed")


def test_the_install_hint_of_a_checkout_names_this_environment_s_python() -> None:
    """newcomer21: the hint said ``pip install 'clinseek[openai]'``, which fails with a shell's pip of another
    environment and without clinseek on an index; a source checkout also gets the exact command."""
    hint = install_hint("openai")
    root = Path(__file__).resolve().parents[1]
    assert hint.startswith("pip install 'clinseek[openai]'")
    if (root / "src" / "clinseek" / "errors.py").resolve() == Path(clinseek_errors.__file__).resolve():
        assert hint.endswith(f"(from this checkout: {sys.executable} -m pip install -e '{root}[openai]')"), hint


def test_an_installed_package_with_a_missing_dependency_names_that_dependency(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, "clinseek_fake_extractor", "import clinseek_fake_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError) as info:
        import_optional("clinseek_fake_extractor", "browser.open on web pages", "web")
    message = str(info.value)
    assert not info.value.module_absent and "pip install 'clinseek[web]'" not in message
    assert "clinseek_fake_extractor (extra [web]), which is installed but cannot be imported" in message
    assert "No module named 'clinseek_fake_missing_dependency'" in message


def test_an_installed_package_whose_import_raises_quotes_the_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, "clinseek_fake_cleaner", """\
        raise ImportError("lxml.html.clean module is now a separate project lxml_html_clean.")
    """)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError, match="separate project lxml_html_clean") as info:
        import_optional("clinseek_fake_cleaner", "browser.open on web pages", "web")
    assert "pip install" not in str(info.value)


def test_web_pages_are_cleaned_with_the_declared_dependencies() -> None:
    """The [web] / [dev] extras bring what trafilatura imports (lxml_html_clean since lxml 5.2)."""
    from clinseek.knowledge._fetch import clean_html

    html = "<html><head><title>Hyponatremia</title></head><body><p>" + "sodium " * 300 + "</p></body></html>"
    title, text = clean_html(html, "https://example.org/na")
    assert title == "Hyponatremia" and text.startswith("sodium sodium")


def test_trafilatura_without_lxml_html_clean_says_so(tmp_path: Path) -> None:
    """What a user sees when trafilatura's own dependency is missing (as on a fresh machine before the
    extras declared it): the real import error, in a separate interpreter where it is hidden."""
    script = textwrap.dedent("""\
        import sys
        from importlib.abc import MetaPathFinder

        class Hide(MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "lxml_html_clean":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Hide())
        from clinseek.knowledge._fetch import clean_html
        try:
            clean_html("<html><body><p>text</p></body></html>", "https://example.org/")
        except Exception as err:
            print(type(err).__name__, err)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.stdout.startswith("MissingExtraError browser.open on web pages needs trafilatura"), out
    assert "lxml_html_clean" in out.stdout and "pip install 'clinseek[web]'" not in out.stdout


def test_the_readme_tip_for_one_folder_names_the_dev_extra() -> None:
    """fixnc21: the tip assumed [dev]; a bare pytest stops at the unknown `timeout` option (pytest-timeout's)."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert "timeout" in project["tool"]["pytest"]["ini_options"]
    assert any(d.startswith("pytest-timeout") for d in project["project"]["optional-dependencies"]["dev"])
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    assert ("Run one folder alone with `.venv/bin/python -m pytest tests/policy` (it needs the `[dev]` extra, as "
            "above: its pytest-timeout reads the `timeout` setting of `pyproject.toml`; a bare `pip install pytest` "
            "stops at `Unknown config option: timeout`).") in readme


def test_the_demo_asks_for_the_openai_extra_only_while_it_is_missing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """newcomer25: the demo's next steps said "its SDK: pip install 'clinseek[openai]'" in a venv that had the
    extra, which brings no SDK (aiohttp and httpx2)."""
    import importlib.util

    from clinseek.demo import _next

    monkeypatch.setattr(_next, "_example", lambda bench: None)
    real = importlib.util.find_spec

    def llm_step() -> str:
        return next(what for what, _ in _next.next_steps(tmp_path, tmp_path / "store.duckdb") if "a real LLM" in what)

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "aiohttp" else real(name, *a))
    assert llm_step() == "a real LLM (OPENAI_API_KEY)"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "aiohttp" else real(name, *a))
    assert llm_step() == f"a real LLM (OPENAI_API_KEY; its extra: {install_hint('openai')})"
