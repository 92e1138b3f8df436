"""The page's stylesheet and script, inlined into every report (no network, no library).

The script is plain ES2020: it reads the question index (``#report-index``), fills the filters,
pages through the matching questions, and decodes a question's trajectory blobs (gzip + base64,
``DecompressionStream``) only when the reader opens it; rendered trajectories use ``textContent``
only, so nothing recorded in a run is ever interpreted as HTML.
"""

from __future__ import annotations

CSS = """
:root { --fg:#1d232b; --muted:#5f6b7a; --line:#d9dee5; --bg:#fff; --soft:#f5f7fa; --cur:#6c8ebf; --agt:#e07b39;
  --ok:#2e7d4f; --bad:#b3261e; --warn:#a56a00; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); margin: 0;
  background: var(--bg); }
header.top { position: sticky; top: 0; z-index: 5; background: #1d2b3a; color: #fff; padding: 8px 20px;
  display: flex; gap: 24px; align-items: baseline; flex-wrap: wrap; }
header.top h1 { font-size: 17px; margin: 0; }
header.top nav a { color: #cfe0ff; margin-right: 14px; text-decoration: none; }
main { max-width: 1280px; margin: 0 auto; padding: 12px 20px 60px; }
h2 { border-bottom: 2px solid var(--line); padding-bottom: 4px; margin-top: 32px; }
h3 { margin: 22px 0 8px; }
h4 { margin: 14px 0 6px; font-size: 14px; }
.note, .muted { color: var(--muted); font-size: 12.5px; }
.notes li { color: var(--warn); }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.na { color: #aaa; }
.headline td.model { font-weight: 600; border-bottom: 2px solid #9aa5b4; }
.headline tr.agent td:not(.num):not(.model) { color: var(--agt); font-weight: 600; }
.headline tr.curated td:not(.num):not(.model) { color: var(--cur); font-weight: 600; }
.headline tr.delta-row td { border-bottom: 2px solid #9aa5b4; }
.delta.pos { color: var(--ok); font-weight: 600; } .delta.neg { color: var(--bad); font-weight: 600; }
.ci { color: var(--muted); font-weight: 400; font-size: 12px; }
.card th.model { text-align: center; border-left: 2px solid #9aa5b4; }
.card tr.overall td { border-top: 2px solid #9aa5b4; }  /* bold is kept for a significant Δ */
.card td.delta.sig b { font-weight: 700; }
.detail tr.g-task td { color: var(--muted); }
.detail tr.g-overall td { font-weight: 600; }
.kv th { width: 170px; }
.figs { display: flex; flex-wrap: wrap; gap: 10px 28px; align-items: flex-start; }
.fig { margin: 4px 0 12px; max-width: 100%; }
.fig .cap { font-size: 12.5px; color: var(--muted); margin: 2px 0 4px; }
svg.chart { max-width: 100%; height: auto; }
svg .grid { stroke: #e6e9ee; } svg .zero { stroke: #333; stroke-dasharray: 3 3; }
svg .tick { fill: var(--muted); font-size: 11px; } svg .val { fill: #333; font-size: 11px; }
details.manifest { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; margin: 6px 0; }
details > summary { cursor: pointer; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--soft); padding: 6px 8px; border-radius: 4px;
  margin: 4px 0; font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.controls { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; background: var(--soft);
  padding: 8px 10px; border-radius: 6px; position: sticky; top: 38px; z-index: 4; }
.controls label { font-size: 12.5px; color: var(--muted); display: flex; gap: 4px; align-items: center; }
.controls select, .controls input { font: inherit; padding: 2px 4px; max-width: 230px; }
#qb-table { width: 100%; table-layout: fixed; }
#qb-table td { overflow-wrap: anywhere; vertical-align: top; }
#qb-table td.detail-cell { overflow: visible; }
#qb-table td.qid { overflow-wrap: anywhere; } #qb-table td.qid button { text-align: left; }
#qb-table tr.qrow { cursor: pointer; }
#qb-table tr.qrow:hover { background: #f0f5ff; }
#qb-table tr.qrow.open { background: #e8f0fe; }
#qb-table div.clamp { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 3; line-clamp: 3;
  overflow: hidden; }
.oc { display: inline-block; min-width: 52px; padding: 0 6px; border-radius: 9px; font-size: 12px; text-align: center; }
.oc-right { background: #dff3e6; color: var(--ok); } .oc-wrong { background: #fde7e4; color: var(--bad); }
.oc-invalid { background: #fff1d6; color: var(--warn); } .oc-error { background: #e9e9ef; color: #444; }
.pager { display: flex; gap: 10px; align-items: center; margin: 6px 0; }
.pager button, .controls button { font: inherit; padding: 2px 10px; }
td.detail-cell { background: #fbfcfe; padding: 10px; }
.modes { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 14px; }
.modes.single { grid-template-columns: minmax(0, 1fr); }
.mode-col h4.curated { color: var(--cur); } .mode-col h4.agent { color: var(--agt); }
.facts { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12.5px; color: var(--muted); margin: 4px 0 8px; }
.facts b { color: var(--fg); font-weight: 600; }
.answer-box { border-left: 3px solid var(--line); padding: 2px 8px; margin: 4px 0; }
.step { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; padding: 4px 8px; background: #fff; }
.step .head { font-size: 12px; color: var(--muted); }
.step.assistant { border-left: 3px solid var(--agt); } .step.tool { border-left: 3px solid #9aa5b4; margin-left: 18px; }
.step.user { border-left: 3px solid var(--cur); } .step.tool.err { border-left-color: var(--bad); }
.tool-call { margin: 4px 0; } .tool-name { font-family: ui-monospace, Menlo, monospace; font-weight: 600; color: #6a3d9a; }
.reasoning { color: #555; font-style: italic; }
.step img { max-width: 360px; max-height: 360px; border: 1px solid var(--line); margin: 4px 6px 4px 0; }
.badge { font-size: 11px; padding: 0 5px; border-radius: 8px; background: #eee; margin-left: 4px; }
.badge.err { background: #fde7e4; color: var(--bad); } .badge.cut { background: #fff1d6; color: var(--warn); }
@media (max-width: 900px) { .modes { grid-template-columns: minmax(0, 1fr); } }
#qb-table button.link { border: 0; background: none; color: #1a56b0; cursor: pointer; padding: 0; font: inherit;
  text-decoration: underline; }
pre.args { margin: 2px 0 2px 12px; }
"""

