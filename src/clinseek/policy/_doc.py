"""The policy as implemented, rendered from the registry as Markdown (``docs/policy.md``)."""

from __future__ import annotations

from ..schema import CLASS_REASONS, MODULES, Table, tables
from ._policy import POLICIES

_CLASS_INSTANTS = {
    "event": "the row's event time `E` (never masked)",
    "stored": "the table's `stored_at`",
    "end": "the table's `ends_at` (the end of the row's interval)",
    "own_time": "its own value (the generic rule below)",
    "static": "always (never masked)",
    "encounter": "the start of the encounter it names",
    "reference": "the time of the row it names",
    "sequence": "the time of the row it names (renumbered, see below)",
    "final": "never",
}

_HEADER = """# The temporal policy as implemented

Generated from the schema registry by `clinseek.policy.policy_markdown()`; a test checks that this
file matches it. It is what the code does, table by table.

## Versions

{versions}

## Rules (every version)

- `T` = the episode key's `prediction_time` (naive, MIMIC's shifted clock). `E` = a row's event
  time from the registry. A row is visible iff `E < T` (`clinseek-text-v1`) or `E <= T`
  (`multimodal-strict-temporal-scope-v1`); a row with no event time is not visible.
- An inherited time is the earliest parent row's time for the key (`min`); a row whose parent
  time is unknown (NULL, or no parent row) is not visible.
- Every column of every table has a "known at" class (`clinseek.schema` `KnownAt`; the list
  under "Columns" below gives each one with its reason), and the masks derive from the classes
  alone (`clinseek.schema.class_masks`). In a visible row a column is NULL until its class's
  instant is visible by the same rule (an unknown instant = not known):
{classes}
- Whatever the class, every TIMESTAMP value later than `T` is NULL, and every DATE value `d`
  whose `d + 24 h` is not visible.
- Encounter ids (`encounter`; `clinseek.schema` `ENCOUNTER_IDS`): in every patient table except
  `hosp.admissions`, `hadm_id` is NULL until that admission's `admittime` is visible; `stay_id`
  in `icu` tables (except `icustays`) until the ICU stay starts (its `intime`, and not before its
  admission's `admittime`: MIMIC keeps ICU stays only for hospitalizations, and a same-day surgical
  patient can reach the ICU from the OR before the admission starts), in `ed` tables (except
  `edstays`) until `ed.edstays.intime`. Rows charted before an encounter starts (ED orders and
  labs, ICU charting) would otherwise name a future admission or ICU stay. The owning table's
  event time is the same start (an `icu.icustays` row is visible from it), and so are the
  encounter ids an episode sees.
- Pending results whose row count or tests are themselves the result collapse (microbiology: one
  row per organism x antibiotic, and the lab adds the Gram stain of a blood culture bottle that
  flagged positive to the specimen; labs: the lab adds tests to a specimen after an abnormal
  automated count, a manual differential or a smear review): while a row's mask holds, rows keep
  one per `collapse_on` value (the lowest id; one per `specimen_id` / `micro_specimen_id`, its test
  (`itemid`; `test_itemid`, `test_name`) NULL with the result, so neither which nor how
  many tests are pending shows; microbiology's `test_seq`, numbered over all of a specimen's tests, is
  never shown: a gap among the resulted tests' numbers would count the pending ones) and none once a row of
  the group is resulted (a test added to a specimen after its first results, an add-on or a reflex ordered
  after the cutoff, is pending from the specimen's time on: its row would tell of that order), and the row id (`renumber`,
  `microevent_id`, `labevent_id`) is NULL on those rows and renumbered densely `1..n` over the
  other visible rows by (the instant the id is shown: the later of `E` and the result's instant,
  original id), so no gap between ids reveals how many rows a pending culture or specimen has;
  the rows shown with an id at any cutoff are a prefix of that order, so a row keeps its number at
  every cutoff (the store keeps it). Store ids of `microevent_id` and `labevent_id` never reach an episode.
- Per-patient counters that MIMIC assigns in entry, storage or chart order, not in event-time order
  (`sequence`; `clinseek.schema` `Sequence`: `hosp.poe.poe_seq` / `poe_id`, `hosp.emar.emar_seq` /
  `emar_id`, `note.discharge.note_seq` / `note_id`, `note.radiology.note_seq` / `note_id`) are
  renumbered in each episode: the owner's visible rows get `1..n` by (`E`, original counter), apart
  per value of the sequence's `partition` (notes: per `note_type`), an id is written
  `<subject_id>-<new number>` (notes: `<subject_id>-<note_type>-<new number>`), and every column
  carrying either (in the owner, its detail tables, prescriptions, pharmacy, ids naming another
  order, and a note detail's `field_value` where `field_name` is `addendum_note_id` or
  `parent_note_id`; its other values are shown as stored) shows the number of the row it names, NULL
  where that row is not visible. Otherwise an order placed for a later time, an administration
  charted before `T` and stored after it, or a report charted before `T` and signed after it would
  carry a number above rows still to come, and the gaps would count them. Store values of these
  columns never reach an episode.
- Rows keyed to the key's `target_hadm_id` / `target_stay_id` are never visible.
- Every patient table holds only the key's `subject_id`. Dictionaries are visible whole.
  `never` tables (label sources) do not exist in an episode.
- A table whose parent table is absent from the store is not visible; a mask whose `known_at`
  reads an absent table keeps its columns NULL.
- Under `multimodal-strict-temporal-scope-v1`, `cxr` tables hold only the key's linked
  `study_ids` / `dicom_ids` (a report: its study is linked, or one of its images is).
- The label builder's inverse (`future_select`): the patient's rows whose `E` is not visible,
  plus every target-encounter row, unmasked.

## Sealed episodes (`clinseek.episode`)

`build_episode(store, key)` counts what the key may see of every patient table the store holds,
and reads its visible encounter ids, in one statement (`Policy.visible_inventory_select`, from the store's event index where it has one; on a read-only reader of the store shared by
the process's builders and never reachable from an episode). The episode's first query takes an
in-memory DuckDB database from the reader (a new one, or one a closed episode gave back, wiped and
checked empty) with the module schemas and adds the candidate lists
(`candidates.<task>_candidates(candidate VARCHAR)`); what reads only the store (the inventory,
timelines, the record tools' reads of tables not loaded) takes none. Every such database is sealed at creation: `search_path` is set for bare
names, `enable_external_access = false` (no files, network, ATTACH, COPY, INSTALL/LOAD), Python
replacement scans off, no spilling to disk, and `lock_configuration = true`; only `memory`,
`system` and `temp` databases ever exist in it (the store is never attached). A table is loaded
when a query first names it (its bare name appears as a word anywhere in the SQL): the reader
runs that table's `visible_select` and the rows are copied in as `<module>.<table>`, checked
against the count taken at build (the registry's columns by name: a store's own instant columns,
`_clinseek_*`, which give inherited event times and mask instants that read other tables as stored
at ingest so that the policy compares them with the cutoff instead of joining, never reach it); dictionaries are views over read-only Arrow tables cached per
store file (they hold no patient data). A query that lists the catalog (`information_schema`,
`duckdb_*()`, `pg_*`, `SHOW`, `DESCRIBE`, `SUMMARIZE`, `PRAGMA`) or can name a table in a string
built at run time (`query`, `query_table`, `json_execute_serialized_sql`) loads every table
first, and a query that fails on an unknown table while some are unloaded loads them all and
runs once more: whatever a query can see is whole. A load that does not fit the episode's
`memory_limit` is an `EpisodeError` (an infrastructure error, not the model's SQL error). A
forked child opens its own reader. The reader keeps the store file open read-only until
`clinseek.episode.clear_store_cache()` is called and the last episode built from it is closed:
rebuild or extend a store only while no process is building episodes from it. `Episode.execute` runs
exactly one read-only statement (DuckDB's own parse: type SELECT), under a timer that interrupts
it at `timeout_s`, fetching at most `max_rows + 1` rows.
"""


