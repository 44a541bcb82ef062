"""The coverage chart of the Generate page: items per document, by kind, untouched sections in grey."""
from __future__ import annotations

from typing import Any, Dict, List

from .coverage import Coverage

UNTOUCHED = "untouched section"


def coverage_rows(coverage: Coverage) -> List[Dict[str, Any]]:
    """One row per (document, kind) with the items that touch it; untouched sections as their own kind."""
    rows: List[Dict[str, Any]] = []
    for title, sections in coverage.documents().items():
        kinds: Dict[str, int] = {}
        for s in sections:
            for kind, n in s.kinds.items():
                kinds[kind] = kinds.get(kind, 0) + n
        untouched = sum(1 for s in sections if not s.items)
        if untouched:
            kinds[UNTOUCHED] = untouched
        touched = len(sections) - untouched
        for kind, n in kinds.items():
            rows.append({"document": title, "kind": kind, "count": n,
                         "sections": f"{touched}/{len(sections)} sections touched"})
    return rows


def coverage_chart(coverage: Coverage) -> Any:
    """A horizontal stacked bar per document: items by kind, then its untouched sections (grey)."""
    import altair as alt

    rows = coverage_rows(coverage)
    kinds = sorted({r["kind"] for r in rows} - {UNTOUCHED}) + [UNTOUCHED]
    colours = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d"][:len(kinds) - 1]
    height = max(120, 22 * len(coverage.documents()))
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        y=alt.Y("document:N", sort=None, title=None),
        x=alt.X("count:Q", title="items (and untouched sections, grey)"),
        color=alt.Color("kind:N", scale=alt.Scale(domain=kinds, range=colours + ["#bbbbbb"]), title="kind"),
        tooltip=["document:N", "kind:N", "count:Q", "sections:N"],
    ).properties(height=height)
