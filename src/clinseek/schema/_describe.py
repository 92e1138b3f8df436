"""Human- and model-readable descriptions of registry tables (docs/tables.md, ``ehr.get_table_description``)."""

from __future__ import annotations

from ._model import MODULES, Table
from ._registry import tables

_VISIBILITY = {
    "static": "static: one row per patient, always visible; future values are NULL",
    "dictionary": "dictionary: holds no patient data; visible whole",
    "never": "never visible in an episode: a label source, not evidence",
}

_INCL = " (at or before it under the inclusive multimodal policy)"

_MODULE_TITLES = {
    "hosp": "MIMIC-IV `hosp` (hospital-wide EHR)",
    "icu": "MIMIC-IV `icu` (MetaVision ICU)",
    "ed": "MIMIC-IV-ED (emergency department)",
    "note": "MIMIC-IV-Note (free-text notes)",
    "cxr": "MIMIC-CXR / MIMIC-CXR-JPG (chest radiographs)",
}


def describe_table(table: Table) -> str:
    """A compact Markdown description of one registry table.

    Gives the clinical description, when a row becomes visible (the event-time expression or
    inherited parent time, with its rationale), the masked outcome-revealing columns and when
    they unmask, the target-encounter rule, dictionary joins, and every column with its DuckDB
    type and description. The EHR tool ``ehr.get_table_description`` and ``docs/tables.md``
    both use it, so the model and the reader see the same text.

    Args:
        table: a registry table (see :func:`clinseek.schema.get_table`).

    Returns:
        Markdown text: a level-3 heading, bullet lines, then a column table.
    """
    lines = [f"### `{table.qualified}`", "", table.description, ""]
    lines += [f"- {line}" for line in _rules(table)]
    lines += ["", "| column | type | known at | description |", "|---|---|---|---|"]
    for col in table.columns:
        flags = []
        if col.optional:
            flags.append("optional")
        if col.aliases:
            flags.append("also read as " + ", ".join(f"`{a}`" for a in col.aliases))
        note = f" ({'; '.join(flags)})" if flags else ""
        lines.append(f"| `{col.name}` | {col.type} | {col.known or ''} | {_cell(col.description)}{note} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rules(table: Table) -> list[str]:
    out = [f"Source: {table.source}; key: {', '.join(f'`{k}`' for k in table.key) or 'none'}."]
    et = table.event_time
    if table.visibility != "event" or et is None:
        out.append(f"Visibility: {_VISIBILITY.get(table.visibility, table.visibility)}.")
    elif et.parent is not None:
        on = ", ".join(f"`{c}`" for c in et.parent.on)
        when = f"`{et.expr}` where `parent_time` = `{et.parent.time}` of `{et.parent.table}` (joined on {on})"
        out.append(f"Visible when its event time is before the cutoff{_INCL}; event time = {when}.")
    else:
        out.append(f"Visible when its event time `{et.expr}` is before the cutoff{_INCL}.")
    if et is not None and et.rationale:
        out.append(f"Why: {et.rationale}.")
    for mask in table.masks:
        cols = ", ".join(f"`{c}`" for c in mask.columns)
        when = "always" if mask.known_at is None else f"until `{mask.known_at}` is before the cutoff"
        out.append(f"Masked (NULL) {when}: {cols} — {mask.reason}.")
    if table.visibility in ("event", "static"):
        out.append(
            "Known at (per column): event = with the row; stored = when stored/resulted; end = at the end "
            "of the row's interval; own_time = once that time has passed; static = always; encounter / "
            "reference = once the encounter / row it names exists; sequence = renumbered in the episode (below); "
            "final = never."
        )
    out += _renumbering(table)
    if table.visibility == "event" or table.visibility == "static":
        out.append(
            "Any other date/time value after the cutoff is NULL (a DATE counts as the end of its day)."
        )
    if table.target_key:
        out.append(f"Rows of the question's target encounter (`{table.target_key}`) are never visible.")
    for dj in table.dict_joins:
        pairs = ", ".join(f"`{c}` = `{dj.table}.{k}`" for c, k in zip(dj.columns, dj.keys, strict=True))
        out.append(f"Labels: join {pairs} for {', '.join(f'`{lbl}`' for lbl in dj.labels)}.")
    if table.required:
        out.append("Required: ingest fails when its module is given but this file is missing.")
    return out


def _renumbering(table: Table) -> list[str]:
    """One line per counter a table's ``sequence`` columns carry: how the episode numbers it."""
    out = []
    for sequence in dict.fromkeys(r.sequence for r in table.renumbered):
        cols = ", ".join(
            f"`{r.column}`" + (f" (where `{r.where}`)" if r.where else "") for r in table.renumbered if r.sequence == sequence
        )
        per = "patient" + "".join(f", `{c}`" for c in sequence.partition)
        per = f"({per})" if sequence.partition else per
        parts = "".join(f"<{c}>-" for c in sequence.partition)
        out.append(
            f"Renumbered in each episode: {cols} — `{sequence.owner}`'s visible rows are numbered 1..n per {per} "
            f"by event time, `{sequence.id}` written `<subject_id>-{parts}<n>`; NULL where the named row is "
            "not visible. Store values are never shown (their gaps would count hidden rows)."
        )
    return out


def tables_markdown() -> str:
    """The full table reference (``docs/tables.md``), generated from the registry.

    Regenerate with ``python scripts/gen_tables_doc.py``; a test checks the committed file.
    """
    parts = [
        "# Table reference",
        "",
        "<!-- Generated from clinseek.schema by scripts/gen_tables_doc.py; do not edit by hand. -->",
        "",
        "Every table clinseek knows, as the schema registry (`clinseek.schema`) describes it: the",
        "store's DuckDB types, when a row becomes visible to an episode (the temporal policy, see",
        "`docs/policy.md`), which outcome-revealing values are masked, and dictionary joins. Tables live",
        "in the store as `<module>.<table>`.",
        "",
    ]
    for module in MODULES:
        group = tables((module,))
        parts += [f"## {_MODULE_TITLES[module]}", ""]
        parts += [", ".join(f"[`{t.name}`](#{t.module}{t.name})" for t in group), ""]
        parts += [describe_table(t) for t in group]
    return "\n".join(parts).rstrip("\n") + "\n"
