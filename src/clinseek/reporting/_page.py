"""The static sections of the page: header, headline tables, figures, question-browser shell, manifests."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..scoring import PairedComparison, QuestionScore, RunScores, card_tables
from ._inputs import ReportInputs, RunKey
from ._plots import (
    USAGE_METRICS,
    category_f1_bars,
    cost_scatter,
    delta_forest,
    family_donut,
    tool_bars,
    usage_boxes,
)
from ._svg import esc
from ._tables import (
    agentehr_table,
    card_table_html,
    comparison_table,
    detail_table,
    headline_table,
    manifest_block,
)


class PageData:
    """The inputs regrouped the way the page shows them: per benchmark, per model, per mode."""

    def __init__(self, inputs: ReportInputs) -> None:
        self.inputs = inputs
        self.runs: dict[RunKey, RunScores] = {(r.benchmark, r.mode, r.model): r for r in inputs.runs}
        self.benches = sorted({r.benchmark for r in inputs.runs})
        self.pairs: dict[tuple[str, str], PairedComparison] = {}
        self.others: list[PairedComparison] = []
        for comparison in inputs.paired:
            a, b = comparison.a.split("/", 2), comparison.b.split("/", 2)
            same_model = len(a) == len(b) == 3 and a[0] == b[0] and a[2] == b[2]
            if same_model and (a[1], b[1]) == ("agent", "curated"):
                self.pairs[(a[0], a[2])] = comparison
            else:
                self.others.append(comparison)
        self.questions: dict[RunKey, list[QuestionScore]] = defaultdict(list)
        for q in inputs.questions:
            self.questions[(q.benchmark, q.mode, q.model)].append(q)

    def models(self, bench: str) -> list[str]:
        """Models run on ``bench`` (either mode), sorted."""
        return sorted({model for b, _mode, model in self.runs if b == bench})


def _fig(svg: str, caption: str) -> str:
    return f'<figure class="fig"><div class="cap">{esc(caption)}</div>{svg}</figure>'


def headline_section(page: PageData) -> str:
    """Per benchmark: the paper-style table, then per model the group-by-group detail, then other comparisons."""
    parts = ['<section id="headline"><h2>Headline: Curated Input vs agent mode (ClinSeekAgent)</h2>',
             '<p class="note">Sample-wise F1 (%) from summary.json. Overall = mean over questions (micro); macro = '
             "mean over categories. Δ = agent mode − Curated Input over the question ids scored in both, with its "
             "paired bootstrap 95 % CI (green: CI above 0, red: below). Hover a score for its t-interval.</p>"]
    cards = {t.benchmark: t for t in card_tables(page.inputs.runs, page.inputs.paired)}
    for bench in page.benches:
        models = page.models(bench)
        parts.append(f"<h3>{esc(bench)}</h3>{headline_table(bench, models, page.runs, page.pairs)}")
        if bench in cards:
            parts.append(f'<h4>By category, as the dataset card lays it out</h4>{card_table_html(cards[bench])}'
                         '<p class="note">F1 (%). Δ = ClinSeekAgent − Curated Input over the questions scored in both, '
                         "computed before rounding; bold Δ: its paired bootstrap 95 % CI excludes 0 (five or more "
                         "paired questions). N: questions of the category.</p>")
        for model in models:
            curated, agent = page.runs.get((bench, "curated", model)), page.runs.get((bench, "agent", model))
            table = detail_table(curated, agent, page.pairs.get((bench, model)))
            parts.append(f"<details><summary>{esc(model)}: every task type, category and task</summary>{table}</details>")
    parts.append(agentehr_table(page.inputs.runs))
    if page.inputs.computed_pairs:
        parts.append('<p class="note">Computed by the report (modes from different folders; bootstrap 10,000 '
                     f"resamples, seed 0): {esc(', '.join(page.inputs.computed_pairs))}.</p>")
    if page.others:
        parts.append("<h3>Other paired comparisons</h3>" + "".join(comparison_table(c) for c in page.others))
    parts.append("</section>")
    return "".join(parts)


def _bench_figures(page: PageData, bench: str) -> list[str]:
    parts = [f"<h3>{esc(bench)}</h3>", '<div class="figs">']
    for model in page.models(bench):
        curated, agent = page.runs.get((bench, "curated", model)), page.runs.get((bench, "agent", model))
        parts.append(_fig(category_f1_bars(curated, agent, f"{bench}, {model}"), f"F1 per category — {model}"))
        pair = page.pairs.get((bench, model))
        if pair is not None:
            parts.append(_fig(delta_forest(pair, f"{bench}, {model}"), f"Δ F1 (agent − curated) — {model}"))
    parts.append("</div>")
    agents = [page.runs[k] for k in sorted(page.runs) if k[0] == bench and k[1] == "agent"]
    if any(run.usage.tool_calls_by_name for run in agents):
        parts.append('<h4>Tool calls (agent mode)</h4><div class="figs">')
        for run in agents:
            if run.usage.tool_calls_by_name:
                parts.append(_fig(family_donut(run), f"by family — {run.model}"))
                parts.append(_fig(tool_bars(run), f"by tool — {run.model}"))
        parts.append("</div>")
    chart, missing = cost_scatter([page.runs[k] for k in sorted(page.runs) if k[0] == bench])
    if chart is not None:
        parts.append(_fig(chart, "F1 (overall) against mean cost per run"))
    if missing:
        parts.append(f'<p class="note">No cost above $0 reported (not in the F1-cost plot): {esc(", ".join(missing))}.</p>')
    return parts


def figures_section(page: PageData) -> str:
    """Per-category bars and forest plots per model, tool calls, F1 against cost, usage distributions."""
    parts = ['<section id="figures"><h2>Figures</h2>']
    for bench in page.benches:
        parts += _bench_figures(page, bench)
    parts.append('<h3>Turns, tokens, cost and latency per run</h3><p class="note">Box: quartiles; bar: median; '
                 "dot: mean; whiskers: min and max. One row per benchmark run (model · mode).</p>")
    for bench in page.benches:
        runs = {k: page.questions[k] for k in sorted(page.runs) if k[0] == bench}
        charts = {metric: usage_boxes(runs, metric) for metric in USAGE_METRICS}
        figs = "".join(_fig(chart, f"{bench} — {USAGE_METRICS[m][0]}") for m, chart in charts.items() if chart)
        parts.append(f'<div class="figs">{figs}</div>')
        empty = [USAGE_METRICS[m][0] for m, chart in charts.items() if chart is None]
        if empty:
            parts.append(f'<p class="note">Not drawn for {esc(bench)}: no run reported {esc(", ".join(empty))} above 0 '
                         "(scripted baselines and providers that report no usage).</p>")
    parts.append("</section>")
    return "".join(parts)


BROWSER_SHELL = """<section id="questions"><h2>Questions</h2>
<p class="note">One row per benchmark, model and question. Outcome: right = F1 1; wrong = answered with F1 &lt; 1
(partial credit included); invalid = no valid answer (scored 0); error = infrastructure error (not scored).
Click a row to open both modes' answers and the trajectory, step by step.</p>
<div class="controls">
<label>benchmark <select id="qb-bench"></select></label>
<label>model <select id="qb-model"></select></label>
<label>task <select id="qb-task"></select></label>
<label>category <select id="qb-category"></select></label>
<label>outcome <select id="qb-outcome"></select></label>
<label>of <select id="qb-of"><option value="agent">agent</option><option value="curated">curated</option>
<option value="either">either mode</option></select></label>
<label>agent vs curated <select id="qb-cmp"><option value="">any</option><option value="agent">agent better</option>
<option value="curated">curated better</option><option value="tie">same F1</option></select></label>
<label>qid <input id="qb-search" type="search" placeholder="search qid"></label>
<button id="qb-reset" type="button">reset</button>
</div>
<div class="pager"><button id="qb-prev" type="button">◀ prev</button><span id="qb-page"></span>
<button id="qb-next" type="button">next ▶</button><span id="qb-count" class="muted"></span></div>
<table id="qb-table"><colgroup><col style="width:20%"><col style="width:8%"><col style="width:10%">
<col style="width:9%"><col style="width:10%"><col style="width:12%"><col style="width:9.5%"><col style="width:9.5%">
<col style="width:12%"></colgroup><thead><tr><th>qid</th><th>benchmark</th><th>model</th><th>task</th><th>category</th><th>gold</th>
<th class="num">curated</th><th class="num">agent</th><th>answer (agent)</th></tr></thead><tbody id="qb-body"></tbody></table>
</section>"""


def manifests_section(page: PageData) -> str:
    """Every run's manifest: model, prompt and policy versions, code version, seed, settings."""
    blocks = "".join(manifest_block(key, page.inputs.manifests.get(key)) for key in sorted(page.runs))
    return f'<section id="manifests"><h2>Run manifests</h2>{blocks}</section>'


def overview_section(page: PageData, notes: Sequence[str]) -> str:
    """What the report was built from, and anything the reader should know about it."""
    items = []
    for source in page.inputs.sources:
        scores = esc(source.scores) if source.scores else "scored by the report"
        results = esc(source.results) if source.results else "none found"
        items.append(f"<li><code>{esc(source.folder)}</code>: scores {scores}; results {results} "
                     f"({len(source.result_files)} results.jsonl)</li>")
    runs = len(page.runs)
    questions = len({(q.benchmark, q.qid) for q in page.inputs.questions})
    note_items = "".join(f"<li>{esc(n)}</li>" for n in notes)
    return (f'<section id="overview"><p>{runs} runs, {questions} distinct questions, '
            f"{len(page.benches)} benchmark(s).</p><ul>{''.join(items)}</ul>"
            f'{f"<ul class=notes>{note_items}</ul>" if note_items else ""}</section>')
