"""The ``clinseek`` command: a thin typed shell over the Python API.

Each command module registers its commands on the application from ``_app``; ``main`` turns a
:class:`~clinseek.errors.ClinseekError` into one message on stderr and exit code 2 (with the
traceback only under ``--debug``). Usage errors and explicit exit codes are handled by typer.

Exit codes: 0 done; 1 problems found by a checking command (``bench validate``, ``distill
prompts --check``); 2 a usage error or a :class:`~clinseek.errors.ClinseekError` (one line on
stderr; a store file DuckDB cannot read, truncated or damaged, is one too); 3 ``run`` / ``demo`` finished but rows with infrastructure errors remain (they are kept;
rerunning the same command resumes and redoes only those); 4 ``run`` finished but some manifest rows
could not run (recorded as ``invalid_input`` rows with their reasons); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import signal
import sys

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
    except ClinseekError as err:
        if state["debug"]:
            raise
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except (KeyboardInterrupt, Exception) as err:  # anything but an interrupt or a damaged store is re-raised
        if state["debug"]:
            raise
        if _damaged_store(err):
            sys.exit(2)
        if not is_interrupt(err):
            raise
        _interrupted()
        sys.exit(130)


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
