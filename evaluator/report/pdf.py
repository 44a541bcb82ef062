"""A one-page PDF summary to attach to an e-mail: the headline, the means ± std chart with its bands, what to
improve, the five worst samples with their reasoning, the notes, and the provenance caption.

The page is one vega-lite composition rendered by vl-convert, the renderer the PNG/SVG charts already use, so
the PDF costs no further dependency (bench/pdf_renderers.py measures the alternatives). Its text is real text
(a reader can select and search it; pypdf extracts it), shaped by vl-convert's text engine: Arabic and Hebrew
join and run right to left, and a right-to-left line is set flush right. Every piece of user text is data: a
vega-lite text mark draws it as written (no Markdown, no HTML, no link).
"""
from __future__ import annotations

import textwrap
import unicodedata
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..analysis import charts
from ..analysis.advice import recommendations
from ..analysis.provenance import Provenance
from ..analysis.summary import RunSummary
from ..metrics.rubric import rubrics_in_settings
from ..model import EvalResult

WIDTH = 560  # px of the page's column; vl-convert sizes the PDF page to the composition
WORST = 5
_CHARS = 95  # a text line is wrapped at this many characters
_LINES = 4  # lines of one sample's question or reasoning kept (the page stays one page)


def is_rtl(text: str) -> bool:
    """Whether the first strongly-directional character of `text` is right-to-left (Arabic, Hebrew...)."""
    for ch in text:
        kind = unicodedata.bidirectional(ch)
        if kind in ("R", "AL"):
            return True
        if kind == "L":
            return False
    return False


Line = Tuple[str, bool]  # a line of text, and whether its paragraph runs right to left


def _wrapped(text: str, limit: int = _LINES, prefix: str = "") -> List[Line]:
    """`prefix` + `text` in lines of at most _CHARS characters (at most `limit`, the last cut with an ellipsis),
    each with its paragraph's direction (a wrapped line keeps the direction of the paragraph it came from)."""
    rtl = is_rtl(text) and not prefix
    lines = textwrap.wrap(prefix + " ".join(str(text).split()), _CHARS) or [""]
    kept = lines[:limit - 1] + [lines[limit - 1][: _CHARS - 1] + "…"] if len(lines) > limit else lines
    return [(line, rtl) for line in kept]


def _line(text: str) -> Line:
    return (text, False)


def text_block(title: str, lines: Sequence[Line]) -> Dict[str, Any]:
    """A titled block of text lines: a right-to-left paragraph's lines are set flush right, in their direction."""
    rows = [{"i": i, "t": line, "rtl": rtl} for i, (line, rtl) in enumerate(lines)]
    y = {"field": "i", "type": "ordinal", "axis": None}

    def layer(rtl: bool) -> Dict[str, Any]:
        return {"transform": [{"filter": f"datum.rtl == {str(rtl).lower()}"}],
                "mark": {"type": "text", "align": "right" if rtl else "left", "baseline": "middle", "fontSize": 11,
                         "dir": "rtl" if rtl else "ltr", "limit": WIDTH},
                "encoding": {"y": y, "x": {"value": WIDTH if rtl else 0}, "text": {"field": "t"}}}

    return {"data": {"values": rows}, "layer": [layer(False), layer(True)], "width": WIDTH,
            "height": {"step": 15}, "view": {"stroke": None},
            "title": {"text": title, "anchor": "start", "fontSize": 13}}


def _headline(summary: RunSummary, dataset: str) -> Tuple[str, List[str]]:
    overall = summary.overall_mean
    counts = summary.decision.counts
    shown = "N/A" if overall is None else f"{overall:.3f}"
    lines = [f"Overall score {shown} · " + counts.summary()]
    judge = summary.judge_status
    if judge:
        lines.append(str(judge))
    return f"ragmeter report: {dataset or 'unnamed dataset'}", lines


def _advice(summary: RunSummary, settings: Mapping[str, Any]) -> List[Line]:
    found = recommendations({s.name: s.mean for s in summary.metrics},
                            metrics=rubrics_in_settings(settings))
    if not found:
        return [_line("Every metric is at least Good. Nothing urgent to fix.")]
    lines: List[Line] = []
    for item in found[:4]:
        lines += _wrapped(item.diagnosis, 2, prefix=f"{item.metric} {item.score:.3f} ({item.band}): ")
        lines += [line for action in item.actions[:2] for line in _wrapped(action, 2, prefix="    – ")]
    return lines


def _worst(rows: Iterable[Tuple[int, EvalResult]]) -> List[Line]:
    lines: List[Line] = []
    for idx, result in list(rows)[:WORST]:
        overall = result.overall_score()
        question = result.sample.question if result.sample is not None else ""
        lines.append(_line(f"#{idx + 1} · {result.sample_id or '-'} · overall "
                           f"{'N/A' if overall is None else f'{overall:.3f}'}"))
        lines += _wrapped(question, 2)
        worst = min(((n, s) for n, s in result.metric_scores().items() if not s.skipped and s.score is not None),
                    key=lambda pair: pair[1].score, default=None)
        if worst is not None and worst[1].reasoning:
            lines += _wrapped(worst[1].reasoning, 2, prefix=f"    {worst[0]} {worst[1].score:.3f}: ")
    return lines or [_line("No scored sample.")]


def summary_spec(summary: RunSummary, worst_rows: Iterable[Tuple[int, EvalResult]], provenance: Provenance, *,
                 dataset: str, settings: Mapping[str, Any], notes: Sequence[str] = ()) -> Dict[str, Any]:
    """The page as one vega-lite spec (what the PDF renders)."""
    title, subtitle = _headline(summary, dataset)
    means = charts.means_chart(None, summaries=list(summary.metrics)).to_dict()
    outer: Dict[str, Any] = {k: means.pop(k) for k in ("$schema", "datasets", "config") if k in means}
    blocks: List[Dict[str, Any]] = [means, text_block("What to improve", _advice(summary, settings)),
                                    text_block(f"The {WORST} worst samples", _worst(worst_rows))]
    if notes:
        blocks.append(text_block("Notes", [line for note in notes[:5] for line in _wrapped(note, 3)]))
    page = {**outer, "vconcat": blocks, "spacing": 18,
            "title": {"text": title, "subtitle": subtitle, "anchor": "start", "fontSize": 18}}
    return charts.captioned(page, provenance)


def summary_pdf(summary: RunSummary, worst_rows: Iterable[Tuple[int, EvalResult]], *, dataset: str,
                settings: Mapping[str, Any], run_id: Optional[str], date: str, notes: Sequence[str] = ()) -> bytes:
    """The one-page PDF summary of a run (its summary, its worst rows worst first, its notes)."""
    provenance = Provenance.of_summary(dataset=dataset, settings=settings, summary=summary, date=date,
                                       run_id=run_id or "")
    return charts.chart_pdf(summary_spec(summary, worst_rows, provenance, dataset=dataset, settings=settings,
                                         notes=notes), what="PDF summary")
