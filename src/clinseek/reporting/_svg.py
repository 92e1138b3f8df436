"""Small inline-SVG charts (no JavaScript, no external library): bars, forest plot, donut, boxes, scatter.

Every chart is a self-contained ``<svg>`` string with a ``viewBox`` (it scales with the page),
an ``aria-label``, and a ``<title>`` on each mark so hovering shows the exact value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

FONT = 12
"""Text size in SVG units (px at 100 % zoom)."""
LABEL_W = 190
"""Width of the label column of horizontal charts."""
PALETTE = ("#3b6fb6", "#e07b39", "#4c9f70", "#b55d9e", "#c9a227", "#6c8ebf", "#d1495b", "#8d6e63",
           "#00a6a6", "#7a7a7a")
"""Colours of series without a fixed colour (models, tool families)."""


def esc(text: object) -> str:
    """``text`` escaped for SVG/HTML text and attributes."""
    return escape(str(text), quote=True)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values from at or below ``low`` to at or above ``high`` (steps of 1, 2 or 5 × 10^k)."""
    if not math.isfinite(low) or not math.isfinite(high) or high <= low:
        return [low] if math.isfinite(low) else [0.0]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while True:
        ticks.append(round(value, 10))
        if value >= high - step * 1e-9:
            return ticks
        value += step


def fmt_num(value: float) -> str:
    """A compact number for axes and labels (``1.2k``, ``3.5M``, ``0.012``)."""
    size = abs(value)
    if size >= 1e6:
        return f"{value / 1e6:.3g}M"
    if size >= 1e3:
        return f"{value / 1e3:.3g}k"
    if size == 0 or size >= 1:
        return f"{value:.3g}"
    return f"{value:.2g}"


def svg(width: int, height: int, body: str, label: str) -> str:
    """Wrap ``body`` in an ``<svg>`` with a viewBox of ``width`` × ``height`` and an accessible label."""
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" role="img" '
            f'aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg" font-size="{FONT}">{body}</svg>')


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "", title: str | None = None) -> str:
    tip = f"<title>{esc(title)}</title>" if title else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{tip}{esc(text)}</text>'


def _label(y: float, name: str, bold: bool = False) -> str:
    """The label of a row of a horizontal chart, right-aligned before the plot, full text on hover."""
    extra = 'class="lab"' + (' font-weight="bold"' if bold else "")
    return _text(LABEL_W - 8, y, _clip(name), "end", extra, title=name)


def _clip(label: str, limit: int = 34) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Series:
    """One named, coloured series of a bar chart (``None`` = no value for that label)."""

    name: str
    color: str
    values: Sequence[float | None]


def _x_axis(x0: float, width: float, y: float, ticks: Sequence[float], scale: float, low: float,
            fmt: str = "{:g}") -> str:
    parts = []
    for tick in ticks:
        x = x0 + (tick - low) * scale
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="4" y2="{y:.1f}" class="grid"/>')
        parts.append(_text(x, y + 14, fmt.format(tick), "middle", 'class="tick"'))
    return "".join(parts)


def _legend(items: Sequence[tuple[str, str]], x: float, y: float) -> str:
    out = []
    for name, color in items:
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{color}"/>')
        out.append(_text(x + 14, y, name))
        x += 24 + 7 * len(name)
    return "".join(out)


