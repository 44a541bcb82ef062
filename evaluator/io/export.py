"""Sharing a report: per-sample CSV, full JSON, Parquet, and one self-contained HTML file.

Safety rules, each tested:
- CSV cells that a spreadsheet would run as a formula (starting with = + - @ tab or CR) get a
  leading apostrophe.
- Settings pass through `sanitize_settings`, so no key, token or password is exported.
- The HTML report escapes every piece of dataset and judge text, loads nothing from anywhere
  (inline CSS, inline SVG charts, no URLs), and carries a Content-Security-Policy that forbids
  scripts, so even an escaping bug could not run one.
"""
from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timezone
from html import escape
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..analysis.advice import recommendations
from ..analysis.bands import BAND_CLASSES, BAND_COLORS, BANDS, badge_html, band, band_ranges
from ..analysis.stats import MetricSummary, summarize
from ..model import METHOD_LABELS, METRICS, EvalReport, EvalResult, MetricScore
from .records import flat_row, result_from_record, result_to_record
from .redact import sanitize_settings

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
JSON_FORMAT = "ragmeter-results"
JSON_VERSION = 1
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


# -- CSV ---------------------------------------------------------------------------------------
def neutralise_cell(value: Any) -> Any:
    """A text cell that a spreadsheet would read as a formula, prefixed with ' so it stays text."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def results_csv(report: EvalReport) -> str:
    """One row per sample (see `records.flat_row`), formulas neutralised.

    Encode with "utf-8-sig" when the file is meant for Excel, so non-Latin text opens correctly.
    """
    rows = [flat_row(r) for r in report.results]
    out = io.StringIO()
    fieldnames = list(rows[0]) if rows else list(flat_row(_empty_result()))
    writer = csv.DictWriter(out, fieldnames=fieldnames)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: neutralise_cell(v) for k, v in row.items()})
    return out.getvalue()


def _empty_result() -> EvalResult:
    """A result with every metric skipped: gives an empty report's CSV its header."""
    return EvalResult(None, **{m: MetricScore(m, 0.0, skipped=True) for m in METRICS})


# -- Parquet ------------------------------------------------------------------------------------
def results_parquet(report: EvalReport) -> bytes:
    """Every result as one Parquet row, lossless (the columns of `io.frames`); needs pyarrow."""
    from .frames import parquet_bytes

    return parquet_bytes(enumerate(report.results))


# -- JSON --------------------------------------------------------------------------------------
def results_json(report: EvalReport, *, settings: Optional[Dict[str, Any]] = None) -> str:
    """`report.to_dict()` plus every result's full record and the sanitised settings."""
    data = report.to_dict()
    data["format"], data["version"] = JSON_FORMAT, JSON_VERSION
    data["settings"] = sanitize_settings(settings or {})
    if "usage" in data:
        data["usage"] = sanitize_settings(data["usage"])
    data["records"] = [result_to_record(r, i) for i, r in enumerate(report.results)]
    return json.dumps(data, ensure_ascii=False, default=str)


def report_from_json(text: str) -> EvalReport:
    """The report that `results_json` wrote (results rebuilt from their records)."""
    data = json.loads(text)
    if not isinstance(data, dict) or "records" not in data:
        raise ValueError("Not a ragmeter results JSON (no 'records'); export it again with results_json.")
    results = [result_from_record(record) for record in data["records"]]
    return EvalReport(results=results, total_time=float(data.get("total_time_s") or 0.0),
                      usage=dict(data.get("usage") or {}))


