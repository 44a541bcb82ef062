"""A comparison of two runs as one self-contained HTML file (`ragmeter compare BASE NEW --format html`, the
History page's download): who is the baseline and who the candidate, the warning when they were scored
differently ("not comparable: ..." first, and then no verdict), what changed in the pipeline, one decision
per metric (analysis/decision.py), the compare chart with its provenance caption, and the samples whose scores
fell most.

Every piece of run, dataset and sample text is escaped (html.escape), and the page made drawable
(safetext.drawable: no control character; no bidirectional control, so "gpj.evil" cannot read as "live.jpg"); the page loads nothing and carries the
HTML report's Content-Security-Policy, which forbids scripts.
"""
from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import List

from ..analysis import charts
from ..analysis.compare import RunComparison
from ..analysis.compare_text import ALPHA, allowing, decision_cell, footnotes, scorer_warning, summary_line, who
from ..analysis.provenance import Provenance
from ..errors import RenderError
from ..safetext import drawable
from .export import CSP

STYLE = ("body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1f2328}"
         "table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:right}"
         "td:first-child,th:first-child{text-align:left}.warn{background:#ffebe9;border:1px solid #cf222e;"
         "padding:8px 12px;color:#82071e}.meta{color:#57606a}figure{margin:12px 0;overflow-x:auto}"
         "figcaption{color:#57606a;font-size:12px}")


def _num(value: object, signed: bool = False) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _chart(cmp: RunComparison, caption: str) -> str:
    rows = charts.compare_rows(cmp)
    if not rows:
        return ""
    try:
        svg = charts.chart_svg(charts.compare_chart(rows, cmp.run_a.label, cmp.run_b.label))
    except ImportError:  # vl-convert or altair missing: the table still says everything
        return ""
    except RenderError as exc:  # the renderer failed: the page still ships, and says why its chart is missing
        return f"<p class=\"warn\">No chart: {escape(str(exc))}</p>"
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def comparison_html(cmp: RunComparison, alpha: float = ALPHA, *, allowed: bool = False) -> str:
    """The comparison as one HTML page (see the module docstring)."""
    cmp = allowing(cmp, allowed)
    a, b = cmp.run_a, cmp.run_b
    prov = Provenance.of_run(dataset=b.dataset_name, settings=b.settings, scored=b.n_done, total=b.n_samples,
                             date=b.finished_at or b.created_at, run_id=b.run_id)
    caption = f"candidate {prov.text()} · baseline run {a.run_id} ({a.label}) · {cmp.n_paired} paired rows"
    warning = scorer_warning(cmp)
    parts: List[str] = [
        f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" "
        f"content=\"{CSP}\"><title>ragmeter compare</title><style>{STYLE}</style></head><body>",
        "<h1>ragmeter compare</h1>",
    ]
    if warning:  # "not comparable: ..." before anything else
        items = "".join(f"<li>{escape(line.strip().lstrip('- '))}</li>" for line in warning[1:])
        parts.append(f"<div class=\"warn\"><strong>{escape(warning[0])}</strong><ul>{items}</ul></div>")
    parts.append(f"<p><strong>Baseline</strong> (base, A): {escape(who(a))} · {escape(a.run_id)}"
                 f"<br><strong>Candidate</strong> (new, B): {escape(who(b))} · {escape(b.run_id)}</p>")
    parts += [f"<p>Changed: {escape(c.sentence())}</p>" for c in cmp.pipeline_changes]
    parts.append(f"<p class=\"meta\">{escape(cmp.version_note())}</p>")
    if cmp.comparability.judged:
        parts.append(f"<p><strong>{escape(summary_line(cmp, alpha))}</strong></p>")
    rows = "".join(f"<tr><td>{escape(d.metric)}</td><td>{_num(d.mean_a)}</td><td>{_num(d.mean_b)}</td>"
                   f"<td>{_num(d.delta, True)}</td><td>{_num(d.ci_low, True)} to {_num(d.ci_high, True)}</td>"
                   f"<td>{'–' if d.p_value is None else f'{d.p_value:.3f}'}</td>"
                   f"<td>{escape(decision_cell(cmp, d, alpha))}</td></tr>"
                   for d in cmp.metrics)
    parts.append("<table><tr><th>metric</th><th>baseline</th><th>candidate</th><th>Δ (candidate − baseline)</th>"
                 f"<th>95% CI</th><th>p</th><th>decision</th></tr>{rows}</table>")
    parts += [f"<p class=\"meta\">{escape(s)}</p>" for s in footnotes(cmp, alpha)]
    parts.append(_chart(cmp, caption))
    if cmp.worst:
        worst = "".join(f"<tr><td>{escape(m.sample_id)}</td><td>{escape(m.metric)}</td><td>{m.a:.3f}</td>"
                        f"<td>{m.b:.3f}</td><td>{m.delta:+.3f}</td><td style=\"text-align:left\">{escape(m.reason)}</td></tr>"
                        for m in cmp.worst)
        parts.append("<h2>Samples whose scores fell most</h2><table><tr><th>sample</th><th>metric</th><th>baseline</th>"
                     f"<th>candidate</th><th>Δ</th><th>why (candidate)</th></tr>{worst}</table>")
    made = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<p class=\"meta\">{escape(caption)} · written {made}</p></body></html>")
    return drawable("\n".join(parts) + "\n")  # no control character, and no bidi control reordering a name
