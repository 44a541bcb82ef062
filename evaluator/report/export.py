"""Sharing a report: per-sample CSV, full JSON, Parquet, and one self-contained HTML file.

Safety rules, each tested:
- CSV cells that a spreadsheet would run as a formula (starting with = + - @ tab or CR) get a
  leading apostrophe (io/filetypes.py's guard, which every CSV ragmeter writes goes through).
- Settings pass through `sanitize_settings`, so no key, token or password is exported, and every
  format passes through `redact`'s filter, so no known secret value (a judge's key, a target's
  header value) or secret-shaped text (`?key=…`, `Bearer …`) echoed into an answer, an error or a
  judge reply is exported either.
- The HTML report is a jinja2 template (templates/report.html.j2) with autoescape on: every piece
  of dataset and judge text is escaped, it loads nothing from anywhere (inline CSS, inline SVG
  charts, no URLs), and it carries a Content-Security-Policy that forbids scripts, so even an
  escaping bug could not run one.
"""
from __future__ import annotations

import heapq
import json
import re
from datetime import datetime, timezone
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup

from ..analysis import judging
from ..analysis.advice import DEFAULT_THRESHOLD, recommendations
from ..analysis.claims import claim_views
from ..analysis.highlight import CSS as CLAIMS_CSS
from ..analysis.highlight import sample_html
from ..analysis.bands import BAND_CLASSES, BAND_COLORS, BANDS, band, band_ranges
from ..metrics.rubric import rubrics_in_settings
from ..analysis import summary as summary_data
from ..analysis.summary import RunSummary, Trust
from ..analysis.provenance import Provenance
from ..analysis.stats import MetricSummary
from ..model import METHOD_LABELS, EvalReport, EvalResult
from ..scoring.verdict import from_decision
from ..io.filetypes import REPORT, file_type
from ..io.records import result_from_record
from .files import JSON_FORMAT, JSON_VERSION, Rows, redacted  # noqa: F401  (JSON_*: re-exported)
from . import files
from .header import RunHeader
from ..io.redact import redact_text, sanitize_settings
from ..safetext import drawable
from ..errors import RenderError

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


# -- CSV ---------------------------------------------------------------------------------------
def results_csv(report: EvalReport) -> str:
    """One row per sample (see `records.flat_row`), formulas neutralised.

    Encode with "utf-8-sig" when the file is meant for Excel, so non-Latin text opens correctly.
    """
    return files.csv_bytes(enumerate(report.results), report.metric_names(), bom=False).decode("utf-8")


# -- Parquet ------------------------------------------------------------------------------------
def results_parquet(report: EvalReport) -> bytes:
    """Every result as one Parquet row, lossless (the columns of `io.frames`); needs pyarrow."""
    from ..io.frames import parquet_bytes

    return parquet_bytes(((i, redacted(r, i)) for i, r in enumerate(report.results)), report.metric_names())


# -- JSON --------------------------------------------------------------------------------------
def results_json(report: EvalReport, *, settings: Optional[Dict[str, Any]] = None) -> str:
    """`report.to_dict()`'s figures, every result's full record, the judge noise, the verdict (the run's own
    health; the CLI adds --fail-under to its exit code) and the sanitised settings, all redacted: the one JSON
    writer (report/files.py), which a stored run's rows also stream through."""
    return files.json_bytes(lambda: enumerate(report.results), summary_data.build(report, settings=settings),
                      settings or {}).decode("utf-8")


def report_from_json(text: str) -> EvalReport:
    """The report that `results_json` wrote (results rebuilt from their records)."""
    data = json.loads(text)
    if not isinstance(data, dict) or "records" not in data:
        raise ValueError("Not a ragmeter results JSON (no 'records'); export it again with results_json.")
    results = [result_from_record(record) for record in data["records"]]
    return EvalReport(results=results, total_time=float(data.get("total_time_s") or 0.0),
                      usage=dict(data.get("usage") or {}))


# -- HTML --------------------------------------------------------------------------------------
DEFAULT_MAX_SAMPLES = 1000  # per-sample sections embedded; 31k rows made a 129 MB page that took 32 s to open

