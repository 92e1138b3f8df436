"""The ``clinseek`` command: a thin typed shell over the Python API.

Each command module registers its commands on the application from ``_app``; ``main`` turns a
:class:`~clinseek.errors.ClinseekError` (also one an anyio task group wrapped in an ``ExceptionGroup``)
into one message on stderr and exit code 2 (with the
traceback only under ``--debug``). Usage errors and explicit exit codes are handled by typer.

Exit codes: 0 done; 1 problems found by a checking command (``bench validate``, ``distill
prompts --check``); 2 a usage error or a :class:`~clinseek.errors.ClinseekError` (one line on
stderr; a store file DuckDB cannot read, truncated or damaged, is one too); 3 ``run`` / ``demo`` finished but rows with infrastructure errors remain (they are kept;
rerunning the same command resumes and redoes only those), or ``run`` stopped because its model endpoint stopped
answering (``EndpointGone``, one message; the same command resumes); 4 ``run`` finished but some manifest rows
could not run (recorded as ``invalid_input`` rows with their reasons); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

from ..errors import ClinseekError, is_interrupt
from . import _commands  # noqa: F401  (registers every command)
from ._app import app, state

INTERRUPTED = ("interrupted (Ctrl-C): what was already written is kept; the same command resumes "
               "(run, demo and data ingest redo only what is missing)")
"""The one line printed on Ctrl-C, whatever was running (exit code 130)."""


def main() -> None:
    """Entry point of the ``clinseek`` console script."""
    try:
        app()  # standalone: usage errors and typer.Exit codes become sys.exit here
    except SystemExit as done:
        if done.code == 130:  # typer turns a KeyboardInterrupt into a silent exit 130
            _interrupted()
        raise
    except (KeyboardInterrupt, Exception, BaseExceptionGroup) as err:  # else re-raised unless an interrupt or damage
        if state["debug"]:
            raise
        found = _clinseek_error(err)
        if found is not None:
            print(f"error: {found}", file=sys.stderr)
            sys.exit(2)
        if _damaged_store(err):
            sys.exit(2)
        if not _all_leaves(err, is_interrupt):
            raise
        _interrupted()
        sys.exit(130)


def _leaves(err: BaseException) -> list[BaseException]:
    if isinstance(err, BaseExceptionGroup):
        return [leaf for inner in err.exceptions for leaf in _leaves(inner)]
    return [err]


def _all_leaves(err: BaseException, test: Callable[[BaseException], bool]) -> bool:
    leaves = _leaves(err)
    return bool(leaves) and all(test(leaf) for leaf in leaves)


def _clinseek_error(err: BaseException) -> ClinseekError | None:
    """The ``ClinseekError`` to print for ``err``: itself, or the first of an exception group whose every
    exception is one (an anyio task group, such as the MCP server's, wraps what its tasks raise in an
    ``ExceptionGroup``, which would otherwise reach the user as a traceback); else ``None``."""
    if isinstance(err, ClinseekError):
        return err
    if not _all_leaves(err, lambda leaf: isinstance(leaf, ClinseekError)):
        return None
    first = _leaves(err)[0]
    assert isinstance(first, ClinseekError)
    return first


def _interrupted() -> None:
    """Say the run was interrupted; a second Ctrl-C while shutting down changes nothing (exit stays 130)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(INTERRUPTED, file=sys.stderr)


def _damaged_store(err: BaseException) -> bool:
    """Print one line for DuckDB failing to read a damaged store file that no layer named; True if it was one.

    The layers that open stores name the file themselves (a truncated file is refused when opened,
    a damaged block read by an episode or a run is a ``StoreError``); this covers any other read.
    The files named are the DuckDB files among the command's arguments.
    """
    from ..store import damage_error, is_damage

    if not is_damage(err):
        return False
    files = [a for a in sys.argv[1:] if _is_duckdb_file(a)]
    print(f"error: {damage_error(', '.join(files) or 'a store file', err)}", file=sys.stderr)
    return True


def _is_duckdb_file(arg: str) -> bool:
    try:
        with open(arg, "rb") as fh:
            return fh.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


__all__ = ["INTERRUPTED", "app", "main"]