def grouped_bars(labels: Sequence[str], series: Sequence[Series], *, label: str, max_value: float = 1.0,
                 scale_pct: bool = True, width: int = 600) -> str:
    """Horizontal grouped bars: one group per label, one bar per series (values in [0, max_value])."""
    bar, gap = 12, 10
    group_h = bar * len(series) + gap
    plot_w = width - LABEL_W - 60
    height = 8 + group_h * len(labels) + 44
    scale = plot_w / max_value if max_value > 0 else 1.0
    ticks = nice_ticks(0, max_value)
    fmt = "{:.0%}" if scale_pct else "{:g}"
    body = [_x_axis(LABEL_W, plot_w, height - 40, ticks, scale, 0, fmt)]
    for i, name in enumerate(labels):
        top = 8 + i * group_h
        body.append(_label(top + group_h / 2, name))
        for j, s in enumerate(series):
            value = s.values[i]
            if value is None:
                continue
            y = top + j * bar
            shown = f"{100 * value:.1f}" if scale_pct else fmt_num(value)
            body.append(f'<rect x="{LABEL_W}" y="{y:.1f}" width="{max(value * scale, 0.5):.1f}" height="{bar - 2}" '
                        f'fill="{s.color}"><title>{esc(name)} — {esc(s.name)}: {shown}</title></rect>')
            body.append(_text(LABEL_W + value * scale + 4, y + bar - 4, shown, extra='class="val"'))
    body.append(_legend([(s.name, s.color) for s in series], LABEL_W, height - 2))
    return svg(width, height + 4, "".join(body), label)


@dataclass(frozen=True, slots=True)
class ForestRow:
    """One row of a forest plot: Δ and its 95 % CI (fractions; drawn in percentage points)."""

    label: str
    delta: float
    low: float
    high: float
    n: int
    strong: bool = False
    """Bold label (overall rows)."""


