"""Score bands, their colours and the badge that shows them: defined once for the dashboard, the
HTML report, the charts and the CLI."""
from __future__ import annotations

import html
from typing import Dict, Optional, Tuple

EXCELLENT = "Excellent"
GOOD = "Good"
NEEDS_IMPROVEMENT = "Needs improvement"
PROBLEM = "Problem"

# (lower bound, band), highest first: a score gets the first band whose bound it reaches.
BANDS: Tuple[Tuple[float, str], ...] = ((0.9, EXCELLENT), (0.7, GOOD), (0.5, NEEDS_IMPROVEMENT), (0.0, PROBLEM))

BAND_COLORS: Dict[str, str] = {
    EXCELLENT: "#1b7f3b",
    GOOD: "#6aa84f",
    NEEDS_IMPROVEMENT: "#e69138",
    PROBLEM: "#cc0000",
}
NA_COLOR = "#8a8a8a"  # skipped / not scored
BAND_CLASSES = {name: f"b{i}" for i, name in enumerate(BAND_COLORS)}  # CSS classes of the HTML report


def band(score: float) -> str:
    """The band of a score: Excellent (>= 0.9), Good (0.7-0.9), Needs improvement (0.5-0.7), Problem (< 0.5)."""
    for lower, name in BANDS:
        if score >= lower:
            return name
    return PROBLEM


def band_ranges() -> Dict[str, str]:
    """Each band's score range as people read it: {'Excellent': '0.9+', 'Good': '0.7–0.9', ...}."""
    out, upper = {}, None
    for lower, name in BANDS:
        out[name] = f"{lower:g}+" if upper is None else (f"< {upper:g}" if lower == 0 else f"{lower:g}–{upper:g}")
        upper = lower
    return out


def badge_html(score: Optional[float], text: Optional[str] = None, *, hint: str = "",
               css_class: bool = False, wrap: bool = False) -> str:
    """A coloured pill for `score` (grey "n/a" when None). `text` replaces the score shown and is
    escaped; `css_class` uses the report's band classes instead of inline colours (smaller pages); `wrap` lets
    its words wrap within its box (a narrow card) instead of running out of it."""
    shown = html.escape(text if text is not None else ("n/a" if score is None else f"{score:.3f}"))
    tip = f' title="{html.escape(hint)}"' if hint else ""
    if css_class:
        cls = "na" if score is None else BAND_CLASSES[band(score)]
        return f'<span class="badge {cls}"{tip}>{shown}</span>'
    color = NA_COLOR if score is None else BAND_COLORS[band(score)]
    flow = "display:inline-block;max-width:100%;white-space:normal" if wrap else "white-space:nowrap"
    return (f'<span style="background:{color};color:#fff;padding:2px 10px;border-radius:10px;'
            f'{flow}"{tip}>{shown}</span>')
