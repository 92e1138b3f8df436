"""``clinseek knowledge ...``: build the offline knowledge index and try the browser from the shell."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app

if TYPE_CHECKING:
    from ..knowledge import Knowledge

knowledge_app = typer.Typer(
    help="Knowledge for the browser tools: build the offline index, search it or a web backend.",
    no_args_is_help=True,
)
app.add_typer(knowledge_app, name="knowledge")

_KEY_ENV = {"serper": "SERPER_API_KEY", "brave": "BRAVE_API_KEY"}
CacheDir = Annotated[Path, typer.Option(help="Index and web-response cache (default ~/.cache/clinseek/knowledge).")]
Store = Annotated[Path | None, typer.Option(help="A clinseek store: its dictionaries and lab reference ranges.")]
Folder = Annotated[list[Path] | None, typer.Option("--folder", help="A folder of .md/.html/.txt/.pdf (repeatable).")]


def _default_cache() -> Path:
    return Path(os.environ.get("CLINSEEK_CACHE_DIR") or Path.home() / ".cache" / "clinseek") / "knowledge"


def _open(backend: str, cache_dir: Path | None, store: Path | None, folders: list[Path] | None,
          base_url: str | None = None, cache_mode: str = "read_write", tasks: bool = True) -> Knowledge:
    from ..knowledge import KnowledgeConfig

    config = KnowledgeConfig(
        backend=backend,  # type: ignore[arg-type]
        api_key=os.environ.get(_KEY_ENV.get(backend, "")) if backend in _KEY_ENV else None,
        base_url=base_url, cache_dir=cache_dir or _default_cache(), cache_mode=cache_mode,  # type: ignore[arg-type]
        store=store, folders=tuple(folders or ()),
    )
    from ..runner import open_knowledge_source

    return open_knowledge_source(config, tasks=tasks)


@knowledge_app.command("build")
def build_cmd(cache_dir: CacheDir = None,  # type: ignore[assignment]
              store: Store = None, folder: Folder = None,
              tasks: Annotated[bool, typer.Option(help="Add the benchmark task definitions.")] = True) -> None:
    """Build (or load) the offline index and print what it holds, as JSON."""
    knowledge = _open("offline", cache_dir, store, folder, tasks=tasks)
    typer.echo(json.dumps(knowledge.describe(), indent=2))


@knowledge_app.command("search")
def search_cmd(query: str, topn: Annotated[int, typer.Option(min=1, help="Results to list.")] = 10,
               backend: Annotated[str, typer.Option(help="offline, serper, brave, searxng or duckduckgo.")] = "offline",
               base_url: Annotated[str | None, typer.Option(help="Endpoint of the web backend.")] = None,
               cache_dir: CacheDir = None,  # type: ignore[assignment]
               cache_mode: Annotated[str, typer.Option(help="read_write, replay or off.")] = "read_write",
               store: Store = None, folder: Folder = None) -> None:
    """Print what browser.search shows the model for QUERY (API keys from SERPER_API_KEY / BRAVE_API_KEY)."""
    from ..tools import PageBrowser

    result = PageBrowser(_open(backend, cache_dir, store, folder, base_url, cache_mode)).search(query, topn)
    typer.echo(result.content)