def forest(rows: Sequence[ForestRow], *, label: str, width: int = 600) -> str:
    """A forest plot of Δ with 95 % CIs in percentage points, zero line marked, ``n`` at the right."""
    row_h = 22
    plot_w = width - LABEL_W - 160
    height = 16 + row_h * len(rows) + 30
    low = min([0.0, *(r.low for r in rows)]) * 100
    high = max([0.0, *(r.high for r in rows)]) * 100
    pad = max((high - low) * 0.05, 1.0)
    low, high = low - pad, high + pad
    ticks = nice_ticks(low, high)
    low, high = ticks[0], ticks[-1]
    scale = plot_w / (high - low)
    body = [_x_axis(LABEL_W, plot_w, height - 30, ticks, scale, low, "{:+g}")]
    zero = LABEL_W + (0 - low) * scale
    body.append(f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="4" y2="{height - 30}" class="zero"/>')
    for i, r in enumerate(rows):
        y = 16 + i * row_h
        body.append(_label(y + 4, r.label, r.strong))
        x_lo, x_hi = LABEL_W + (100 * r.low - low) * scale, LABEL_W + (100 * r.high - low) * scale
        x = LABEL_W + (100 * r.delta - low) * scale
        color = "#4c9f70" if r.low > 0 else ("#d1495b" if r.high < 0 else "#555")
        tip = f"{r.label}: Δ {100 * r.delta:+.1f} pp [{100 * r.low:+.1f}, {100 * r.high:+.1f}], n = {r.n}"
        body.append(f'<g><title>{esc(tip)}</title><line x1="{x_lo:.1f}" x2="{x_hi:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                    f'stroke="{color}" stroke-width="2"/><rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                    f'fill="{color}"/></g>')
        body.append(_text(LABEL_W + plot_w + 10, y + 4, f"{100 * r.delta:+.1f} [{100 * r.low:+.1f}, {100 * r.high:+.1f}]",
                          extra='class="val"'))
        body.append(_text(width - 4, y + 4, f"n={r.n}", "end", 'class="tick"'))
    body.append(_text(LABEL_W + plot_w / 2, height - 2, "Δ F1 (percentage points), paired bootstrap 95 % CI", "middle",
                      'class="tick"'))
    return svg(width, height, "".join(body), label)


def donut(parts: Sequence[tuple[str, float, str]], *, label: str, width: int = 360) -> str:
    """A donut chart of ``(name, value, colour)`` parts with a legend giving counts and shares."""
    total = sum(v for _, v, _ in parts)
    radius, inner, cx, cy = 70, 40, 80, 84
    height = max(170, 24 + 18 * len(parts))
    body: list[str] = []
    angle = -math.pi / 2
    for name, value, color in parts:
        if total <= 0 or value <= 0:
            continue
        sweep = 2 * math.pi * value / total
        tip = f"{name}: {fmt_num(value)} ({100 * value / total:.1f} %)"
        if sweep >= 2 * math.pi - 1e-9:
            body.append(f'<circle cx="{cx}" cy="{cy}" r="{(radius + inner) / 2}" fill="none" stroke="{color}" '
                        f'stroke-width="{radius - inner}"><title>{esc(tip)}</title></circle>')
        else:
            body.append(f'<path d="{_arc(cx, cy, radius, inner, angle, angle + sweep)}" fill="{color}">'
                        f"<title>{esc(tip)}</title></path>")
        angle += sweep
    body.append(_text(cx, cy + 4, fmt_num(total), "middle", 'font-weight="bold"'))
    for i, (name, value, color) in enumerate(parts):
        y = 20 + 18 * i
        share = f"{100 * value / total:.1f} %" if total > 0 else "–"
        body.append(f'<rect x="170" y="{y - 9}" width="10" height="10" fill="{color}"/>')
        body.append(_text(184, y, f"{_clip(name, 26)}  {fmt_num(value)} ({share})"))
    return svg(width, height, "".join(body), label)


def _arc(cx: float, cy: float, r: float, r_in: float, a0: float, a1: float) -> str:
    large = 1 if a1 - a0 > math.pi else 0
    p = [(cx + r * math.cos(a0), cy + r * math.sin(a0)), (cx + r * math.cos(a1), cy + r * math.sin(a1)),
         (cx + r_in * math.cos(a1), cy + r_in * math.sin(a1)), (cx + r_in * math.cos(a0), cy + r_in * math.sin(a0))]
    return (f"M{p[0][0]:.2f},{p[0][1]:.2f} A{r},{r} 0 {large} 1 {p[1][0]:.2f},{p[1][1]:.2f} "
            f"L{p[2][0]:.2f},{p[2][1]:.2f} A{r_in},{r_in} 0 {large} 0 {p[3][0]:.2f},{p[3][1]:.2f} Z")


def bars(items: Sequence[tuple[str, float]], *, label: str, color: str = PALETTE[0], width: int = 600) -> str:
    """Horizontal bars of ``(name, value)`` with the value and its share of the total at the bar's end."""
    bar = 16
    total = sum(v for _, v in items) or 1.0
    top = max([v for _, v in items] or [1.0]) or 1.0
    plot_w = width - LABEL_W - 110
    height = 8 + (bar + 4) * len(items) + 4
    body = []
    for i, (name, value) in enumerate(items):
        y = 6 + i * (bar + 4)
        w = max(plot_w * value / top, 0.5)
        body.append(_label(y + bar - 4, name))
        body.append(f'<rect x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{bar}" fill="{color}">'
                    f"<title>{esc(name)}: {fmt_num(value)}</title></rect>")
        body.append(_text(LABEL_W + w + 4, y + bar - 4, f"{fmt_num(value)} ({100 * value / total:.1f} %)",
                          extra='class="val"'))
    return svg(width, height, "".join(body), label)


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def boxes(rows: Sequence[tuple[str, Sequence[float], str]], *, label: str, axis: str, width: int = 600) -> str:
    """Box plots (min, quartiles, median, max; mean as a dot), one row per ``(name, values, colour)``.

    Rows without values are drawn as "no data".
    """
    row_h = 24
    plot_w = width - LABEL_W - 30
    height = 10 + row_h * len(rows) + 34
    every = [v for _, values, _ in rows for v in values]
    low, high = (min([0.0, *every]), max(every)) if every else (0.0, 1.0)
    ticks = nice_ticks(low, high if high > low else low + 1.0)
    low, high = ticks[0], ticks[-1]
    scale = plot_w / (high - low)
    body = [_x_axis(LABEL_W, plot_w, height - 34, ticks, scale, low)]
    for i, (name, values, color) in enumerate(rows):
        y = 10 + i * row_h + row_h / 2
        body.append(_label(y + 4, name))
        if not values:
            body.append(_text(LABEL_W + 4, y + 4, "no data", extra='class="tick"'))
            continue
        q = [_quantile(values, p) for p in (0, 0.25, 0.5, 0.75, 1)]
        mean = sum(values) / len(values)
        x = [LABEL_W + (v - low) * scale for v in q]
        tip = (f"{name}: n={len(values)}, min {fmt_num(q[0])}, q1 {fmt_num(q[1])}, median {fmt_num(q[2])}, "
               f"q3 {fmt_num(q[3])}, max {fmt_num(q[4])}, mean {fmt_num(mean)}")
        body.append(f'<g><title>{esc(tip)}</title>'
                    f'<line x1="{x[0]:.1f}" x2="{x[4]:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#666"/>'
                    f'<rect x="{x[1]:.1f}" y="{y - 7:.1f}" width="{max(x[3] - x[1], 1):.1f}" height="14" '
                    f'fill="{color}" fill-opacity="0.55" stroke="{color}"/>'
                    f'<line x1="{x[2]:.1f}" x2="{x[2]:.1f}" y1="{y - 7:.1f}" y2="{y + 7:.1f}" stroke="#222" stroke-width="2"/>'
                    f'<circle cx="{LABEL_W + (mean - low) * scale:.1f}" cy="{y:.1f}" r="2.5" fill="#222"/></g>')
    body.append(_text(LABEL_W + plot_w / 2, height - 4, axis, "middle", 'class="tick"'))
    return svg(width, height, "".join(body), label)


def scatter(points: Sequence[tuple[str, float, float, str]], *, label: str, x_axis: str, y_axis: str,
            width: int = 600) -> str:
    """A scatter of ``(name, x, y, colour)`` points (y is a fraction drawn in %), each point labelled."""
    height, left, bottom = 320, 60, 40
    plot_w, plot_h = width - left - 180, height - bottom - 16
    xs = [p[1] for p in points] or [0.0]
    x_hi = max(xs) * 1.1 if max(xs) > 0 else 1.0
    y_ticks = nice_ticks(0, 1)
    x_ticks = nice_ticks(0, x_hi)
    sx, sy = plot_w / (x_ticks[-1] or 1.0), plot_h
    body = []
    for tick in y_ticks:
        y = 16 + plot_h - tick * sy
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        body.append(_text(left - 6, y + 4, f"{tick:.0%}", "end", 'class="tick"'))
    for tick in x_ticks:
        x = left + tick * sx
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="16" y2="{16 + plot_h}" class="grid"/>')
        body.append(_text(x, 16 + plot_h + 14, fmt_num(tick), "middle", 'class="tick"'))
    labelled: dict[tuple[float, float], list[str]] = {}
    for name, x_value, y_value, color in points:
        x, y = left + x_value * sx, 16 + plot_h - y_value * sy
        tip = f"{name}: {y_axis} {100 * y_value:.1f} %, {x_axis} {fmt_num(x_value)}"
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color}"><title>{esc(tip)}</title></circle>')
        labelled.setdefault((round(x), round(y)), []).append(name)
    for (x, y), names in labelled.items():  # points drawn at the same place share one label
        body.append(_text(x + 8, y + 4, _clip(", ".join(names), 40), extra='class="val"', title="\n".join(names)))
    body.append(_text(left + plot_w / 2, height - 4, x_axis, "middle", 'class="tick"'))
    body.append(_text(12, 16 + plot_h / 2, y_axis, "middle", f'class="tick" transform="rotate(-90 12 {16 + plot_h / 2:.1f})"'))
    return svg(width, height, "".join(body), label)
