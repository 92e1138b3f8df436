"""HTML tables of the report: the paper-style headline table, per-model detail with paired Δ, other
comparisons, and the run manifests. Every number comes from ``summary.json`` unchanged; cells carry
``data-*`` attributes with the raw value so tests (and readers' scripts) can check them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..records import RunManifest
from ..scoring import (
    DELTA_HEADER,
    TABLE3_HEADER,
    CardTable,
    GroupDelta,
    GroupStats,
    PairedComparison,
    RunScores,
    delta_cells,
    delta_text,
    pct,
    table3_cells,
    table3_rows,
)
from ._plots import mode_name
from ._svg import esc

TYPE_NAMES = {"risk_prediction": "Risk prediction", "decision_making": "Decision making", "multimodal": "Multimodal"}


def run_label(bench: str, mode: str, model: str) -> str:
    """``benchmark/mode/model``: the label the scorer gives a run (``PairedComparison.a``)."""
    return f"{bench}/{mode}/{model}"


def _f1_cell(run: RunScores | None, group: str, stats: GroupStats | None, ci: bool = True) -> str:
    if run is None or stats is None:
        return '<td class="num na">–</td>'
    tip = ""
    if ci and stats.f1_ci_t is not None:
        tip = f' title="t 95 % CI [{pct(stats.f1_ci_t[0])}, {pct(stats.f1_ci_t[1])}], n = {stats.n_questions}"'
    value = "" if stats.f1 is None else f' data-f1="{stats.f1!r}"'
    key = esc(run_label(run.benchmark, run.mode, run.model))
    return f'<td class="num" data-run="{key}" data-group="{esc(group)}"{value}{tip}>{pct(stats.f1)}</td>'


def _delta_cell(pair: PairedComparison | None, group: str, delta: GroupDelta | None) -> str:
    if pair is None or delta is None:
        return '<td class="num na">–</td>'
    sign = ("pos" if delta.ci_low > 0 else "neg") if delta.significant else ""
    return (f'<td class="num delta {sign}" data-pair="{esc(pair.a)}" data-group="{esc(group)}" '
            f'data-delta="{delta.delta!r}" data-ci-low="{delta.ci_low!r}" data-ci-high="{delta.ci_high!r}">'
            f'{100 * delta.delta:+.1f} <span class="ci">[{pct(delta.ci_low)}, {pct(delta.ci_high)}]</span></td>')


def _stats(run: RunScores | None, group: str) -> GroupStats | None:
    if run is None:
        return None
    if group == "overall":
        return run.overall
    kind, _, name = group.partition(":")
    table = {"task_type": run.per_task_type, "category": run.per_category, "task": run.per_task}.get(kind, {})
    return table.get(name)


def _group(pair: PairedComparison | None, group: str) -> GroupDelta | None:
    if pair is None:
        return None
    return next((g for g in pair.groups if g.group == group), None)


def headline_table(bench: str, models: Sequence[str], runs: dict[tuple[str, str, str], RunScores],
                   pairs: dict[tuple[str, str], PairedComparison]) -> str:
    """The paper's table for one benchmark: per model, Curated Input, ClinSeekAgent and Δ [95 % CI]
    for each task type, overall (micro, over questions) and macro (over categories)."""
    bench_runs = [r for (b, _m, _o), r in runs.items() if b == bench]
    types = sorted({t for r in bench_runs for t in r.per_task_type})
    if len(types) > 1:  # Table 1 of the paper: one column per task type
        groups = [f"task_type:{t}" for t in types]
        head = "".join(f"<th>{esc(TYPE_NAMES.get(t, t))}</th>" for t in types)
    else:  # Table 2 (multimodal): one column per category
        categories = sorted({c for r in bench_runs for c in r.per_category})
        groups = [f"category:{c}" for c in categories]
        head = "".join(f"<th>{esc(c.replace('_', ' '))}</th>" for c in categories)
    groups.append("overall")
    rows = [f'<table class="headline" data-bench="{esc(bench)}"><thead><tr><th>Model</th><th>Method</th>{head}'
            "<th>Overall</th><th>Macro (categories)</th><th>n</th></tr></thead><tbody>"]
    for model in models:
        rows += _model_rows(bench, model, groups, runs, pairs.get((bench, model)))
    rows.append("</tbody></table>")
    return "".join(rows)


def _model_rows(bench: str, model: str, groups: Sequence[str], runs: dict[tuple[str, str, str], RunScores],
                pair: PairedComparison | None) -> list[str]:
    """Curated Input, ClinSeekAgent and Δ rows of one model; the model's name spans them."""
    cells = []
    for mode in ("curated", "agent"):
        run = runs.get((bench, mode, model))
        if run is None:
            continue
        body = "".join(_f1_cell(run, g, _stats(run, g)) for g in groups)
        macro = "" if run.macro_f1_over_categories is None else f' data-macro="{run.macro_f1_over_categories!r}"'
        key = esc(run_label(bench, mode, model))
        cells.append(f'<td>{esc(mode_name(mode, model))}</td>{body}<td class="num" data-run="{key}" data-group="macro"{macro}>'
                     f"{pct(run.macro_f1_over_categories)}</td><td class=num>{run.overall.n_questions}</td></tr>")
    if pair is not None:
        body = "".join(_delta_cell(pair, g, _group(pair, g)) for g in groups)
        n = _group(pair, "overall")
        cells.append(f'<td>Δ [95 % CI]</td>{body}<td class="num na">–</td><td class=num>{n.n if n else "–"}</td></tr>')
    classes = [m for m in ("curated", "agent") if (bench, m, model) in runs] + (["delta-row"] if pair else [])
    name = f'<td class="model" rowspan="{len(cells)}">{esc(model)}</td>'
    return [f'<tr class="{cls}">{name if i == 0 else ""}{cell}' for i, (cls, cell) in enumerate(zip(classes, cells, strict=True))]