def policy_markdown() -> str:
    """``docs/policy.md``: the rules, then one table per MIMIC module with one row per registry table."""
    versions = "\n".join(
        f"- `{p.version}`: {p.description} (`E {p.operator} T`"
        + (", linked CXR studies only" if p.cxr_linked_only else "")
        + ")."
        for p in POLICIES.values()
    )
    classes = "\n".join(
        f"  - `{name}`: known at {instant}: {CLASS_REASONS[name]}."  # type: ignore[index]
        for name, instant in _CLASS_INSTANTS.items()
    )
    parts = [_HEADER.format(versions=versions, classes=classes)]
    for module in MODULES:
        parts.append(
            f"\n## {module}\n\n| table | event time `E` | NULL until known | never visible |\n|---|---|---|---|"
        )
        parts += [_row(t) for t in tables((module,))]
    parts.append(_COLUMNS_HEADER)
    for table in tables():
        parts += _columns(table)
    return "\n".join(parts) + "\n"


_COLUMNS_HEADER = """
## Columns

Every column of every table, its "known at" class and why (the class's general reason where the
column has none of its own). `stored_at` / `ends_at` / a reference's instant are the table's,
as in the tables above."""


def _columns(table: Table) -> list[str]:
    """One Markdown table per registry table: every column with its class and reason."""
    instants = [f"`stored_at` = `{table.stored_at}`" if table.stored_at else "",
                f"`ends_at` = `{table.ends_at}`" if table.ends_at else ""]
    instants += [f"`{c}` known at `{expr}`" for c, expr in table.references]
    instants += [f"`{r.column}` = the renumbered {r.part} of the `{r.sequence.owner}` row named by `{r.via}`"
                 + (f" (per `{', '.join(r.sequence.partition)}`)" if r.sequence.partition else "")
                 + (f" where `{r.where}`, else as stored" if r.where else "")
                 for r in table.renumbered]
    shown = "; ".join(i for i in instants if i).replace("|", "\\|")
    out = [f"\n### `{table.qualified}`\n"]
    if shown:
        out.append(f"{shown}.\n")
    out += ["| column | class | why |", "|---|---|---|"]
    for col in table.columns:
        known = col.known or "(none)"
        why = col.why or (CLASS_REASONS.get(col.known, "") if col.known else "")
        out.append(f"| `{col.name}` | `{known}` | {why.replace('|', chr(92) + '|')} |")
    return out


