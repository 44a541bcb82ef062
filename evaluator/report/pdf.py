"""A one-page PDF summary a manager reads alone: the run's name and date, the overall score with its band and,
for an offline run, the caveat as large as the score; a paragraph in plain words on what is measured; the means
chart under plain metric titles (the technical name small beneath); what to improve; the five weakest answers;
the notes; and the provenance caption.

The page is A4 or US Letter (PAGES; RAGMETER_PDF_PAGE or `--pdf-page`, A4 by default) whatever the content: the
spec is measured once at its natural size, the longest blocks lose lines until it fits, and it is drawn on a
fixed page (vega's autosize "none"). Text is set in a font with regular-weight Arabic (FONT): the renderer's
own fallback for Arabic is a bold face.

The page is one vega-lite composition rendered by vl-convert, the renderer the PNG/SVG charts already use, so
the PDF costs no further dependency (bench/pdf_renderers.py measures the alternatives). Its text is real text
(a reader can select and search it; pypdf extracts it), shaped by vl-convert's text engine: Arabic and Hebrew
join and run right to left, and a right-to-left line is set flush right. Every piece of user text is data: a
vega-lite text mark draws it as written (no Markdown, no HTML, no link).
"""
from __future__ import annotations

import math
import re
import textwrap
import unicodedata
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .. import environment
from ..analysis import charts
from ..analysis.advice import recommendations
from ..analysis.aggregate import means_rows
from ..analysis.bands import BAND_COLORS, band
from ..analysis.judging import OFFLINE_NOTICE
from ..analysis.summary import RunSummary
from ..errors import RagmeterError
from ..metrics.registry import metric_description, metric_title
from ..metrics.rubric import rubrics_in_settings
from ..model import EvalResult
from .header import RunHeader

WORST = 5
PAGES: Dict[str, Tuple[int, int]] = {"a4": (595, 842), "letter": (612, 792)}  # points, 1 px = 1 pt in the PDF
DEFAULT_PAGE = "a4"
PAGE_VARIABLE = "RAGMETER_PDF_PAGE"
MARGIN = 28  # pt around the page's content
WIDTH = PAGES["letter"][0] - 2 * MARGIN - 6  # px of the text column: fits both pages
FONT = "'DejaVu Sans', 'Noto Sans', 'Noto Sans Arabic', sans-serif"
_LINE_PX = 15
CAPTION_PX = 34  # the provenance caption under the content (charts.captioned: two 10 px lines)
_CHARS = 92  # a text line is wrapped at this many characters
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


def text_block(title: str, lines: Sequence[Line], size: int = 11, color: str = "#1f2328") -> Dict[str, Any]:
    """A titled block of text lines: a right-to-left paragraph's lines are set flush right, in their direction."""
    rows = [{"i": i, "t": line, "rtl": rtl} for i, (line, rtl) in enumerate(lines)]
    y = {"field": "i", "type": "ordinal", "axis": None}

    def layer(rtl: bool) -> Dict[str, Any]:
        return {"transform": [{"filter": f"datum.rtl == {str(rtl).lower()}"}],
                "mark": {"type": "text", "align": "right" if rtl else "left", "baseline": "middle", "fontSize": size,
                         "fontWeight": "normal", "color": color,
                         "dir": "rtl" if rtl else "ltr", "limit": WIDTH},
                "encoding": {"y": y, "x": {"value": WIDTH if rtl else 0}, "text": {"field": "t"}}}

    return {"data": {"values": rows}, "layer": [layer(False), layer(True)], "width": WIDTH,
            "height": {"step": max(_LINE_PX, size + 5)}, "view": {"stroke": None},
            "title": {"text": title, "anchor": "start", "fontSize": 13}}




def page_size(name: str = "") -> Tuple[int, int]:
    """The page's (width, height) in points: `name`, else RAGMETER_PDF_PAGE, else A4; RagmeterError otherwise."""
    chosen = (name or environment.read(PAGE_VARIABLE) or DEFAULT_PAGE).strip().lower()
    if chosen not in PAGES:
        raise RagmeterError(f"PDF page size {chosen!r}: use one of {', '.join(PAGES)} (--pdf-page or {PAGE_VARIABLE})")
    return PAGES[chosen]


def _headline(summary: RunSummary) -> List[Tuple[str, int, str]]:
    """(text, font size, colour) of the lines under the title: the score with its band, and for an offline run
    the caveat set as large as the score, so a reader cannot see one without the other."""
    overall = summary.overall_mean
    shown = "N/A" if overall is None else f"{overall:.3f} ({band(overall)})"
    lines = [(f"Overall score {shown} · " + summary.decision.counts.summary(), 16, "#1f2328")]
    if summary.trust.offline:
        lines.append(("Offline estimate: words matched, not judged by a model", 16,
                      "#9a3412"))
    return lines


