"""The ``clinseek`` command: a thin typed shell over the Python API.

Each command module registers its commands on the application from ``_app``; ``main`` turns a
:class:`~clinseek.errors.ClinseekError` into one message on stderr and exit code 2.
"""

from __future__ import annotations

import sys

from ..errors import ClinseekError
from . import _commands  # noqa: F401  (registers every command)
from ._app import app, state


def main() -> None:
    """Entry point of the ``clinseek`` console script."""
    try:
        code = app(standalone_mode=False)
    except ClinseekError as err:
        if state["debug"]:
            raise
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    except SystemExit:
        raise
    except Exception as err:  # click usage errors arrive here with standalone_mode=False
        import click

        if isinstance(err, click.exceptions.ClickException):
            err.show()
            sys.exit(err.exit_code)
        if isinstance(err, click.exceptions.Abort):
            print("aborted", file=sys.stderr)
            sys.exit(1)
        raise
    # with standalone_mode=False click returns the code of typer.Exit / ctx.exit instead of exiting
    if isinstance(code, int) and code != 0:
        sys.exit(code)


__all__ = ["app", "main"]