# (a score inside the band, its label) for the legend, written from the thresholds in analysis.bands.
LEGEND = tuple((lower, f"{name} {band_ranges()[name]}") for lower, name in BANDS)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _num(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


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
figure{margin:12px 0;overflow-x:auto}figure svg{max-width:100%;height:auto}figcaption{color:#57606a;font-size:12px}.note{white-space:pre-wrap;border-left:3px solid #d0d7de;padding:2px 10px;margin:8px 0}
.advice{border-left:4px solid #e69138;padding:4px 12px;margin:8px 0;background:#fffaf3}
details.sample{border:1px solid #d0d7de;border-radius:6px;margin:4px 0;padding:4px 8px}
details.sample>summary{cursor:pointer}details.sample[open]>summary{margin-bottom:8px}
.text{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border-radius:4px;padding:6px 8px;margin:2px 0 8px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:6px 8px;margin:4px 0}
.metric{border-top:1px dashed #d0d7de;padding:6px 0}.muted{color:#59636e}.err{color:#cc0000}.small{font-size:14px}
.scroll{overflow-x:auto}table.grid th{white-space:normal;overflow-wrap:anywhere;min-width:4.5em}
.scores{display:inline-flex;flex-wrap:wrap;gap:2px 10px;margin-left:6px}.score{white-space:nowrap;font-size:12px}
.alert{border-radius:6px;padding:8px 12px;margin:10px 0}.alert.error{background:#ffebe9;border:1px solid #cc0000}
.alert.warn{background:#fff8c5;border:1px solid #d4a72c}.alert.note{background:#ddf4ff;border:1px solid #54aeff}
.chat{display:flex;flex-direction:column;gap:6px;margin:8px 0}.bubble{border-radius:10px;padding:6px 10px;max-width:85%}
.bubble.user{align-self:flex-end;background:#ddf4ff}.bubble.assistant{align-self:flex-start;background:#f6f8fa;
border:1px solid #d0d7de}.bubble.tool{align-self:flex-start;background:#fff8c5;font-size:12px}
.bubble.worst{border:2px solid #cc0000}.bubble .text{background:transparent;padding:0;margin:2px 0}
.bubble.notasked{opacity:.6}.who{font-size:12px;font-weight:600;color:#59636e}
""" + "".join(f".{cls}{{background:{BAND_COLORS[name]}}}" for name, cls in BAND_CLASSES.items())


_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def _inline_svg(svg: str) -> str:
    """vl-convert's SVG, ready to inline: HTML needs no namespace declarations, so none (and no
    URL at all) appears in the report."""
    return _XMLNS.sub("", svg)


def _vl_svgs(summary: RunSummary, summaries: Sequence[MetricSummary]) -> Tuple[Optional[List[str]], str]:
    """SVGs of the means, distribution and category charts (None when vl-convert is unavailable or failed), and
    what the page says about it: "" when drawn, else why the charts are the plain hand-drawn ones."""
    try:
        from ..analysis import charts

        order = list(summary.metric_names)
        specs = [charts.means_chart(None, summaries=summaries), charts.histogram_chart(summary.histogram_rows(), order)]
        category = charts.category_heatmap(summary.category_rows(), order)
        if category is not None:
            specs.append(category)
        return [_inline_svg(svg) for svg in charts.chart_svgs(specs)], ""
    except ImportError:  # the dashboard extras are not installed: the plain charts say the same
        return None, ""
    except RenderError as exc:  # the renderer failed (analysis/render.py): the report still ships, and says so
        return None, f"These charts are drawn plainly: {exc}."
    except Exception as exc:  # anything else in the chart code: the report still ships, and says so
        return None, f"These charts are drawn plainly: the chart code failed ({type(exc).__name__})."


def _charts(summary: RunSummary, summaries: Sequence[MetricSummary], use_vl_convert: bool) -> Tuple[List[Markup], str]:
    """The charts' SVG markup (its text escaped where it was built), and the note on them ("" when none)."""
    svgs, note = _vl_svgs(summary, summaries) if use_vl_convert else (None, "")
    if svgs is None:
        svgs = [fallback_means_svg(summaries), fallback_histograms_svg(summary.histogram_rows())]
    return [Markup(svg) for svg in svgs], note


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
        mean = s.mean or 0.0  # `scored` holds only metrics with a mean
        x, std = left + i * step + 35, s.std or 0.0
        y = top + height * (1 - mean)
        y_hi, y_lo = top + height * (1 - min(1.0, mean + std)), top + height * (1 - max(0.0, mean - std))
        parts.append(f'<rect x="{x}" y="{y:.1f}" width="50" height="{top + height - y:.1f}" fill="{BAND_COLORS[band(mean)]}">'
                     f"<title>{_e(f'{s.name}: {mean:.3f} ± {std:.3f}')}</title></rect>")
        parts.append(f'<line x1="{x + 25}" x2="{x + 25}" y1="{y_hi:.1f}" y2="{y_lo:.1f}" stroke="#1f2328" stroke-width="1.5"/>')
        parts.append(_svg_text(x + 25, top + height + 16, s.name, size=10))
        parts.append(_svg_text(x + 25, y - 4, f"{mean:.2f}"))
    return "".join(parts) + "</svg>"


def fallback_histograms_svg(rows: Sequence[Mapping[str, Any]]) -> str:
    """One small hand-drawn histogram (10 bins over 0-1) per metric, from aggregate.histogram_rows' rows."""
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


def _finalize(value: Any) -> Markup:
    """Every {{ }} of the template: html.escape'd text (quotes included), or Markup left as built."""
    if isinstance(value, Markup):
        return value
    return Markup(_e(value))


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@lru_cache(maxsize=1)
def _template() -> Template:
    env = Environment(loader=PackageLoader("evaluator.report", "templates"), autoescape=True, finalize=_finalize,
                      trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
    env.filters.update(
        band_class=lambda score: "na" if score is None else BAND_CLASSES[band(score)],
        band_name=band, cell=_cell, label=lambda name: str(name).replace("_", " "),
        method_label=lambda m: METHOD_LABELS.get(m, m or "unknown"))
    return env.get_template("report.html.j2")


def _as_dict(item: Any) -> Dict[str, Any]:
    if hasattr(item, "to_dict"):
        return dict(item.to_dict())
    return dict(item) if isinstance(item, Mapping) else {"value": item}


def _agreement(labels_agreement: Any) -> Optional[Dict[str, Any]]:
    """Agreement with human labels: a metric -> statistics mapping (e.g. agreement.agreement_table)."""
    if not labels_agreement:
        return None
    rows = [(str(metric), _as_dict(stats)) for metric, stats in dict(labels_agreement).items()]
    return {"columns": list(dict.fromkeys(k for _, d in rows for k in d if k != "metric")), "rows": rows}


def _categories(summary: RunSummary) -> Optional[Dict[str, Any]]:
    rows = summary.categories
    if not rows:
        return None
    cells: Dict[str, Dict[str, float]] = {}
    for r in rows:
        cells.setdefault(r.category, {})[r.metric] = r.mean
    names = [n for n in summary.metric_names if any(r.metric == n for r in rows)]
    return {"names": names, "rows": list(cells.items())}


def _sample_rows(rows: Iterable[Tuple[int, EvalResult]], total: int,
                 max_samples: Optional[int]) -> Tuple[List[Dict[str, Any]], str, str]:
    """(rows to embed, heading note, note on the rows left out): the worst samples first when capped. `rows`
    stream past in index order; only the `max_samples` worst are ever held."""
    if max_samples is not None and total > max_samples:  # unscored rows count as 0; of equal ones, the first
        chosen = heapq.nsmallest(max(0, max_samples), rows, key=lambda pair: (pair[1].overall(), pair[0]))
    else:
        chosen = list(rows)
    embedded = []
    for i, result in chosen:
        label = result.sample_id if result.sample_id not in (None, "") else f"#{i + 1}"
        sample = result.sample
        chat = chat_turns(result)
        embedded.append({"label": label, "category": sample.category if sample is not None else None,
                         "overall": result.overall_score(), "scores": list(result.metric_scores().items()),
                         "sample": sample, "chat": chat, "claims": None if chat is not None else _claims(result)})
    if len(embedded) == total:
        return embedded, "", ""
    note = f" (worst {len(embedded):,} of {total:,})"
    hidden = (f"Only the {len(embedded):,} lowest-scoring samples (by overall score) are embedded, worst first, to "
              f"keep this file small; the other {total - len(embedded):,} are in the summary above, and every row is "
              "in the CSV or JSON export.")
    return embedded, note, hidden


_ROLE_LABELS = {"user": "User", "assistant": "Assistant", "tool": "Tool output"}


def chat_turns(result: EvalResult) -> Optional[List[Dict[str, Any]]]:
    """A conversation's turns as the report's chat shows them, each assistant turn with its scores
    (None for a single-turn row)."""
    conversation = result.conversation
    if conversation is None:
        return None
    by_index = {t.index: t for t in result.turns}
    worst = result.worst_turn()
    turns = []
    for i, turn in enumerate(conversation.turns):
        scores = list(by_index[i].result.metric_scores().items()) if i in by_index else []
        turns.append({"index": i, "role": turn.role, "who": _ROLE_LABELS.get(turn.role, turn.role),
                      "content": turn.content, "contexts": list(turn.contexts), "tool_calls": list(turn.tool_calls),
                      "error": turn.error, "not_asked": turn.not_asked, "scores": scores,
                      "overall": by_index[i].result.overall_score() if i in by_index else None,
                      "worst": worst is not None and worst.index == i and len(by_index) > 1})
    return turns


def _claims(result: Any) -> Optional[Markup]:
    """The sample's text with the claims marked (escaped by sample_html), or None without claims."""
    if result.sample is None:
        return None
    views = claim_views(result.sample, result.scores)
    return Markup(sample_html(result.sample, views, style=False)) if views else None


def _meta_line(summary: RunSummary, dataset_name: str) -> str:
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    n = summary.n_rows
    overall = summary.overall_mean
    counts = summary.decision.counts
    parts = [f"{n} sample{'' if n == 1 else 's'}",
             f"overall mean {'N/A' if overall is None else f'{overall:.3f}'} ({counts.summary()})",
             f"run time {summary.total_time:.1f}s", f"generated {generated}"]
    if dataset_name:
        parts.insert(0, f"dataset {dataset_name}")
    language = summary.trust.language_note
    if language:
        parts.append(language.strip())
    return " · ".join(parts)


def _fallback_warning(trust: Trust) -> str:
    fallback, judged = trust.fallback, trust.judged
    if not fallback:
        return ""
    return (f"{fallback} of {judged} judged scores ({fallback / judged:.0%}) fell back to the heuristic after a "
            f"judge failure ({trust.main_cause or 'see each score'}); those scores are lexical estimates.")


def html_report(report: EvalReport, *, title: str = "RAG evaluation report", dataset_name: str = "",
                settings: Optional[Dict[str, Any]] = None, labels_agreement: Any = None,
                use_vl_convert: bool = True, max_samples: Optional[int] = DEFAULT_MAX_SAMPLES,
                reviewed: Optional[Dict[str, str]] = None) -> str:
    """One self-contained HTML file: the judge's status (or the offline notice), summary cards,
    charts (inline SVG), bands and advice, scoring methods, agreement with human labels when
    given, the corrected means from reviews (`reviewed`: metric -> review.agreement.corrected_line),
    settings, and the samples' details.

    Charts come from vl-convert when it is installed (else hand-drawn SVG; `use_vl_convert=False`
    forces that). At most `max_samples` samples (None: all) are embedded, the lowest-scoring
    first; the summary always covers every sample.
    """
    return summary_html(summary_data.build(report, settings=settings), lambda: enumerate(report.results),
                        title=title, dataset_name=dataset_name, settings=settings, labels_agreement=labels_agreement,
                        use_vl_convert=use_vl_convert, max_samples=max_samples, reviewed=reviewed)


def summary_html(summary: RunSummary, rows: Callable[[], Iterable[Tuple[int, EvalResult]]], *,
                 title: str = "RAG evaluation report", dataset_name: str = "", settings: Optional[Dict[str, Any]] = None,
                 labels_agreement: Any = None, use_vl_convert: bool = True,
                 max_samples: Optional[int] = DEFAULT_MAX_SAMPLES, reviewed: Optional[Dict[str, str]] = None,
                 run_id: str = "", date: str = "", notes: Sequence[Tuple[str, str]] = ()) -> str:
    """`html_report` from a run's summary (analysis/summary.py) and its rows, which stream past once in index
    order: only the embedded samples are held, so a stored run of any size is written without reading it whole.
    Every chart carries the run's provenance as its caption (dataset and version, rows scored, judge, date,
    run id, ragmeter version), so a chart copied out of the page still says where it came from."""
    summaries = list(summary.metrics)
    trust = summary.trust
    methods = list(METHOD_LABELS) + sorted({m for s in summaries for m in s.methods} - set(METHOD_LABELS))
    samples, note, hidden = _sample_rows(rows(), summary.n_rows, max_samples)
    provenance = Provenance.of_summary(dataset=dataset_name, settings=settings or {}, summary=summary, run_id=run_id,
                                       date=date or datetime.now(timezone.utc).isoformat(timespec="minutes"))
    svgs, chart_note = _charts(summary, summaries, use_vl_convert)
    page = _template().render(
        provenance=provenance.text(), notes=list(notes), title=title, csp=CSP, style=Markup(STYLE + CLAIMS_CSS), meta_line=_meta_line(summary, dataset_name),
        judge_line=summary.judge_status, stopped=trust.stopped,
        ending=from_decision(summary.decision.to_dict()),
        fallback_warning=_fallback_warning(trust),
        offline_notice=judging.OFFLINE_NOTICE if trust.offline else "",
        summaries=summaries, svgs=svgs, chart_note=chart_note, legend=LEGEND, threshold=DEFAULT_THRESHOLD,
        advice=recommendations({s.name: s.mean for s in summaries}, metrics=rubrics_in_settings(settings)),
        methods=methods, noise=list(summary.noise),
        method_labels=[METHOD_LABELS.get(m, m or "unknown") for m in methods], categories=_categories(summary),
        agreement=_agreement(labels_agreement), reviewed={m: line for m, line in (reviewed or {}).items() if line},
        key_values=[("Settings", sanitize_settings(settings or {})),
                    ("Judge usage", sanitize_settings(dict(summary.usage))),
                    ("Target calls", summary.target_dict())],
        samples=samples, samples_note=note, samples_hidden=hidden) + "\n"
    # Known secrets masked in their HTML-escaped spelling too; no control character, and no bidirectional control
    # reordering a name ("gpj.evil" read as "live.jpg"), anywhere in the page (safetext.drawable).
    return drawable(redact_text(page))


# -- a run's report file ---------------------------------------------------------------------------
def _pdf(rows: Rows, summary: RunSummary, settings: Mapping[str, Any], header: RunHeader, page: str) -> bytes:
    """The one-page summary from one pass over `rows`, keeping only the WORST lowest (unscored count as 0)."""
    from . import pdf

    worst = heapq.nsmallest(pdf.WORST, rows(), key=lambda p: (p[1].overall_score() or 0.0, p[0]))
    return pdf.summary_pdf(summary, worst, settings=settings, header=header, page=page)


def write_results(path: str, rows: Rows, summary: RunSummary, *, settings: Mapping[str, Any],
                  dataset: str, bom: bool = True, header: Optional[RunHeader] = None, page: str = "") -> None:
    """Write the run's report file `path` (.csv, .json, .parquet, .xlsx, .html or the one-page .pdf) from its
    summary and `rows` (a fresh pass in index order each call: the history's pages, or a report in memory), never
    holding the run whole. A CSV starts with the UTF-8 byte-order mark Excel needs (not with `bom=False`); the
    workbook and the PDF open with `header` (the run's name, date and run id), the PDF on `page` (a4, letter)."""
    fmt = file_type(path, REPORT).format
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "xlsx":
        from .xlsx import write_xlsx

        write_xlsx(target, rows(), summary, settings=settings, dataset=dataset, header=header)
    elif fmt == "pdf":
        target.write_bytes(_pdf(rows, summary, settings, header or RunHeader.of(
            title="", dataset=dataset, settings=settings, summary=summary, date="", run_id=""), page))
    elif fmt in ("csv", "json"):
        with target.open("w", encoding="utf-8-sig" if fmt == "csv" and bom else "utf-8", newline="") as f:
            if fmt == "csv":
                files.write_csv(f, rows(), list(summary.metric_names))
            else:
                files.write_json(f, rows, summary, settings)
    elif fmt == "parquet":
        files.write_parquet(target, rows(), list(summary.metric_names))
    else:
        target.write_text(summary_html(summary, rows, dataset_name=dataset, settings=dict(settings)), encoding="utf-8")