def measures(summary: RunSummary, judge: str) -> List[Line]:
    """One paragraph in plain words: what was scored, on what scale, by whom, and what each metric asks."""
    parts = [f"{metric_title(m.name)}: {_lower_first(metric_description(m.name) or 'a score from 0 to 1')}"
             for m in summary.metrics]
    text = (f"Each of the {summary.n_rows:,} answers of the system under test was scored from 0 (poor) to 1 "
            f"(good). {' '.join(parts)} The overall score is the mean over the answers. Scored by: {judge}.")
    return _wrapped(text, 10)


def _lower_first(text: str) -> str:
    text = text.strip()
    return (text[:1].lower() + text[1:]).rstrip(".") + "." if text else text


LABELS_PX = 150  # the metric titles' column, inside the chart (the text blocks line up with the chart's left)


def plain_means(summary: RunSummary) -> Dict[str, Any]:
    """The means chart under plain titles ("Context precision"), the technical name small beneath each."""
    rows = [{**r, "title": metric_title(r["metric"]), "shown": f"{r['mean']:.3f} {r['band']}"}
            for r in means_rows(list(summary.metrics))]
    score = {"domain": [0, 1], "range": [LABELS_PX + 10, WIDTH - 90]}
    x = {"field": "mean", "type": "quantitative", "scale": score, "title": charts.AXIS_TITLE,
         "axis": {"values": [0, 0.5, 0.7, 0.9, 1], "format": ".1f"}}
    color = {"field": "band", "type": "nominal", "title": "band",
             "scale": {"domain": list(BAND_COLORS), "range": list(BAND_COLORS.values())}, "legend": None}
    at = {"x": {"value": LABELS_PX}, "y": {"field": "title", "type": "nominal", "sort": None, "axis": None,
                                           "bandPosition": 0.5}}
    return {"data": {"values": rows}, "width": WIDTH, "height": {"step": 30},
            "title": {"text": "Mean score per metric (bar: mean; line: ± 1 standard deviation)", "anchor": "start",
                      "fontSize": 13},
            "encoding": {"y": {"field": "title", "type": "nominal", "sort": None, "axis": None}},
            "layer": [{"mark": {"type": "bar", "height": {"band": 0.6}}, "encoding": {"x": x, "color": color}},
                      {"mark": {"type": "rule", "color": "#1f2328"},
                       "encoding": {"x": {"field": "low", "type": "quantitative", "scale": score},
                                    "x2": {"field": "high"}}},
                      {"mark": {"type": "text", "align": "left", "dx": 4, "dy": -8, "fontSize": 10},
                       "encoding": {"x": {"field": "mean", "type": "quantitative", "scale": score},
                                    "text": {"field": "shown"}}},
                      {"mark": {"type": "text", "align": "right", "baseline": "bottom", "dy": 2, "fontSize": 11},
                       "encoding": {**at, "text": {"field": "title"}}},
                      {"mark": {"type": "text", "align": "right", "baseline": "top", "dy": 3, "fontSize": 8,
                                "color": charts.CAPTION_COLOR},
                       "encoding": {**at, "text": {"field": "metric"}}}]}


def _advice(summary: RunSummary, settings: Mapping[str, Any]) -> List[Line]:
    found = recommendations({s.name: s.mean for s in summary.metrics},
                            metrics=rubrics_in_settings(settings))
    if not found:
        return [_line("Every metric is at least Good. Nothing urgent to fix.")]
    lines: List[Line] = []
    for item in found[:3]:
        lines += _wrapped(item.diagnosis, 2, prefix=f"{metric_title(item.metric)} {item.score:.3f} ({item.band}): ")
        lines += [line for action in item.actions[:1] for line in _wrapped(action, 1, prefix="    – ")]
    return lines


def _worst(rows: Iterable[Tuple[int, EvalResult]]) -> List[Line]:
    lines: List[Line] = []
    for idx, result in list(rows)[:WORST]:
        overall = result.overall_score()
        question = result.sample.question if result.sample is not None else ""
        lines.append(_line(f"#{idx + 1} · {result.sample_id or '-'} · overall "
                           f"{'N/A' if overall is None else f'{overall:.3f}'}"))
        lines += _wrapped(question, 1)
        worst = min(((n, s) for n, s in result.metric_scores().items() if not s.skipped and s.score is not None),
                    key=lambda pair: pair[1].score, default=None)
        if worst is not None and worst[1].reasoning:
            lines += _wrapped(worst[1].reasoning, 1, prefix=f"    why {metric_title(worst[0]).lower()} is "
                                                            f"{worst[1].score:.3f}: ")
    return lines or [_line("No scored sample.")]


Blocks = List[Tuple[str, List[Line]]]  # (title, lines) of the text blocks under the chart, in order


