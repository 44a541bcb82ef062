"""A run comparison in words: a terminal table, or a pull-request comment in GitHub Markdown.

Everything the user typed or the pipeline said (sample ids, questions, reasons, run and dataset names)
is escaped before it enters Markdown, so a sample id like `**x** <img>` shows as written.
"""
from __future__ import annotations

import re
from typing import List, Optional
from urllib.parse import quote

from .compare import MetricDelta, Mover, RunComparison

ALPHA = 0.05
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")
_CELL_CHARS = 140  # a table cell longer than this is cut (with an ellipsis): the comment stays readable


def md(text: object, limit: int = _CELL_CHARS) -> str:
    """User text as literal Markdown: one line, special characters escaped, HTML made inert, cut at `limit`."""
    one_line = " ".join(str(text).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", one_line.replace("&", "&amp;").replace("<", "&lt;"))


def _num(value: Optional[float], signed: bool = False) -> str:
    return "–" if value is None else (f"{value:+.3f}" if signed else f"{value:.3f}")


def _ci(d: MetricDelta) -> str:
    return "–" if d.ci_low is None or d.ci_high is None else f"{d.ci_low:+.3f} to {d.ci_high:+.3f}"


def _p(d: MetricDelta) -> str:
    return "–" if d.p_value is None else ("<0.001" if d.p_value < 0.001 else f"{d.p_value:.3f}")


def _p_phrase(d: MetricDelta) -> str:
    shown = _p(d)
    return "p < 0.001" if shown.startswith("<") else f"p = {shown}"


def verdict_of(d: MetricDelta, alpha: float) -> str:
    if d.delta is None:
        return "not compared"
    if d.p_value is not None and d.p_value < alpha and d.delta != 0:
        return "regressed" if d.delta < 0 else "improved"
    return "no significant change"


def dropped(cmp: RunComparison, alpha: float) -> List[MetricDelta]:
    """The metrics (overall included) that fell significantly at `alpha`."""
    return [d for d in cmp.metrics if d.dropped(alpha)]


def failures(cmp: RunComparison, alpha: float) -> List[str]:
    """Why `--fail-on-regression` fails: each significant drop, rows B lost, or no shared sample at all;
    empty when none."""
    found = [f"{d.metric} fell {d.mean_a:.3f} → {d.mean_b:.3f} ({d.delta:+.3f}, {_p_phrase(d)}, alpha {alpha})"
             for d in dropped(cmp, alpha) if d.mean_a is not None and d.mean_b is not None and d.delta is not None]
    if not cmp.n_paired:  # a gate must not pass on a comparison of nothing
        found.append("the runs share no sample id, so nothing could be compared")
    if cmp.lost:
        found.append(f"{len(cmp.lost)} row(s) scored in the base run are missing or unscored in the new one")
    return found


def _rows_line(cmp: RunComparison) -> str:
    return (f"{cmp.n_paired} paired by sample id · {cmp.only_a} only in base · {cmp.only_b} only in new · "
            f"{len(cmp.lost)} lost (scored in base, not in new) · {len(cmp.gained)} newly scored")


def to_text(cmp: RunComparison, alpha: float = ALPHA) -> str:
    """The comparison as a terminal table (plain text; nothing is interpreted)."""
    lines = [f"base {cmp.run_a.run_id} ({cmp.run_a.label})", f"new  {cmp.run_b.run_id} ({cmp.run_b.label})",
             cmp.version_note(), f"rows: {_rows_line(cmp)}", "",
             f"{'metric':<22}{'base':>8}{'new':>8}{'diff':>9}  {'95% CI':<18}{'p':>7}  verdict"]
    for d in cmp.metrics:
        lines.append(f"{d.metric:<22}{_num(d.mean_a):>8}{_num(d.mean_b):>8}{_num(d.delta, True):>9}  "
                     f"{_ci(d):<18}{_p(d):>7}  {verdict_of(d, alpha)}")
    if cmp.worst:
        lines += ["", "samples that regressed most:"]
        lines += [f"  {m.sample_id}  {m.metric} {m.a:.3f} → {m.b:.3f} ({m.delta:+.3f})  {m.reason[:100]}"
                  for m in cmp.worst]
    for row in cmp.lost:
        lines.append(f"  lost: {row.sample_id} ({row.b})")
    return "\n".join(lines)


def _table(cmp: RunComparison, alpha: float) -> List[str]:
    rows = ["| metric | base | new | Δ (new − base) | 95% CI | p | |", "|---|---:|---:|---:|---|---:|---|"]
    marks = {"regressed": ":red_circle: regressed", "improved": ":green_circle: improved"}
    for d in cmp.metrics:
        verdict = verdict_of(d, alpha)
        rows.append(f"| {md(d.metric)} | {_num(d.mean_a)} | {_num(d.mean_b)} | {_num(d.delta, True)} | {_ci(d)} | "
                    f"{_p(d)} | {marks.get(verdict, verdict)} |")
    return rows


def _regressions(worst: List[Mover]) -> List[str]:
    if not worst:
        return []
    rows = [f"<details><summary>{len(worst)} sample score(s) regressed most</summary>", "",
            "| sample | metric | base | new | Δ | why (new run) |", "|---|---|---:|---:|---:|---|"]
    rows += [f"| {md(m.sample_id, 60)} | {md(m.metric)} | {m.a:.3f} | {m.b:.3f} | {m.delta:+.3f} | {md(m.reason)} |"
             for m in worst]
    return rows + ["", "</details>"]


def _links(cmp: RunComparison, dashboard_url: Optional[str]) -> List[str]:
    if not dashboard_url:
        return []
    base = dashboard_url.rstrip("/")
    a, b = quote(cmp.run_a.run_id), quote(cmp.run_b.run_id)
    return ["", f"[base report]({base}/report?run={a}) · [new report]({base}/report?run={b}) · "
                f"[compare in the dashboard]({base}/history?compare={a},{b})"]


def to_markdown(cmp: RunComparison, alpha: float = ALPHA, dashboard_url: Optional[str] = None) -> str:
    """The comparison as a pull-request comment: a summary, the metrics table, the regressions folded."""
    problems = failures(cmp, alpha)
    head = (f"**ragmeter:** {len(problems)} regression(s) at α={alpha}" if problems
            else f"**ragmeter:** no significant regression at α={alpha}")
    lines = ["### ragmeter compare", "", head, "",
             f"Base {md(cmp.run_a.run_id)} ({md(cmp.run_a.label)}) → new {md(cmp.run_b.run_id)} "
             f"({md(cmp.run_b.label)})", "", cmp.version_note(), "", f"Rows: {_rows_line(cmp)}", ""]
    # Our own sentences (numbers, hex versions and metric names, which are \w and @ only): no escaping needed.
    lines += [f"- {p}" for p in problems] + ([""] if problems else [])
    return "\n".join(lines + _table(cmp, alpha) + [""] + _regressions(cmp.worst) + _links(cmp, dashboard_url)) + "\n"
