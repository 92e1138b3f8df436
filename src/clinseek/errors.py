"""Every error clinseek raises on purpose.

The tree is shallow; each error keeps the data it points at as attributes. The classes defined here
are importable from ``clinseek.errors``; the others from the package named in brackets::

    ClinseekError
    ├── RegistryError          a name registered twice, or an unknown registry name
    ├── StoreError             a store file that cannot be opened or is not a clinseek store
    │   └── IngestError        a source file that cannot be ingested (file, line, column, problem)
    ├── PolicyError            an unknown policy version or an invalid episode key
    ├── EpisodeError           an episode that cannot be built (unknown subject, …)
    │   ├── EpisodeTimeout     a query on a sealed episode ran past its time limit
    │   └── EpisodeQueryError  SQL a sealed episode refuses (not one read-only query)
    ├── ToolError              a problem the *model* can fix; returned to it as a structured error
    ├── ManifestError          a benchmark manifest row that does not validate (file, row, field)
    ├── ModelError             a model provider that is misconfigured (unknown provider, missing key)
    ├── ModelCallError         a model call failed (provider, model, status) [clinseek.models]
    │   ├── RateLimited            HTTP 429 / throttling; retried after ``retry_after_s``
    │   ├── ProviderUnavailable    HTTP 5xx / 408 / 529, connection error, timeout; retried
    │   ├── ContextLengthExceeded  the request does not fit the context window; not retried as is
    │   ├── PromptRefused          the provider's content filter refused the prompt; not retried, no answer
    │   └── BadRequest             any other 4xx (parameters, auth, unknown model); never retried
    ├── EndpointGone           a run stopped: its model endpoint stopped answering (calls with no reply) [clinseek.runner]
    ├── AnswerFormatError      a Curated Input reply without one well-formed <answer> block [clinseek.agent]
    ├── MissingExtraError      an optional dependency that is not installed (names the extra) or broken
    ├── ImagingError           a linked CXR image or report file that cannot be found or read
    ├── BackendUnavailable     an imaging backend whose package or weights are absent [clinseek.imaging]
    ├── ScoringError           results that cannot be scored (file, row, field)
    ├── ReportError            a report input folder with no scores or results, or runs given twice
    ├── PoolBusy               the MCP HTTP server's open episodes are all in use [clinseek.mcpserver]
    ├── ParseFailure           a <tool_call> block a chat-template parser cannot read [clinseek.distill]
    └── MaskError              an assistant-only loss mask that cannot be computed faithfully [clinseek.distill]

``ParseFailure`` and ``MaskError`` are also ``ValueError``. Only ``ToolError`` reaches the model. Any
other exception raised while a question runs ends that run as an infrastructure error, never as a
wrong answer. ``docs/errors.md`` shows the same tree with what the command line does with each.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from pathlib import Path
from types import ModuleType


class ClinseekError(Exception):
    """Base of every error clinseek raises on purpose."""


class RegistryError(ClinseekError):
    """A registry name was registered twice, or looked up and not found."""


class StoreError(ClinseekError):
    """A store could not be opened, or is not a clinseek store."""


class IngestError(StoreError):
    """A source file (or PostgreSQL relation) could not be ingested.

    Attributes:
        path: the source file (for a PostgreSQL source: its location, ``postgresql://user@host:port/db#schema.table``,
            as given in the message; ``Path`` collapses its ``//``).
        line: 1-based line number in the file of the first offending row (header = line 1),
            or ``None`` when the problem is not tied to a line.
        column: the offending column, or ``None``.
        problem: what was expected and what was found.
    """

    def __init__(
        self, path: Path | str, problem: str, *, line: int | None = None, column: str | None = None
    ) -> None:
        self.path = Path(path)
        self.line = line
        self.column = column
        self.problem = problem
        where = str(path)
        if line is not None:
            where += f":{line}"
        if column is not None:
            where += f": column {column!r}"
        super().__init__(f"{where}: {problem}")


class PolicyError(ClinseekError):
    """An unknown policy version, or an episode key the policy cannot apply."""


class EpisodeError(ClinseekError):
    """An episode could not be built (for example, the subject is not in the store)."""


class EpisodeTimeout(EpisodeError):
    """A query on a sealed episode ran past its time limit and was interrupted.

    Attributes:
        timeout_s: the limit, in seconds.
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(f"query interrupted after {timeout_s:g} s (time limit); narrow it or add LIMIT")


class EpisodeQueryError(EpisodeError):
    """SQL that a sealed episode refuses to run: anything but exactly one read-only query.

    This is the episode's own last line of defence (tools parse SQL first). Errors DuckDB itself
    raises (syntax, unknown table, refused file access, ...) propagate as ``duckdb.Error``.

    Attributes:
        kind: ``"read_only"``.
        message: what was refused and why.
    """

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(message)


class ToolError(ClinseekError):
    """A tool problem the model can fix (bad argument, refused SQL, timeout).

    Attributes:
        kind: a short machine-readable kind such as ``"bad_argument"``, ``"read_only"``,
            ``"timeout"``, ``"unknown_table"``, ``"pinned"``.
        message: a human-readable explanation that says how to fix the call.
    """

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(message)


class ManifestError(ClinseekError):
    """A benchmark manifest row does not validate.

    Attributes:
        path: the manifest file.
        row: the row's qid, or its 1-based line/index when it has no qid.
        field: the offending field, or ``None``.
        problem: what was expected.
    """

    def __init__(
        self, path: Path | str, problem: str, *, row: str | int | None = None, field: str | None = None
    ) -> None:
        self.path = Path(path)
        self.row = row
        self.field = field
        self.problem = problem
        where = str(self.path)
        if row is not None:
            where += f": row {row}"
        if field is not None:
            where += f": field {field!r}"
        super().__init__(f"{where}: {problem}")


class ModelError(ClinseekError):
    """A model provider is misconfigured (unknown provider, missing API key, bad base URL)."""


class MissingExtraError(ClinseekError):
    """An optional dependency is not installed, or is installed but cannot be imported.

    Attributes:
        feature: what needed it (e.g. ``"image.chest_xray_classifier"``).
        extra: the pip extra that installs it (e.g. ``"imaging"``).
        module: the module that was imported, when known (e.g. ``"trafilatura"``).
        module_absent: False when ``module`` is installed but its import failed (the message then
            quotes the import error instead of naming the extra).
    """

    def __init__(self, feature: str, extra: str, detail: str = "", *, module: str | None = None,
                 cause: ImportError | None = None) -> None:
        self.feature = feature
        self.extra = extra
        self.module = module
        self.module_absent = cause is None or module is None or module_is_absent(module, cause)
        if not self.module_absent:
            # installed, but one of its own dependencies is missing or broken: say what, not "install the extra"
            msg = f"{feature} needs {module} (extra [{extra}]), which is installed but cannot be imported: {cause}"
        else:
            msg = f"{feature} needs the optional extra [{extra}]: {install_hint(extra, detail)}"
        super().__init__(msg)


def install_hint(extra: str, detail: str = "") -> str:
    """``pip install 'clinseek[extra]' (detail)``; for a clinseek installed from a source checkout (an editable
    install: its folder holds the pyproject.toml that declares it), the parenthesis also gives the command that
    installs the extra into this very environment, ``<this python> -m pip install -e '<checkout>[extra]'`` (the
    plain one needs clinseek on an index, and a shell's ``pip`` may be another environment's: newcomer21)."""
    root = _checkout()
    notes = [detail] if detail else []
    if root is not None:
        notes.append(f"from this checkout: {sys.executable} -m pip install -e '{root}[{extra}]'")
    return f"pip install 'clinseek[{extra}]'" + (f" ({'; '.join(notes)})" if notes else "")


@cache
def _checkout() -> Path | None:
    root = Path(__file__).resolve().parents[2]
    try:
        declared = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return root if '\nname = "clinseek"\n' in declared else None


def module_is_absent(module: str, err: ImportError) -> bool:
    """Whether ``err`` (raised by ``import module``) means ``module`` itself is not installed, rather
    than installed with a missing or broken dependency of its own (``No module named 'justext'``, or
    ``lxml.html.clean module is now a separate project lxml_html_clean``)."""
    missing = err.name if isinstance(err, ModuleNotFoundError) else None
    return missing is not None and (module == missing or module.startswith(missing + "."))


def import_optional(module: str, feature: str, extra: str, detail: str = "") -> ModuleType:
    """``import module`` for ``feature``, or a :class:`MissingExtraError` that says what is missing.

    Raises:
        MissingExtraError: ``module`` is not installed (names ``pip install 'clinseek[extra]'``), or it
            is installed and its import fails (names the import error, e.g. a missing sub-dependency).
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingExtraError(feature, extra, detail or f"{module} is not installed", module=module,
                                cause=err) from err


class ImagingError(ClinseekError):
    """A linked CXR image or report cannot be found or read.

    Attributes:
        path: the path as given (manifest path, dicom_id or file path).
        problem: what was expected (the places looked at) and what was found.
    """

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class ScoringError(ClinseekError):
    """Results that cannot be scored (names the file, row and field)."""


class ReportError(ClinseekError):
    """A report cannot be built: an input folder holds neither scores nor results, a file in it
    cannot be read (names the file and line), or two inputs hold the same run."""


def is_interrupt(err: BaseException) -> bool:
    """Ctrl-C: Python's ``KeyboardInterrupt``, or DuckDB's ``InterruptException`` / "Query interrupted"
    ``RuntimeError`` when SIGINT arrived while DuckDB ran a statement (matched by name: this module
    imports nothing)."""
    if isinstance(err, KeyboardInterrupt) or type(err).__name__ == "InterruptException":
        return True
    return type(err) is RuntimeError and "interrupted" in str(err).lower()


__all__ = [
    "ClinseekError",
    "EpisodeError",
    "EpisodeQueryError",
    "EpisodeTimeout",
    "ImagingError",
    "IngestError",
    "ManifestError",
    "MissingExtraError",
    "ModelError",
    "PolicyError",
    "RegistryError",
    "ReportError",
    "ScoringError",
    "StoreError",
    "ToolError",
    "import_optional",
    "is_interrupt",
    "module_is_absent",
]
