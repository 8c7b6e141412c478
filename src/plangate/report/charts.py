"""Charts as inline SVG, drawn at build time with leather (no script, no font, no fetch).

Each function takes plain numbers and labels and returns one ``<svg>`` element
as text, ready to sit inside the page. Labels are text nodes serialised by
:mod:`xml.etree.ElementTree`, which escapes them; the page never carries the
chart library's own document header. leather is imported on first use: it is
the ``report`` extra, and :func:`require_charts` turns its absence into a
clear refusal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plangate.errors import EnvironmentFailure
from plangate.report.model import Timeline, clip

LABEL_CHARS = 36
"""Longest label drawn in a chart (tables beside the charts hold the full text)."""
MAX_DAYS = 31
"""Most recent days drawn in the timeline chart (the table lists every day)."""
MAX_KIND_PANELS = 6
"""Kinds drawn as their own panel; the rest are summed into one."""
BASELINE_COLOR = "#4c72b0"
CANDIDATE_COLOR = "#dd8452"
BAR_COLOR = "#8172b2"
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def require_charts() -> Any:
    """The leather module, themed for the page; ``REPORT_CHARTS_UNAVAILABLE`` when missing."""
    try:
        import leather  # type: ignore[import-untyped]
    except ImportError:
        raise EnvironmentFailure(
            "REPORT_CHARTS_UNAVAILABLE",
            "the HTML report draws its charts with the 'leather' package, which is not installed",
            "leather is one of PlanGate's own dependencies: reinstall PlanGate (pip install "
            "--force-reinstall plangate), or use --format markdown",
        ) from None
    theme = leather.theme
    for name in (
        "title_font_family",
        "legend_font_family",
        "tick_font_family",
        "axis_title_font_family",
    ):
        setattr(theme, name, _FONT)
    theme.background_color = "#ffffff"
    theme.title_font_size = 14
    theme.tick_font_size = 11
    theme.margin = 0.02  # a share of the width (leather reads only a float here)
    return leather


def _unique(labels: Sequence[str]) -> list[str]:
    """Labels clipped for drawing, made distinct (an ordinal axis merges equal labels)."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        shown = clip(label, LABEL_CHARS)
        count = seen.get(shown, 0)
        seen[shown] = count + 1
        out.append(shown if count == 0 else f"{shown} #{count + 1}")
    return out


TOP_PAD = 16
"""Room above each panel: leather draws a title's glyphs above its group's top edge."""


def _svg(title: str, width: int, height: int, groups: Sequence[tuple[int, int, Any]]) -> str:
    """One ``<svg>`` holding leather groups at the given offsets."""
    import xml.etree.ElementTree as ET

    height += TOP_PAD
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {width} {height}",
            "width": str(width),
            "height": str(height),
            "role": "img",
            "class": "chart",
        },
    )
    ET.SubElement(root, "title").text = title
    for x, y, group in groups:
        holder = ET.SubElement(root, "g", {"transform": f"translate({x} {y + TOP_PAD})"})
        holder.append(group)
    return ET.tostring(root, encoding="unicode", short_empty_elements=True)


def bar_chart(title: str, items: Sequence[tuple[str, int]], *, width: int = 640) -> str:
    """Horizontal bars, one per label (in the order given)."""
    leather = require_charts()
    labels = _unique([label for label, _count in items])
    height = 70 + 26 * len(items)
    chart = leather.Chart(title)
    chart.add_bars(
        [(count, label) for label, (_l, count) in zip(labels, items, strict=True)],
        fill_color=BAR_COLOR,
    )
    top = max([count for _label, count in items] + [1])
    chart.set_x_scale(leather.Linear(0, top))
    chart.add_x_axis(ticks=_ticks(top))
    return _svg(title, width, height, [(0, 0, chart.to_svg_group(width, height))])


def _ticks(top: int) -> list[int]:
    """Whole-number ticks from 0 to ``top`` (at most six)."""
    step = max(1, -(-top // 5))
    return list(range(0, top + 1, step)) if top > 0 else [0, 1]


def timeline_chart(data: Timeline, *, width: int = 960) -> str:
    """Entries per day, one small panel per kind, sharing one scale."""
    leather = require_charts()
    days = list(data.days[-MAX_DAYS:])
    ranked = [c.label for c in data.per_kind]
    panels: list[tuple[str, list[int]]] = [
        (kind, [data.counts.get((day, kind), 0) for day in days])
        for kind in ranked[:MAX_KIND_PANELS]
    ]
    rest = ranked[MAX_KIND_PANELS:]
    if rest:
        panels.append(
            (
                f"{len(rest)} other kinds",
                [sum(data.counts.get((day, kind), 0) for kind in rest) for day in days],
            )
        )
    top = max([v for _kind, values in panels for v in values] + [1])
    columns = 2 if len(panels) > 1 else 1
    panel_w, panel_h = width // columns, 200
    labels = [day[5:] for day in days]  # MM-DD: the year is in the table
    groups = []
    for index, (kind, values) in enumerate(panels):
        chart = leather.Chart(clip(kind, LABEL_CHARS))
        chart.add_columns(list(zip(labels, values, strict=True)), fill_color=BAR_COLOR)
        chart.set_y_scale(leather.Linear(0, top))
        chart.add_y_axis(ticks=_ticks(top))
        x, y = (index % columns) * panel_w, (index // columns) * (panel_h + TOP_PAD)
        groups.append((x, y, chart.to_svg_group(panel_w, panel_h)))
    rows = -(-len(panels) // columns)
    return _svg("Ledger entries per day, by kind", width, rows * (panel_h + TOP_PAD), groups)


def paired_chart(
    title: str,
    labels: Sequence[str],
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    width: int = 960,
) -> str:
    """Baseline and candidate side by side: one bar per fixture, share of trials stopped."""
    leather = require_charts()
    shown = _unique(labels)
    height = 80 + 26 * len(labels)
    half = width // 2
    groups = []
    for index, (side, values, color) in enumerate(
        (("baseline", baseline, BASELINE_COLOR), ("candidate", candidate, CANDIDATE_COLOR))
    ):
        chart = leather.Chart(f"{side}: share of trials stopped")
        chart.add_bars(list(zip(values, shown, strict=True)), fill_color=color)
        chart.set_x_scale(leather.Linear(0, 1))
        chart.add_x_axis(ticks=[0, 0.25, 0.5, 0.75, 1])
        groups.append((index * half, 0, chart.to_svg_group(half, height)))
    return _svg(title, width, height, groups)