JS = r"""
(() => {
"use strict";
const IDX = JSON.parse(document.getElementById("report-index").textContent);
const PAGE = 50;
const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text); return e; };
// long gold and answer lists show 3 lines (the row's title and its detail view give all of it); other cells wrap
const clampCell = (cls, text) => { const td = el("td", cls); td.appendChild(el("div", "clamp", text)); return td; };
const cache = new Map();
let state = { page: 0, matches: [], open: new Set() };

async function decode(id) {
  if (cache.has(id)) return cache.get(id);
  const node = document.getElementById(id);
  if (!node) return null;
  const promise = (async () => {
    const bin = atob(node.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  })();
  cache.set(id, promise);
  return promise;
}

function fill(select, names, allLabel) {
  select.replaceChildren(el("option", null, allLabel));
  select.firstChild.value = "";
  names.forEach((n, i) => { const o = el("option", null, n); o.value = String(i); select.appendChild(o); });
}

function initFilters() {
  fill($("qb-bench"), IDX.benches, "all benchmarks");
  fill($("qb-model"), IDX.models, "all models");
  fill($("qb-task"), IDX.tasks, "all tasks");
  fill($("qb-category"), IDX.categories, "all categories");
  fill($("qb-outcome"), IDX.outcomes, "any outcome");
  for (const id of ["qb-bench", "qb-model", "qb-task", "qb-category", "qb-outcome", "qb-of", "qb-cmp"])
    $(id).addEventListener("change", () => apply(true));
  $("qb-search").addEventListener("input", () => apply(true));
  $("qb-prev").addEventListener("click", () => { state.page--; render(); });
  $("qb-next").addEventListener("click", () => { state.page++; render(); });
  $("qb-reset").addEventListener("click", () => {
    for (const id of ["qb-bench", "qb-model", "qb-task", "qb-category", "qb-outcome", "qb-cmp"]) $(id).value = "";
    $("qb-of").value = "agent"; $("qb-search").value = ""; apply(true);
  });
}

function val(id) { const v = $(id).value; return v === "" ? null : Number(v); }

function matches(r, f) {
  if (f.bench !== null && r[0] !== f.bench) return false;
  if (f.model !== null && r[1] !== f.model) return false;
  if (f.task !== null && r[3] !== f.task) return false;
  if (f.category !== null && r[4] !== f.category) return false;
  if (f.q && !r[2].toLowerCase().includes(f.q)) return false;
  if (f.outcome !== null) {
    const modes = f.of === "either" ? [r[7], r[8]] : [f.of === "curated" ? r[7] : r[8]];
    if (!modes.some((m) => m && m[0] === f.outcome)) return false;
  }
  if (f.cmp) {
    if (!r[7] || !r[8]) return false;
    const d = r[8][1] - r[7][1];
    if (f.cmp === "agent" && !(d > 1e-9)) return false;
    if (f.cmp === "curated" && !(d < -1e-9)) return false;
    if (f.cmp === "tie" && Math.abs(d) > 1e-9) return false;
  }
  return true;
}

function apply(reset) {
  const f = { bench: val("qb-bench"), model: val("qb-model"), task: val("qb-task"), category: val("qb-category"),
    outcome: val("qb-outcome"), of: $("qb-of").value, cmp: $("qb-cmp").value,
    q: $("qb-search").value.trim().toLowerCase() };
  state.matches = [];
  IDX.rows.forEach((r, i) => { if (matches(r, f)) state.matches.push(i); });
  if (reset) state.page = 0;
  render();
}

function modeCell(m) {
  const td = el("td", "num");
  if (!m) { td.textContent = "–"; td.classList.add("na"); return td; }
  const name = IDX.outcomes[m[0]];
  td.appendChild(el("span", "oc oc-" + name, name));
  td.appendChild(document.createTextNode(" " + (100 * m[1]).toFixed(1)));
  return td;
}

function render() {
  const body = $("qb-body");
  const pages = Math.max(1, Math.ceil(state.matches.length / PAGE));
  state.page = Math.min(Math.max(state.page, 0), pages - 1);
  const start = state.page * PAGE;
  const shown = state.matches.slice(start, start + PAGE);
  body.replaceChildren();
  for (const i of shown) {
    const r = IDX.rows[i];
    const tr = el("tr", "qrow");
    tr.dataset.row = String(i);
    tr.dataset.qid = r[2];
    const q = el("td", "qid"); const b = el("button", "link", r[2]); b.type = "button"; q.appendChild(b);
    tr.append(q, el("td", null, IDX.benches[r[0]]), el("td", null, IDX.models[r[1]]), el("td", null, IDX.tasks[r[3]]),
      el("td", null, IDX.categories[r[4]]), clampCell("gold", r[6]), modeCell(r[7]), modeCell(r[8]),
      clampCell("ans", r[8] ? r[8][2] : (r[7] ? r[7][2] : "")));
    for (const td of tr.children) if (!td.classList.contains("num")) td.title = td.textContent;
    tr.addEventListener("click", () => toggle(tr, i));
    body.appendChild(tr);
    if (state.open.has(i)) toggle(tr, i, true);
  }
  $("qb-count").textContent = state.matches.length
    ? `showing ${start + 1}–${start + shown.length} of ${state.matches.length} (of ${IDX.rows.length})`
    : `no question matches (of ${IDX.rows.length})`;
  $("qb-count").dataset.total = String(state.matches.length);
  $("qb-page").textContent = `page ${state.page + 1} / ${pages}`;
  $("qb-prev").disabled = state.page === 0;
  $("qb-next").disabled = state.page >= pages - 1;
}

function toggle(tr, i, reopen) {
  const next = tr.nextElementSibling;
  if (!reopen && next && next.classList.contains("detail-row")) {
    next.remove(); tr.classList.remove("open"); state.open.delete(i); return;
  }
  state.open.add(i); tr.classList.add("open");
  const row = el("tr", "detail-row"); const td = el("td", "detail-cell"); td.colSpan = 9;
  td.appendChild(el("div", "muted", "decoding…"));
  row.appendChild(td); tr.after(row);
  showDetail(td, IDX.rows[i]).catch((err) => { td.replaceChildren(el("div", "badge err", "could not decode: " + err)); });
}

async function showDetail(td, r) {
  const wrap = el("div", "qdetail");
  const head = el("div", "facts");
  const add = (k, v) => { const s = el("span"); s.append(el("b", null, k + ": "), document.createTextNode(v)); head.appendChild(s); };
  add("qid", r[2]); add("task", IDX.tasks[r[3]]); add("category", IDX.categories[r[4]]); add("type", IDX.types[r[5]]);
  wrap.appendChild(head);
  const gold = el("div", "answer-box"); gold.append(el("b", null, "Gold: "), document.createTextNode(r[6] || "–"));
  wrap.appendChild(gold);
  const modes = [["curated", "Curated Input", r[7]], ["agent", IDX.agent_titles[r[1]], r[8]]].filter((m) => m[2]);
  const grid = el("div", modes.length > 1 ? "modes" : "modes single");
  for (const [mode, title, m] of modes) grid.appendChild(await modeColumn(mode, title, m));
  wrap.appendChild(grid);
  td.replaceChildren(wrap);
}

async function modeColumn(mode, title, m) {
  const col = el("div", "mode-col " + mode);
  col.appendChild(el("h4", mode, `${title} — ${IDX.outcomes[m[0]]}, F1 ${(100 * m[1]).toFixed(1)}`));
  const pct = (v) => (100 * v).toFixed(1);
  col.appendChild(el("div", "facts", `precision ${pct(m[5])} · recall ${pct(m[6])} · exact match ${pct(m[7])} · rule ${m[8] ?? "–"} · status ${m[4]}`));
  const ans = el("div", "answer-box"); ans.append(el("b", null, "Answer: "), document.createTextNode(m[2] || "(none)"));
  col.appendChild(ans);
  if (!m[3].length) { col.appendChild(el("div", "muted", `no trajectory in the results (status ${m[4]})`)); return col; }
  for (const [k, id] of m[3].entries()) {
    const run = await decode(id);
    const box = el("details", "run"); box.open = k === 0;
    box.appendChild(el("summary", null, `run ${run.run_index} · ${run.status} · ${run.stop_reason}`));
    box.appendChild(await trajectory(run));
    col.appendChild(box);
  }
  return col;
}

function fmt(n, digits) { return n === null || n === undefined ? "–" : Number(n).toLocaleString(undefined, { maximumFractionDigits: digits ?? 2 }); }

function longText(text, cls) {
  text = text ?? "";
  const lines = text.split("\n");
  if (text.length <= 900 && lines.length <= 16) return el("pre", cls, text);
  const d = el("details", "long");
  d.appendChild(el("summary", null, `${lines.slice(0, 3).join(" ⏎ ").slice(0, 160)} … (${text.length.toLocaleString()} chars, ${lines.length} lines)`));
  d.addEventListener("toggle", () => { if (d.open && d.children.length === 1) d.appendChild(el("pre", cls, text)); });
  return d;
}

async function images(ids) {
  const box = el("div", "imgs");
  for (const id of ids || []) {
    const img = await decode("img-" + id);
    if (img && img.uri) { const i = el("img"); i.src = img.uri; i.alt = img.path; i.title = img.path; box.appendChild(i); }
    else box.appendChild(el("div", "badge err", `image ${img ? img.path : id}: ${img ? img.error : "missing"}`));
  }
  return box;
}

async function trajectory(run) {
  const box = el("div", "traj");
  const facts = el("div", "facts");
  const add = (k, v) => { const s = el("span"); s.append(el("b", null, k + ": "), document.createTextNode(v)); facts.appendChild(s); };
  add("status", run.status); add("stop", run.stop_reason); add("turns", run.turns);
  add("tool calls", Object.values(run.tool_calls || {}).reduce((a, b) => a + b, 0));
  add("tokens in/out", `${fmt(run.input_tokens, 0)} / ${fmt(run.output_tokens, 0)}`);
  add("cost", run.cost_usd === null ? "unknown" : "$" + fmt(run.cost_usd, 4));
  add("latency", fmt(run.latency_s) + " s"); add("prediction time", run.prediction_time ?? "–");
  box.appendChild(facts);
  if (run.error) box.appendChild(el("div", "badge err", run.error_type ? `${run.error_type}: ${run.error}` : run.error));
  if (run.invalid_answer && run.invalid_answer.length) box.appendChild(el("div", "badge cut", "not in the candidates: " + run.invalid_answer.join("; ")));
  for (const step of run.steps) box.appendChild(await stepNode(step));
  return box;
}

async function stepNode(step) {
  const node = el("div", "step " + step.kind);
  if (step.kind === "system") {
    const texts = await decode("shared-texts");
    const text = texts ? texts[step.ref] : "";
    const d = el("details"); d.appendChild(el("summary", "head", `system prompt (${(text || "").length.toLocaleString()} chars)`));
    d.addEventListener("toggle", () => { if (d.open && d.children.length === 1) d.appendChild(el("pre", null, text)); });
    node.appendChild(d);
  } else if (step.kind === "user") {
    node.appendChild(el("div", "head", "user"));
    node.appendChild(longText(step.text));
  } else if (step.kind === "assistant") {
    const bits = [`turn ${step.turn}`];
    if (step.latency_s !== undefined) bits.push(`${fmt(step.latency_s)} s`, `${fmt(step.input_tokens, 0)} in / ${fmt(step.output_tokens, 0)} out tokens`);
    if (step.cost_usd !== undefined && step.cost_usd !== null) bits.push("$" + fmt(step.cost_usd, 5));
    node.appendChild(el("div", "head", "assistant · " + bits.join(" · ")));
    if (step.reasoning) { const d = el("details", "reasoning"); d.appendChild(el("summary", null, "reasoning")); d.appendChild(el("pre", "reasoning", step.reasoning)); node.appendChild(d); }
    if (step.text) node.appendChild(longText(step.text));
    for (const call of step.calls || []) node.appendChild(callNode(call));
  } else {
    const bits = [`↳ ${step.name ?? "tool"}`];
    if (step.elapsed_s !== undefined) bits.push(`${fmt(step.elapsed_s, 3)} s`, `${fmt(step.output_chars, 0)} chars`);
    const head = el("div", "head", bits.join(" · "));
    if (step.truncated) head.appendChild(el("span", "badge cut", "truncated"));
    if (step.is_error) { head.appendChild(el("span", "badge err", step.error_kind || "error")); node.classList.add("err"); }
    node.appendChild(head);
    node.appendChild(longText(step.text, "tool-output"));
  }
  if (step.images && step.images.length) node.appendChild(await images(step.images));
  return node;
}

function callNode(call) {
  const d = el("div", "tool-call");
  d.appendChild(el("span", "tool-name", call.name));
  const args = call.args || {};
  for (const [key, value] of Object.entries(args)) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    const pre = el("pre", "args" + (/sql/i.test(key) ? " sql" : ""));
    pre.append(el("span", "muted", key + ": "), document.createTextNode(text));
    d.appendChild(pre);
  }
  if (call.raw_arguments) d.appendChild(el("pre", "args", "raw: " + call.raw_arguments));
  if (call.error) d.appendChild(el("div", "badge err", `${call.error_kind || "error"}: ${call.error}`));
  return d;
}

initFilters();
if (location.hash.startsWith("#q=")) { $("qb-search").value = decodeURIComponent(location.hash.slice(3)); }
apply(true);
document.body.dataset.ready = "1";
})();
"""
