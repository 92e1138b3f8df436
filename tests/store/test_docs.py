"""The table reference is generated from the registry and committed up to date; describe_table covers the policy."""

from __future__ import annotations

from pathlib import Path

from clinseek.schema import describe_table, get_table, tables, tables_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_committed_tables_doc_is_up_to_date() -> None:
    committed = (DOCS / "tables.md").read_text(encoding="utf-8")
    assert committed == tables_markdown(), "docs/tables.md is stale: run python scripts/gen_tables_doc.py"


def test_every_table_and_column_is_described() -> None:
    doc = tables_markdown()
    for table in tables():
        text = describe_table(table)
        assert f"### `{table.qualified}`" in text and text in doc
        for col in table.columns:
            assert f"| `{col.name}` | {col.type} |" in text


def test_description_states_time_masks_target_and_joins() -> None:
    text = describe_table(get_table("hosp.labevents"))
    assert "`t.charttime`" in text and "the specimen time" in text
    assert "`valuenum`" in text and "coalesce(t.storetime, t.charttime)" in text
    assert "`itemid` = `hosp.d_labitems.itemid`" in text
    dx = describe_table(get_table("hosp.diagnoses_icd"))
    assert "`t.dischtime` of `hosp.admissions`" in dx and "target encounter (`hadm_id`)" in dx
    assert "never visible in an episode" in describe_table(get_table("cxr.chexpert"))


def test_store_doc_exists_and_names_the_commands() -> None:
    text = (DOCS / "store.md").read_text(encoding="utf-8")
    for needle in (
        "clinseek data ingest",
        "clinseek data info",
        "clinseek_meta",
        "table_info",
        "--memory-limit",
    ):
        assert needle in text
