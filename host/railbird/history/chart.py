"""Server-rendered SVG bar charts for the history pages: no script, no library. The chart
scales to its box (a `viewBox`, width 100 %), so it fits a phone and a TV alike; each bar is
a `rect.bar` carrying `data-key` and `data-count` (and a `<title>` for a pointer), so a
test or a screen reader reads the numbers, not the pixels."""

from __future__ import annotations

import math
from html import escape

W, H = 640, 240  # the drawing's own units; the page sizes it
LEFT, RIGHT, TOP, BOTTOM = 34, 6, 14, 30
MAX_LABELS = 16  # x labels shown at most (every k-th bar beyond that)


def _nice_max(n: int) -> int:
    """A round top for the axis, at or above the largest bar (at least 1)."""
    if n <= 5:
        return max(1, n)
    step = 10 ** int(math.log10(n))
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= n:
            return int(m * step)
    return n


def bars(items: list[tuple[str, str, int]], title: str, chart_id: str) -> str:
    """items: (key, x label, count) in order -> an <svg> element."""
    top = _nice_max(max((c for _, _, c in items), default=0))
    n = max(1, len(items))
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    slot = plot_w / n
    gap = min(4.0, slot * 0.2)
    every = max(1, math.ceil(n / MAX_LABELS))
    out = [
        f'<svg class="chart" id="{escape(chart_id)}" viewBox="0 0 {W} {H}" '
        f'preserveAspectRatio="xMidYMid meet" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{W - RIGHT}" '
        f'y2="{TOP + plot_h}"/>',
        f'<text class="ylabel" x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{top}</text>',
        f'<text class="ylabel" x="{LEFT - 4}" y="{TOP + plot_h}" text-anchor="end">0</text>',
        f'<line class="grid" x1="{LEFT}" y1="{TOP}" x2="{W - RIGHT}" y2="{TOP}"/>',
    ]
    for i, (key, label, count) in enumerate(items):
        h = plot_h * count / top if top else 0
        x = LEFT + i * slot + gap / 2
        y = TOP + plot_h - h
        k, lab = escape(str(key)), escape(str(label))
        out.append(
            f'<rect class="bar" data-key="{k}" data-count="{int(count)}" x="{x:.2f}" '
            f'y="{y:.2f}" width="{max(0.5, slot - gap):.2f}" height="{h:.2f}">'
            f"<title>{lab}: {int(count)}</title></rect>"
        )
        if i % every == 0:
            cx = LEFT + (i + 0.5) * slot
            out.append(
                f'<text class="xlabel" x="{cx:.2f}" y="{H - BOTTOM + 16}" '
                f'text-anchor="middle">{lab}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def line(items: list[tuple[str, str, float]], title: str, chart_id: str) -> str:
    """items: (key, label, value) in order -> an <svg> line (a player's rating over time);
    each point a `circle.pt` with `data-key` and `data-value`. The axis spans the values
    (not from zero: a rating moves by tens of points around hundreds)."""
    values = [v for _, _, v in items]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi - lo < 20:  # a flat line sits mid-chart, not on an axis
        lo, hi = (lo + hi) / 2 - 10, (lo + hi) / 2 + 10
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    n = max(1, len(items) - 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        x = LEFT + (plot_w * i / n if len(items) > 1 else plot_w / 2)
        return x, TOP + plot_h - plot_h * (v - lo) / (hi - lo)

    pts = [xy(i, v) for i, (_, _, v) in enumerate(items)]
    out = [
        f'<svg class="chart" id="{escape(chart_id)}" viewBox="0 0 {W} {H}" '
        f'preserveAspectRatio="xMidYMid meet" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text class="ylabel" x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{hi:.0f}</text>',
        f'<text class="ylabel" x="{LEFT - 4}" y="{TOP + plot_h}" text-anchor="end">{lo:.0f}</text>',
        f'<line class="grid" x1="{LEFT}" y1="{TOP}" x2="{W - RIGHT}" y2="{TOP}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{W - RIGHT}" '
        f'y2="{TOP + plot_h}"/>',
    ]
    if len(pts) > 1:
        path = " ".join(f"{x:.2f},{y:.2f}" for x, y in pts)
        out.append(f'<polyline class="trend" points="{path}"/>')
    for (key, label, v), (x, y) in zip(items, pts, strict=True):
        out.append(
            f'<circle class="pt" data-key="{escape(str(key))}" data-value="{v:.1f}" '
            f'cx="{x:.2f}" cy="{y:.2f}" r="3"><title>{escape(str(label))}: {v:.1f}</title>'
            "</circle>"
        )
    out.append("</svg>")
    return "".join(out)