def card_table_html(table: CardTable) -> str:
    """The dataset card's "By category" table for one benchmark: a row per category (card order and names)
    and Overall; per model Curated, Agent and Δ, a Δ in bold when its paired bootstrap 95 % CI excludes 0.
    Cells carry ``data-group``, ``data-model``, ``data-col``, the run (``data-run``/``data-pair``) and the raw
    value (``data-f1``/``data-delta``)."""
    models = "".join(f'<th colspan="3" class="model">{esc(m)}</th>' for m in table.models)
    sub = "".join("<th>Curated</th><th>Agent</th><th>Δ</th>" for _ in table.models)
    rows = [f'<table class="card" data-bench="{esc(table.benchmark)}"><thead><tr><th rowspan="2">Category</th>'
            f'<th rowspan="2">N</th>{models}</tr><tr>{sub}</tr></thead><tbody>']
    for row in table.rows:
        cells = []
        for model in table.models:
            cell = row.cells[model]
            attrs = f'data-group="{esc(row.group)}" data-model="{esc(model)}"'
            for col, value in (("curated", cell.curated), ("agent", cell.agent)):
                raw = "" if value is None else f' data-f1="{value!r}"'
                run = esc(run_label(table.benchmark, col, model))
                cells.append(f'<td class="num" {attrs} data-col="{col}" data-run="{run}"{raw}>{pct(value)}</td>')
            text = esc(delta_text(cell))
            if cell.delta is None:
                cells.append(f'<td class="num na" {attrs} data-col="delta">{text}</td>')
                continue
            tip = f"95 % CI [{pct(cell.delta.ci_low)}, {pct(cell.delta.ci_high)}], n = {cell.delta.n}"
            body = f"<b>{text}</b>" if cell.significant else text
            pair = esc(run_label(table.benchmark, "agent", model))
            cells.append(f'<td class="num delta{" sig" if cell.significant else ""}" {attrs} data-col="delta" '
                         f'data-pair="{pair}" data-delta="{cell.delta.delta!r}" data-ci-low="{cell.delta.ci_low!r}" '
                         f'data-ci-high="{cell.delta.ci_high!r}" title="{tip}">{body}</td>')
        cls = ' class="overall"' if row.group == "overall" else ""
        rows.append(f'<tr{cls} data-group="{esc(row.group)}"><td>{esc(row.title)}</td><td class="num">{row.n}</td>'
                    f'{"".join(cells)}</tr>')
    rows.append("</tbody></table>")
    return "".join(rows)


