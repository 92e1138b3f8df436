"""Reading the runner's ``results.jsonl`` rows into :class:`ScoreInput` (tolerantly)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from ..errors import ScoringError
from ..records import ResultRow, decode_row
from ..refformat import MODE_DIRS, clinseek_fields
from ._categories import category_for, task_type_for
from ._model import AnswerType, RunUsage, ScoreInput
from ._normalize import gold_items, label_strings

RESULT_FIELDS: tuple[str, ...] = (
    "qid",
    "run_index",
    "benchmark",
    "task",
    "task_type",
    "category",
    "mode",
    "model",
    "status",
    "answer",
    "invalid_answer",
    "gold",
    "gold_aliases",
    "answer_type",
    "candidates",
    "usage",
    "tool_calls",
    "turns",
    "cost_usd",
    "latency_s",
    "question_hash",
    "parse_mode",
)
"""Fields :func:`read_score_inputs` reads from a result row; any other field is ignored."""

_ROW_FIELDS = set(RESULT_FIELDS)


def row_error(path: Path, line: int, field: str | None, problem: str) -> ScoringError:
    """A ``ScoringError`` that names the file, the 1-based line and the field."""
    where = f"{path}:{line}" + (f": field {field!r}" if field else "")
    return ScoringError(f"{where}: {problem}")


def text_lines(path: Path) -> Iterator[tuple[int, str | UnicodeDecodeError]]:
    """(line number, text) for every line of ``path``, each decoded as UTF-8 on its own: a line that is not
    UTF-8 gives its ``UnicodeDecodeError`` instead of ending the file, and a leading byte-order mark (Windows
    editors, PowerShell) is dropped."""
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                yield line_no, err
                continue
            yield line_no, text.removeprefix("\ufeff")


def iter_jsonl(path: Path, bad_rows: list[ScoringError] | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a bad line raises or is collected."""
    for line_no, line in text_lines(path):
        if isinstance(line, UnicodeDecodeError):
            byte = line.object[line.start:line.start + 1].hex()
            _fail(row_error(path, line_no, None, f"not UTF-8 text (byte 0x{byte} at column {line.start + 1})"),
                  bad_rows)
            continue
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
        except ValueError as err:
            _fail(row_error(path, line_no, None, f"not a JSON object line ({err})"), bad_rows)
            continue
        yield line_no, obj


def read_rows(path: Path, bad_rows: list[ScoringError] | None,
              read: Callable[[Mapping[str, Any]], ScoreInput]) -> list[ScoreInput]:
    """Every row of ``path`` through ``read``; a row that fails (a bad field, or a second row for a
    question and run already read in this file: the first is scored) raises or is collected, naming
    the file, the line and the field."""
    out: list[ScoreInput] = []
    first_line: dict[tuple[str, str, str, str, int], int] = {}
    for line_no, row in iter_jsonl(path, bad_rows):
        try:
            score_input = read(row)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            field, problem = _problem(err)
            _fail(row_error(path, line_no, field, problem), bad_rows)
            continue
        key = (*score_input.run_key, score_input.qid, score_input.run_index)
        if key in first_line:
            _fail(row_error(path, line_no, None, f"qid {score_input.qid!r} run {score_input.run_index} of "
                            f"{'/'.join(key[:3])} again (first at line {first_line[key]}, the row scored); "
                            "a retried run? keep one row per question and run, or score merged_unique.jsonl"),
                  bad_rows)
            continue
        first_line[key] = line_no
        out.append(score_input)
    return out


def _fail(err: ScoringError, bad_rows: list[ScoringError] | None) -> None:
    if bad_rows is None:
        raise err
    bad_rows.append(err)


def _answer(fields: Mapping[str, Any]) -> list[str] | None:
    """``answer`` plus ``invalid_answer`` (items outside the candidates still count against the
    answer: they lower precision and break the single-label rule); ``None`` when both are absent."""
    answer, invalid = fields.get("answer"), fields.get("invalid_answer") or []
    if answer is None and not invalid:
        return None
    return label_strings(answer) + label_strings(invalid)


def _run_usage(fields: Mapping[str, Any]) -> RunUsage:
    usage = fields.get("usage") or {}
    return RunUsage(
        turns=fields.get("turns"), tool_calls=dict(fields.get("tool_calls") or {}),
        input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
        cached_tokens=usage.get("cached_input_tokens"), cost_usd=fields.get("cost_usd"),
        latency_s=fields.get("latency_s"),
    )