def _row(table: Table) -> str:
    return f"| `{table.qualified}` | {_event(table)} | {_masked(table)} | {_hidden(table)} |"


def _event(table: Table) -> str:
    if table.visibility == "static":
        return "static: always visible (one row per patient)"
    if table.visibility == "dictionary":
        return "dictionary: visible whole"
    if table.visibility == "never":
        return "never visible (label source)"
    assert table.event_time is not None
    text = f"`{table.event_time.expr}`"
    parent = table.event_time.parent
    if parent is not None:
        text += f"; `parent_time` = min `{parent.time}` of `{parent.table}` on `{', '.join(parent.on)}`"
    if table.event_time.rationale:
        text += f" ({table.event_time.rationale})"
    return text.replace("|", "\\|")


def _masked(table: Table) -> str:
    if table.visibility in ("dictionary", "never"):
        return "—"
    items = []
    for mask in table.masks:
        cols = ", ".join(f"`{c}`" for c in mask.columns)
        when = "always" if mask.known_at is None else f"until `{mask.known_at}` is visible"
        if mask.collapse_on:
            when += f"; meanwhile one row per `{', '.join(mask.collapse_on)}`"
        if mask.renumber:
            when += f"; `{mask.renumber}` NULL meanwhile, else renumbered `1..n` by the instant it is shown, then id"
        items.append(f"{cols}: {when}")
    if table.renumbered:
        cols = ", ".join(f"`{r.column}`" + (f" (where `{r.where}`)" if r.where else "") for r in table.renumbered)
        parts = sorted({c for r in table.renumbered for c in r.sequence.partition})
        per = f" (per `{'`, `'.join(parts)}`)" if parts else ""
        items.append(f"{cols}: renumbered `1..n` by `E` among the visible rows they name{per}, NULL if not visible")
    times = [c for c in table.columns if c.is_time]
    if times:
        items.append(
            "later than `T`: "
            + ", ".join(f"`{c.name}`" + (" (+24 h)" if c.type == "DATE" else "") for c in times)
        )
    return ("; ".join(items) or "—").replace("|", "\\|")


def _hidden(table: Table) -> str:
    if table.target_key == "hadm_id":
        return "rows of `target_hadm_id`"
    if table.target_key == "stay_id":
        return "rows of `target_stay_id`"
    return "—"