def detail_table(curated: RunScores | None, agent: RunScores | None, pair: PairedComparison | None) -> str:
    """One model on one benchmark, group by group: n, both modes' F1, Δ with its bootstrap and t CIs,
    p (paired t), McNemar p, and the agent's unanswered and infrastructure-error counts (runs)."""
    base = agent or curated
    if base is None:
        return ""
    groups = ["overall"] + [f"task_type:{t}" for t in sorted(base.per_task_type)]
    groups += [f"category:{c}" for c in sorted(base.per_category)] + [f"task:{t}" for t in sorted(base.per_task)]
    head = ("<tr><th>Group</th><th>n</th><th>Curated F1</th><th>Agent F1</th><th>Δ [bootstrap 95 % CI]</th>"
            "<th>t 95 % CI of Δ</th><th>p (t)</th><th>p (McNemar)</th><th>no answer</th><th>infra errors</th></tr>")
    rows = [f'<table class="detail"><thead>{head}</thead><tbody>']
    for group in groups:
        stats = _stats(base, group)
        delta = _group(pair, group)
        cells = delta_cells(delta) if delta is not None else ["", "–", "", "", "", "", "–", "–", "–"]
        kind = group.partition(":")[0]
        rows.append(f'<tr class="g-{kind}"><td>{esc(group.replace("task_type:", "type: "))}</td>'
                    f'<td class="num">{stats.n_questions if stats else "–"}</td>'
                    f"{_f1_cell(curated, group, _stats(curated, group))}{_f1_cell(agent, group, _stats(agent, group))}"
                    f"{_delta_cell(pair, group, delta)}<td class=num>{cells[6]}</td><td class=num>{cells[7]}</td>"
                    f"<td class=num>{cells[8]}</td><td class=num>{stats.n_no_answer if stats else '–'}</td>"
                    f"<td class=num>{stats.n_infra_error if stats else '–'}</td></tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def comparison_table(comparison: PairedComparison) -> str:
    """Any paired comparison (model − model, or a pair the headline does not show), as ``clinseek compare`` prints it."""
    head = "".join(f"<th>{esc(h)}</th>" for h in DELTA_HEADER)
    rows = []
    for group in comparison.groups:
        if group.group.startswith("task:"):
            continue
        cells = delta_cells(group)
        tds = "".join(f'<td class="{"" if i == 0 else "num"}">{esc(c)}</td>' for i, c in enumerate(cells))
        rows.append(f'<tr data-pair="{esc(comparison.a)}|{esc(comparison.b)}" data-group="{esc(group.group)}" '
                    f'data-delta="{group.delta!r}">{tds}</tr>')
    overall = next((g for g in comparison.groups if g.group == "overall"), None)
    headline = "" if overall is None else f": Δ {100 * overall.delta:+.1f} [{pct(overall.ci_low)}, {pct(overall.ci_high)}], n = {overall.n}"
    title = f"A = {esc(comparison.a)} − B = {esc(comparison.b)}{headline}"
    note = f"paired bootstrap: {comparison.n_resamples} resamples, seed {comparison.seed}"
    return (f'<details class="comparison"><summary>{title}</summary><table class="detail"><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table><p class="note">{note}</p></details>')


_MANIFEST_KEYS = ("model", "benchmark", "mode", "prompt_version", "policy_versions", "code_version", "git_commit",
                  "seed", "config_hash", "runs_per_question", "questions", "concurrency", "base_url", "started_at",
                  "python")


def manifest_block(key: tuple[str, str, str], manifest: RunManifest | None) -> str:
    """One run's manifest: the fields that say how it was produced, then the whole JSON."""
    label = esc(run_label(*key))
    if manifest is None:
        return f'<details class="manifest"><summary>{label}</summary><p class="note">no run_manifest.json found</p></details>'
    data = manifest.model_dump(mode="json")
    rows = "".join(f"<tr><th>{k}</th><td>{esc(json.dumps(data[k]) if isinstance(data[k], list) else data[k])}</td></tr>"
                   for k in _MANIFEST_KEYS)
    short = (f"prompts {esc(manifest.prompt_version)} · policy {esc(', '.join(manifest.policy_versions))} · "
             f"code {esc(manifest.code_version)}{' @ ' + esc(manifest.git_commit[:10]) if manifest.git_commit else ''}"
             f" · seed {manifest.seed}")
    return (f'<details class="manifest" data-run="{label}"><summary><b>{label}</b> — {short}</summary>'
            f'<table class="kv">{rows}</table><details><summary>full run_manifest.json</summary>'
            f"<pre>{esc(json.dumps(data, indent=2))}</pre></details></details>")


def agentehr_table(runs: Sequence[RunScores]) -> str:
    """The paper's Table 3 for the AgentEHR-Bench runs: per task F1 and the average of the five Table 3
    tasks, one row per model and mode (``""`` when no AgentEHR-Bench run is in the report)."""
    rows = table3_rows(runs)
    if not rows:
        return ""
    head = "".join(f"<th>{esc(name)}</th>" for name in TABLE3_HEADER)
    body = []
    for row in rows:
        cells = table3_cells(row)
        key = esc(run_label(row.benchmark, row.mode, row.model))
        tds = [f"<td>{esc(c)}</td>" for c in cells[:2]]
        tds += [f'<td class="num" data-run="{key}" data-col="{esc(name)}">{esc(c)}</td>'
                for name, c in zip(TABLE3_HEADER[2:], cells[2:], strict=True)]
        body.append("<tr>" + "".join(tds) + "</tr>")
    note = ('<p class="note">F1 (%) per AgentEHR-Bench task; average = mean of the five tasks of the paper\'s '
            "Table 3 (shown only when all five were scored); prescriptions is not in the average.</p>")
    return (f'<h3>AgentEHR-Bench (Table 3)</h3><table class="table3"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>{note}")