def _holds_nan(value: object) -> bool:
    """Whether a JSON value holds a float that is not finite (``NaN``, ``Infinity``: Python's json reads them)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list | tuple):
        return any(_holds_nan(v) for v in value)
    if isinstance(value, Mapping):
        return any(_holds_nan(v) for v in value.values())
    return False


def _from_fields(fields: Mapping[str, Any], defaults: Mapping[str, str]) -> ScoreInput:
    """A score input from a row in clinseek's vocabulary (``ResultRow`` field names, any of them absent).

    ``defaults`` supplies ``benchmark``, ``mode`` and ``model`` when the row lacks them; ``task_type``,
    when absent, comes from the task (``task_type_for``); the category is the card category
    ``category_for`` gives (declared, else from the task, else from an EHRXQA ``question``). Gold goes
    through :func:`gold_items` (``gold_aliases``, a list of alias lists parallel to ``gold``, overrides
    the aliases it finds); answers and candidates go through :func:`label_strings`.
    """
    if _holds_nan(fields.get("gold")):
        raise ValueError("field 'gold': NaN is not a label (a missing value written as NaN?)")
    gold, aliases = gold_items(fields.get("gold"))
    if not gold and fields.get("status") != "invalid_input":  # a row that never ran may carry no gold
        raise ValueError("field 'gold': empty or absent; a question needs at least one gold label")
    if fields.get("gold_aliases"):
        aliases = [label_strings(a) for a in fields["gold_aliases"]]
    task = fields["task"]
    if not isinstance(task, str) or not task:
        raise ValueError(f"field 'task': expected a task name, got {task!r}")
    question = fields.get("question")
    return ScoreInput(
        qid=str(fields["qid"]),
        run_index=int(fields.get("run_index") or 0),
        benchmark=str(fields.get("benchmark") or defaults.get("benchmark", "unknown")),
        task=task,
        task_type=task_type_for(task, fields.get("task_type")),
        category=category_for(task, fields.get("category"), question=question if isinstance(question, str) else None,
                              gold=gold),
        mode=fields.get("mode") or defaults.get("mode"),  # type: ignore[arg-type]
        model=str(fields.get("model") or defaults.get("model", "unknown")),
        status=fields["status"],
        answer=_answer(fields),
        gold=gold,
        gold_aliases=aliases,
        answer_type=fields.get("answer_type"),
        candidates=None if fields.get("candidates") is None else label_strings(fields["candidates"]),
        usage=_run_usage(fields),
        question_hash=fields.get("question_hash"),
        parse_mode=fields.get("parse_mode"),
    )


def score_input(row: ResultRow) -> ScoreInput:
    """The scorer's view of one row the runner wrote (the fields of :data:`RESULT_FIELDS`)."""
    return _from_fields(row.model_dump(mode="json", include=_ROW_FIELDS), {})


def score_input_from_row(row: Mapping[str, Any], defaults: Mapping[str, str]) -> ScoreInput:
    """The scorer's view of one parsed line of a results file, whatever wrote it.

    A row with ``schema_version`` (or ``clinseek_status``: the runner's rows in the reference's layout)
    is a ``clinseek.records.ResultRow`` and is read as one (older versions upgraded); any other row goes
    through the one reference adapter (``clinseek.refformat.clinseek_fields``: the reference's shapes,
    and rows in clinseek's vocabulary written by hand or another harness). ``defaults`` supplies
    ``benchmark``, ``mode`` and ``model`` when such a row lacks them.

    Raises:
        ValueError, TypeError, KeyError or ValidationError naming the bad field (the caller adds file/line).
    """
    if "schema_version" in row or "clinseek_status" in row:
        return score_input(decode_row(row))
    return _from_fields(clinseek_fields(row), defaults)


def _problem(err: Exception) -> tuple[str | None, str]:
    if isinstance(err, KeyError):
        return str(err.args[0]), "required field is missing"
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        return field, f"{first['msg']} (got {first.get('input')!r})"
    return None, str(err)


def path_defaults(path: Path) -> dict[str, str]:
    """``benchmark``/``mode``/``model`` for a results file: ``run_manifest.json`` beside it, else
    the layout ``<benchmark>/<mode>/<model-slug>/results.jsonl``."""
    parts = path.resolve().parts
    mode = {folder: mode for mode, folder in MODE_DIRS.items()}.get(parts[-3], parts[-3]) if len(parts) >= 4 else ""
    defaults = {"benchmark": parts[-4], "mode": mode, "model": parts[-2]} if len(parts) >= 4 else {}
    manifest = path.with_name("run_manifest.json")
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except ValueError as err:
            raise ScoringError(f"{manifest}: not valid JSON ({err})") from err
        if isinstance(data, dict):
            defaults.update({k: str(data[k]) for k in ("benchmark", "mode", "model") if data.get(k)})
    return defaults


def read_score_inputs(path: Path | str, *, bad_rows: list[ScoringError] | None = None) -> list[ScoreInput]:
    """Read a ``results.jsonl`` in clinseek's layout (one JSON object per line) into score inputs.

    Rows the runner wrote are read as ``clinseek.records.ResultRow`` (any schema version); other rows in
    clinseek's vocabulary through the reference adapter (:func:`score_input_from_row`; the fields of
    :data:`RESULT_FIELDS`, docs/scoring.md). Missing ``benchmark``/``mode``/``model`` come from
    :func:`path_defaults`.

    Raises:
        ScoringError: naming file, line and field of the first bad row; when ``bad_rows`` is a
            list, bad rows are appended to it and skipped instead.
    """
    path = Path(path)
    defaults = path_defaults(path)
    return read_rows(path, bad_rows, lambda row: score_input_from_row(row, defaults))


