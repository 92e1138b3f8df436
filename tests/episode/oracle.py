"""The leakage audits' oracle: a table's raw rows with the instants the registry says they wait for.

Written from the registry's event times and column classes, never from the policy's SQL or masks,
so the audits compare two independent computations.
"""

from __future__ import annotations

import re

from clinseek.schema import ENCOUNTER_IDS, Table


def instants(table: Table) -> list[tuple[str, str]]:
    """``(name, SQL over the raw row t)`` for every instant a column class of ``table`` waits for.

    Written from the column classes and the registry's declared instants, independently of the
    policy's masks: ``stored`` -> ``stored_at``, ``end`` -> ``ends_at``, each ``reference`` column
    -> its instant, each ``encounter`` column -> the start of the encounter it names. Also ``where:<column>``:
    for a ``sequence`` column renumbered only in some rows, whether the row is one of them.
    """
    out = [("stored", table.stored_at or "NULL"), ("end", table.ends_at or "NULL")]
    out += [(f"ref:{c}", expr) for c, expr in table.references]
    out += [(f"where:{r.column}", f"coalesce(({r.where}), false)") for r in table.renumbered if r.where]
    for col in table.columns:
        if col.known != "encounter":
            continue
        encounter = ENCOUNTER_IDS.get((table.module, col.name)) or ENCOUNTER_IDS[("*", col.name)]
        out.append(
            (
                f"enc:{col.name}",
                f"(SELECT min({encounter.start('o')}) FROM {encounter.table} o WHERE o.{col.name} = t.{col.name} "
                "AND o.subject_id = t.subject_id)",
            )
        )
    return out


def raw_sql(table: Table) -> str:
    """Raw rows of ``table`` for one subject, with the registry's event time and class instants."""
    extra = []
    et = table.event_time
    expr = et.expr if et else "NULL"
    if et is not None and et.parent is not None:
        p = et.parent
        on = " AND ".join(f"p.{c} = t.{c}" for c in p.on)
        ptime = re.sub(r"\bt\.", "p.", p.time)
        parent = f"(SELECT min({ptime}) FROM {p.table} p WHERE {on} AND p.subject_id = t.subject_id)"
        expr = expr.replace("parent_time", parent)
        extra.append(f"{parent} AS _p")
    else:
        extra.append("TIMESTAMP '2000-01-01' AS _p")
    extra.append(f"({expr}) AS _e")
    extra += [f'({sql}) AS "_k_{name}"' for name, sql in instants(table)]
    cols = ", ".join(f't."{c}"' for c in table.column_names)
    return f"SELECT {cols}, {', '.join(extra)} FROM {table.qualified} t WHERE t.subject_id = ?"