def _blocks(summary: RunSummary, worst_rows: Iterable[Tuple[int, EvalResult]], settings: Mapping[str, Any],
            header: RunHeader) -> Blocks:
    blocks: Blocks = [("What to improve", _advice(summary, settings)),
                      (f"The {WORST} weakest answers", _worst(worst_rows))]
    if header.notes:
        blocks.append(("Notes", [line for head, text in header.notes[:5]
                                 for line in _wrapped(text, 3, prefix=f"{head}: ")]))
    return blocks


def summary_spec(summary: RunSummary, blocks: Blocks, header: RunHeader, page: Tuple[int, int] = PAGES["a4"]
                 ) -> Dict[str, Any]:
    """The page as one vega-lite spec at its natural size (summary_pdf fixes it to `page`)."""
    p = header.provenance
    top = [text_block("", [(text, False)], size=size, color=color) for text, size, color in _headline(summary)]
    if summary.trust.offline:
        top.append(text_block("", _wrapped(OFFLINE_NOTICE, 5)))
    parts = top + [text_block("What this measures", measures(summary, p.judge)), plain_means(summary)]
    parts += [text_block(title, lines) for title, lines in blocks]
    subtitle = [f"{p.dataset} · {p.date or 'date not recorded'} · run {p.run_id}"]
    spec = {"vconcat": parts, "spacing": 14, "config": {"font": FONT, "view": {"stroke": None}},
            "title": {"text": header.title, "subtitle": subtitle, "anchor": "start", "fontSize": 18,
                      "subtitleFontSize": 11, "limit": page[0] - 2 * MARGIN}}
    return charts.captioned(spec, p)


Fitted = Tuple[Dict[str, Any], float, float]  # a spec compiled to vega; its overhang left of and above its origin
Measured = Tuple[float, float, float, Dict[str, Any]]  # (height, left and top overhang) and the spec as vega


def _fitted(summary: RunSummary, blocks: Blocks, header: RunHeader, page: Tuple[int, int]) -> Fitted:
    """The spec with lines taken from its longest text blocks until its natural height fits the page, compiled to
    vega, and where its origin sits (axis labels and titles reach left of and above it)."""
    for _ in range(3):
        spec = {**summary_spec(summary, blocks, header, page), "padding": 0}
        height, left, top, vega = _natural(spec)
        excess = height - (page[1] - 2 * MARGIN)
        if excess <= 0:
            break
        blocks = _trimmed(blocks, math.ceil(excess / _LINE_PX))
    return vega, left, top  # still too tall after three tries: the fixed page clips its foot, never grows


def _trimmed(blocks: Blocks, lines: int) -> Blocks:
    """`lines` fewer lines, each taken from the longest block at that moment, its last line saying so."""
    sizes = [len(b[1]) for b in blocks]
    for _ in range(lines):
        longest = max(range(len(sizes)), key=sizes.__getitem__)
        sizes[longest] = max(1, sizes[longest] - 1)
    return [(title, body if len(body) <= n else body[:n - 1] + [_line("… (more in the HTML report)")])
            for (title, body), n in zip(blocks, sizes)]


_SIZE = re.compile(r'<svg[^>]*?height="([\d.]+)"')
_ORIGIN = re.compile(r'<g[^>]*?transform="translate\(([-\d.]+),\s*([-\d.]+)\)"')


def _natural(spec: Dict[str, Any]) -> Measured:
    """(height, left overhang, top overhang) of `spec` drawn at its natural size with no padding, and `spec`
    compiled to vega: measured and compiled by one renderer child (the compile is milliseconds, a child's
    start seconds), so a page that fits at once costs two children (this and the PDF's), not three."""
    svg, vega = charts.svg_and_vega(spec)
    size, origin = _SIZE.search(svg), _ORIGIN.search(svg)
    if size is None or origin is None:  # a renderer that writes its SVG otherwise: no overhang assumed
        return 0.0, 0.0, 0.0, vega
    return float(size.group(1)), float(origin.group(1)), float(origin.group(2)), vega


def fixed_page(fitted: Fitted, page: Tuple[int, int]) -> Dict[str, Any]:
    """The vega spec drawn on a page of exactly `page` points, its content from the top-left margin."""
    vega, left, top = fitted
    pad = {"left": MARGIN + left, "top": MARGIN + top, "right": MARGIN, "bottom": MARGIN + CAPTION_PX}
    vega.update(autosize={"type": "none"}, padding=pad, width=page[0] - pad["left"] - pad["right"],
                height=page[1] - pad["top"] - pad["bottom"])
    return vega


def summary_pdf(summary: RunSummary, worst_rows: Iterable[Tuple[int, EvalResult]], *,
                settings: Mapping[str, Any], header: RunHeader, page: str = "") -> bytes:
    """The one-page PDF summary of a run on an A4 or Letter page (its summary, its worst rows worst first, its
    header: name, provenance and notes)."""
    size = page_size(page)
    fitted = _fitted(summary, _blocks(summary, worst_rows, settings, header), header, size)
    return charts.vega_pdf(fixed_page(fitted, size))