def read_expected(path: Path | str) -> list[ScoreInput]:
    """Questions every run should have, from a manifest (JSON array or JSONL of objects).

    A benchmark manifest that ``clinseek.bench.read_manifest`` reads without a bad row (a text,
    multimodal or AgentEHR-Bench manifest, released or built by ``clinseek bench build``) gives its
    questions as the bench reads them, each with its ``question_hash``, so that rows answering
    another build's question under the same qid are caught (see ``score_questions``). Any other
    file is read row by row: each object needs ``qid``, ``task`` and a gold (``gold``, ``label``
    or ``ground_truth``); ``task_type`` (else from the task: multimodal rows carry none),
    ``category``, ``question``, ``candidates`` and ``answer_type`` are read when present. Each
    template's category is the card category (``category_for``). Pass the result as ``expected``
    so that questions without any result row score 0.

    ``path`` may also be a benchmark folder (``clinseek bench build --out``): its text and
    multimodal files are read, each file's templates carrying the file's name as ``benchmark`` (a
    *part*: a run is held only to the questions of the part it answered, see ``score_questions``);
    templates of a single file carry ``benchmark=""`` (one part).

    Raises:
        ScoringError: the path does not exist, is a folder without benchmark files (or whose two
            files share a qid), cannot be read or holds no question; or naming the file, the row
            (1-based) and the field of the first bad object.
    """
    path = Path(path)
    if path.is_dir():
        from ..bench import MM_FILE, TEXT_FILE

        files = [path / name for name in (TEXT_FILE, MM_FILE) if (path / name).is_file()]
        if not files:
            raise ScoringError(f"{path}: a folder without {TEXT_FILE} or {MM_FILE}; give a benchmark folder or file")
        # each file's questions are one part (the template's ``benchmark``): a run is held only to the
        # questions of the part it answered (``score_questions``), never to the other benchmark's
        out: list[ScoreInput] = []
        seen: dict[str, str] = {}
        for f in files:
            for t in read_expected(f):
                if t.qid in seen:
                    raise ScoringError(f"{path}: qid {t.qid} is in both {seen[t.qid]} and {f.name}; a benchmark "
                                       "folder's text and multimodal questions need distinct qids")
                seen[t.qid] = f.name
                out.append(t.model_copy(update={"benchmark": f.name}))
        return out
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise ScoringError(f"{path}: no such manifest file") from err
    except (OSError, UnicodeDecodeError) as err:
        raise ScoringError(f"{path}: cannot read the manifest: {err}") from err
    if not text.strip():
        raise ScoringError(f"{path}: the manifest holds no questions")
    templates = _bench_templates(path)
    if templates:
        return templates
    try:
        data = json.loads(text) if text.lstrip().startswith("[") else None
    except ValueError as err:
        raise ScoringError(f"{path}: not a JSON array ({err})") from err
    items = list(enumerate(data, start=1)) if data is not None else list(iter_jsonl(path, None))
    defaults = {"benchmark": "", "mode": "agent", "model": ""}
    out: list[ScoreInput] = []
    for row_no, row in items:
        try:
            fields = {"status": "no_answer", **{k: v for k, v in row.items() if k not in ("answer", "schema_version")}}
            out.append(score_input_from_row(fields, defaults))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            field, problem = _problem(err)
            raise row_error(path, row_no, field, problem) from err
    if not out:
        raise ScoringError(f"{path}: the manifest holds no questions")
    hashes = _manifest_hashes(path)
    return [t.model_copy(update={"question_hash": hashes.get(t.qid)}) for t in out]


def _manifest_hashes(path: Path) -> dict[str, str]:
    """qid → ``question_hash`` of the valid rows of a benchmark manifest (``{}`` for any other file)."""
    from ..bench import read_manifest
    from ..errors import ClinseekError
    from ..runner import question_hash

    try:
        read = read_manifest(path)
    except ClinseekError:
        return {}
    return {q.qid: question_hash(q) for q in read.questions()}


_ANSWER_TYPES = frozenset(get_args(AnswerType))


def _bench_templates(path: Path) -> list[ScoreInput]:
    """Templates of a benchmark manifest that reads without a bad row (``[]`` for any other file)."""
    from ..bench import read_manifest
    from ..errors import ClinseekError
    from ..runner import question_hash

    try:
        read = read_manifest(path)
    except ClinseekError:
        return []
    if read.errors or not read.rows:
        return []
    out = []
    for q in read.questions():
        if not q.label:
            raise ScoringError(f"{path}: question {q.qid}: field 'label': empty; a question needs at least one gold label")
        out.append(ScoreInput(
            qid=q.qid, benchmark="", task=q.task, task_type=q.task_type,
            category=category_for(q.task, q.category, question=q.question_text, gold=q.label),
            mode="agent", model="", status="no_answer", answer=None, gold=list(q.label),
            gold_aliases=[list(a) for a in q.label_aliases] if any(q.label_aliases) else [],
            answer_type=q.answer_type if q.answer_type in _ANSWER_TYPES else None,  # type: ignore[arg-type]
            candidates=list(q.candidates) or None, question_hash=question_hash(q),
        ))
    return out