# -- HTML --------------------------------------------------------------------------------------
def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _num(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _badge(score: Optional[float], text: Optional[str] = None, hint: str = "") -> str:
    # CSS classes, not inline styles, keep a 10k-sample report small.
    return badge_html(score, text, hint=hint, css_class=True)


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans Arabic",sans-serif;
margin:0 auto;max-width:1100px;padding:24px;color:#1f2328;background:#fff}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.meta{color:#59636e}.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #d0d7de;border-radius:8px;padding:10px 12px;min-width:170px;flex:1}
.card .name{font-weight:600}.card .mean{font-size:26px;font-weight:700}.card small{color:#59636e;display:block}
.badge{display:inline-block;color:#fff;border-radius:4px;padding:0 6px;font-weight:600;font-variant-numeric:tabular-nums}
.badge.na{background:#8c959f}table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}
figure{margin:12px 0;overflow-x:auto}figure svg{max-width:100%;height:auto}
.advice{border-left:4px solid #e69138;padding:4px 12px;margin:8px 0;background:#fffaf3}
details.sample{border:1px solid #d0d7de;border-radius:6px;margin:4px 0;padding:4px 8px}
details.sample>summary{cursor:pointer}details.sample[open]>summary{margin-bottom:8px}
.text{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border-radius:4px;padding:6px 8px;margin:2px 0 8px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:6px 8px;margin:4px 0}
.metric{border-top:1px dashed #d0d7de;padding:6px 0}.muted{color:#59636e}.err{color:#cc0000}
""" + "".join(f".{cls}{{background:{BAND_COLORS[name]}}}" for name, cls in BAND_CLASSES.items())


def _head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
    )


def _header(report: EvalReport, title: str, dataset_name: str) -> str:
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"{len(report.results)} samples", f"overall mean {report.overall_mean():.3f}",
             f"run time {report.total_time:.1f}s", f"generated {generated}"]
    if dataset_name:
        parts.insert(0, f"dataset {dataset_name}")
    return f"<h1>{_e(title)}</h1><p class=\"meta\">{_e(' · '.join(parts))}</p>"


def _card(s: MetricSummary) -> str:
    std = f" ± {s.std:.3f}" if s.std is not None else ""
    ci = f"95% CI {_num(s.ci_low)} – {_num(s.ci_high)}" if s.ci_low is not None else "no CI"
    label = _badge(s.mean, band(s.mean)) if s.mean is not None else _badge(None)
    return (
        f'<div class="card"><div class="name">{_e(s.name)}</div>'
        f'<div class="mean">{_num(s.mean)}<span class="muted" style="font-size:14px">{_e(std)}</span></div>'
        f"{label}<small>{_e(ci)}</small>"
        f"<small>scored {s.n_scored}/{s.n_total} · fallbacks {s.n_fallback}</small></div>"
    )


def _cards(summaries: Sequence[MetricSummary]) -> str:
    return '<h2>Summary</h2><div class="cards">' + "".join(_card(s) for s in summaries) + "</div>"


_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def _inline_svg(svg: str) -> str:
    """vl-convert's SVG, ready to inline: HTML needs no namespace declarations, so none (and no
    URL at all) appears in the report."""
    return _XMLNS.sub("", svg)


def _vl_svgs(report: EvalReport, summaries: Sequence[MetricSummary]) -> Optional[List[str]]:
    """SVGs of the means, distribution and category charts, or None when vl-convert is unavailable."""
    try:
        from .. import charts

        specs = [charts.means_chart(report, summaries=summaries), charts.distribution_chart(report)]
        category = charts.category_chart(report)
        if category is not None:
            specs.append(category)
        return [_inline_svg(charts.chart_svg(spec)) for spec in specs]
    except Exception:  # missing package or a failure in its native renderer: the report still ships
        return None


def _charts(report: EvalReport, summaries: Sequence[MetricSummary], use_vl_convert: bool) -> str:
    svgs = _vl_svgs(report, summaries) if use_vl_convert else None
    if svgs is None:
        svgs = [fallback_means_svg(summaries), fallback_histograms_svg(report)]
    figures = "".join(f"<figure>{svg}</figure>" for svg in svgs)
    return "<h2>Charts</h2>" + figures


# Hand-drawn SVG used when vl-convert is not installed: the same information, plainer.
def _svg_text(x: float, y: float, text: str, anchor: str = "middle", size: int = 11) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="#1f2328">{_e(text)}</text>'


def fallback_means_svg(summaries: Sequence[MetricSummary]) -> str:
    """Mean bars with ±1 std whiskers, drawn by hand."""
    scored = [s for s in summaries if s.mean is not None]
    step, height, top, left = 120, 200, 30, 40
    width = left + step * max(len(scored), 1) + 10
    parts = [f'<svg role="img" aria-label="Mean score per metric" width="{width}" height="{top + height + 50}" '
             f'viewBox="0 0 {width} {top + height + 50}">', _svg_text(left, 16, "Mean score per metric (±1 std)", "start", 13)]
    for tick in (0, 0.5, 1):
        y = top + height * (1 - tick)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y}" y2="{y}" stroke="#d0d7de"/>')
        parts.append(_svg_text(left - 6, y + 4, f"{tick:g}", "end"))
    for i, s in enumerate(scored):
        x, std = left + i * step + 35, s.std or 0.0
        y = top + height * (1 - s.mean)
        y_hi, y_lo = top + height * (1 - min(1.0, s.mean + std)), top + height * (1 - max(0.0, s.mean - std))
        parts.append(f'<rect x="{x}" y="{y:.1f}" width="50" height="{top + height - y:.1f}" fill="{BAND_COLORS[band(s.mean)]}">'
                     f"<title>{_e(f'{s.name}: {s.mean:.3f} ± {std:.3f}')}</title></rect>")
        parts.append(f'<line x1="{x + 25}" x2="{x + 25}" y1="{y_hi:.1f}" y2="{y_lo:.1f}" stroke="#1f2328" stroke-width="1.5"/>')
        parts.append(_svg_text(x + 25, top + height + 16, s.name, size=10))
        parts.append(_svg_text(x + 25, y - 4, f"{s.mean:.2f}"))
    return "".join(parts) + "</svg>"


def fallback_histograms_svg(report: EvalReport) -> str:
    """One small hand-drawn histogram (10 bins over 0-1) per metric."""
    from ..charts import histogram_rows  # pure Python; needs no altair

    rows = histogram_rows(report)
    names = list(dict.fromkeys(r["metric"] for r in rows))
    w, h, gap = 200, 90, 40
    width, height = (w + gap) * min(3, max(len(names), 1)), (h + gap + 10) * ((len(names) + 2) // 3) + 20
    parts = [f'<svg role="img" aria-label="Score distribution per metric" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">', _svg_text(0, 14, "Score distribution per metric", "start", 13)]
    for k, name in enumerate(names):
        x0, y0 = (k % 3) * (w + gap), 30 + (k // 3) * (h + gap + 10)
        bins = [r for r in rows if r["metric"] == name]
        peak = max((r["count"] for r in bins), default=0) or 1
        parts.append(_svg_text(x0 + w / 2, y0 + 10, name))
        for i, r in enumerate(bins):
            bh = (h - 16) * r["count"] / peak
            parts.append(f'<rect x="{x0 + i * w / 10:.1f}" y="{y0 + h - bh:.1f}" width="{w / 10 - 2:.1f}" '
                         f'height="{bh:.1f}" fill="#4c78a8"><title>{r["bin_start"]:.1f}-{r["bin_end"]:.1f}: '
                         f'{r["count"]}</title></rect>')
        parts.append(_svg_text(x0, y0 + h + 14, "0", "start") + _svg_text(x0 + w, y0 + h + 14, "1", "end"))
    return "".join(parts) + "</svg>"


def _bands_and_advice(summaries: Sequence[MetricSummary]) -> str:
    legend = " ".join(_badge(lower, f"{name} {band_ranges()[name]}") for lower, name in BANDS)
    advice = recommendations({s.name: s.mean for s in summaries})
    if not advice:
        body = "<p>Every metric is at 0.7 or above; nothing needs attention.</p>"
    else:
        body = "".join(
            f'<div class="advice"><strong>{_e(a.metric)}</strong> {_badge(a.score)} {_e(a.band)} — {_e(a.diagnosis)}'
            "<ul>" + "".join(f"<li>{_e(action)}</li>" for action in a.actions) + "</ul></div>"
            for a in advice
        )
    return f"<h2>Score bands and recommendations</h2><p>{legend}</p>{body}"


def _methods_table(summaries: Sequence[MetricSummary]) -> str:
    methods = list(METHOD_LABELS) + sorted({m for s in summaries for m in s.methods} - set(METHOD_LABELS))
    head = "".join(f"<th>{_e(METHOD_LABELS.get(m, m or 'unknown'))}</th>" for m in methods)
    rows = "".join(
        f"<tr><td>{_e(s.name)}</td><td>{s.n_scored}/{s.n_total}</td>"
        + "".join(f"<td>{s.methods.get(m, 0)}</td>" for m in methods) + "</tr>"
        for s in summaries
    )
    return ("<h2>How scores were made</h2><p class=\"muted\">Per metric: samples scored out of the total, and "
            "how each score was made.</p>"
            f"<table><tr><th>metric</th><th>scored/total</th>{head}</tr>{rows}</table>")


def _as_dict(item: Any) -> Dict[str, Any]:
    if hasattr(item, "to_dict"):
        return dict(item.to_dict())
    return dict(item) if isinstance(item, Mapping) else {"value": item}


def _agreement(labels_agreement: Any) -> str:
    """Agreement with human labels: a metric -> statistics mapping (e.g. agreement.agreement_table)."""
    if not labels_agreement:
        return ""
    rows = [(str(metric), _as_dict(stats)) for metric, stats in dict(labels_agreement).items()]
    columns = list(dict.fromkeys(k for _, d in rows for k in d if k != "metric"))
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join(
        f"<tr><td>{_e(metric)}</td>" + "".join(f"<td>{_e(_cell(d.get(c)))}</td>" for c in columns) + "</tr>"
        for metric, d in rows
    )
    return f"<h2>Agreement with human labels</h2><table><tr><th>metric</th>{head}</tr>{body}</table>"


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _key_values(heading: str, data: Mapping[str, Any]) -> str:
    if not data:
        return ""
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_cell(v))}</td></tr>" for k, v in data.items())
    return f"<h2>{_e(heading)}</h2><table>{rows}</table>"


def _text_block(label: str, text: Optional[str]) -> str:
    if text is None or text == "":
        return f'<div><strong>{_e(label)}</strong> <span class="muted">none</span></div>'
    return f'<div><strong>{_e(label)}</strong><div class="text" dir="auto">{_e(text)}</div></div>'


def _metric_detail(ms: MetricScore) -> str:
    score = '<span class="badge na">skipped</span>' if ms.skipped else _badge(ms.score)
    how = METHOD_LABELS.get(ms.method, ms.method or "unknown")
    parts = [f'<div class="metric"><strong>{_e(ms.name)}</strong> {score} <span class="muted">{_e(how)}',
             f" · LLM {_num(ms.llm_score)} · heuristic {_num(ms.heuristic_score)}</span>"]
    if ms.reasoning:
        parts.append(f'<div class="text" dir="auto">{_e(ms.reasoning)}</div>')
    if ms.error:
        parts.append(f'<div class="err">{_e(ms.error)}</div>')
    if ms.raw_reply:
        parts.append(f"<details><summary>judge's raw reply</summary><pre dir=\"auto\">{_e(ms.raw_reply)}</pre></details>")
    return "".join(parts) + "</div>"


def _sample_detail(index: int, result: EvalResult) -> str:
    sample = result.sample
    scores = " ".join(_badge(None if ms.skipped else ms.score, hint=name) for name, ms in result.metric_scores().items())
    label = result.sample_id if result.sample_id not in (None, "") else f"#{index + 1}"
    category = f' <span class="muted">[{_e(sample.category)}]</span>' if sample is not None and sample.category else ""
    body = []
    if sample is not None:
        body.append(_text_block("Question", sample.question) + _text_block("Answer", sample.answer)
                    + _text_block("Reference (ground truth)", sample.ground_truth))
        contexts = "".join(f'<li><div class="text" dir="auto">{_e(c)}</div></li>' for c in sample.contexts)
        body.append(f"<div><strong>Contexts ({len(sample.contexts)})</strong><ol>{contexts}</ol></div>")
    body.extend(_metric_detail(ms) for ms in result.metric_scores().values())
    return (f'<details class="sample"><summary><strong>{_e(label)}</strong>{category} overall '
            f'{_badge(result.overall())} <span class="muted">{scores}</span></summary>{"".join(body)}</details>')


def _samples(report: EvalReport, max_samples: Optional[int]) -> str:
    names = " · ".join(report.metric_names())
    shown = report.results if max_samples is None else report.results[:max_samples]
    note = "" if len(shown) == len(report.results) else f" (first {len(shown)} of {len(report.results)})"
    items = "".join(_sample_detail(i, r) for i, r in enumerate(shown))
    return (f"<h2>Samples{_e(note)}</h2><p class=\"muted\">Click a sample for its texts and every metric's "
            f"score, method, LLM and heuristic parts, reasoning and raw judge reply. Badges: {_e(names)}.</p>{items}")


def _category_table(report: EvalReport) -> str:
    from ..charts import category_rows  # pure Python; needs no altair

    rows = category_rows(report)
    if not rows:
        return ""
    names = [n for n in report.metric_names() if any(r["metric"] == n for r in rows)]
    cells: Dict[str, Dict[str, float]] = {}
    for r in rows:
        cells.setdefault(r["category"], {})[r["metric"]] = r["mean"]
    head = "".join(f"<th>{_e(n)}</th>" for n in names)
    body = "".join(f"<tr><td dir=\"auto\">{_e(c)}</td>" + "".join(f"<td>{_badge(m.get(n))}</td>" for n in names) + "</tr>"
                   for c, m in cells.items())
    return f"<h2>By category</h2><table><tr><th>category</th>{head}</tr>{body}</table>"


def html_report(report: EvalReport, *, title: str = "RAG evaluation report", dataset_name: str = "",
                settings: Optional[Dict[str, Any]] = None, labels_agreement: Any = None,
                use_vl_convert: bool = True, max_samples: Optional[int] = None) -> str:
    """One self-contained HTML file: summary cards, charts (inline SVG), bands and advice, scoring
    methods, agreement with human labels when given, settings and every sample's details.

    Charts come from vl-convert when it is installed (else hand-drawn SVG; `use_vl_convert=False`
    forces that). `max_samples` limits the per-sample section for very large runs.
    """
    summaries = summarize(report)
    sections = [
        _head(title), _header(report, title, dataset_name), _cards(summaries),
        _charts(report, summaries, use_vl_convert), _bands_and_advice(summaries), _methods_table(summaries),
        _category_table(report), _agreement(labels_agreement),
        _key_values("Settings", sanitize_settings(settings or {})), _key_values("Judge usage", sanitize_settings(report.usage)),
        _samples(report, max_samples), "</body></html>\n",
    ]
    return "".join(sections)
