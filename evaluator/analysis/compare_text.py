"""A run comparison in words: a terminal table, a pull-request comment in GitHub Markdown, or JSON.

Every output names the baseline (BASE, run A) and the candidate (NEW, run B), and when the two were scored
differently (judge, model, heuristics, metric settings, language, dataset version: provenance.py) it says so
first, listing each difference, in red on a terminal, as a warning block in Markdown and under
`scorer_differences` in JSON. Per metric every output gives the fixed-size test (the verdict: every pair,
decided once) and beside it the sequential test (MetricDelta.sequential), with one sentence where they disagree.

Everything the user typed or the pipeline said (sample ids, questions, reasons, run and dataset names) goes
through `md` before it enters Markdown, so it stays data in a GitHub comment: Markdown and HTML are escaped,
`@name` cannot mention anyone (a zero-width joiner follows the `@`), `#12` cannot reference an issue, a URL,
`www.` address or e-mail address sits in a code span (GitHub neither links nor mentions inside code), and a
pipe or a line break cannot close a table cell.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional
from urllib.parse import quote

from .compare import MetricDelta, Mover, RunComparison

ALPHA = 0.05
ZWJ = "\u200d"  # zero-width joiner: "@\u200dteam" renders as "@team" but GitHub does not mention anyone
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")
_CELL_CHARS = 140  # a table cell longer than this is cut (with an ellipsis): the comment stays readable
# What GitHub would turn into a link (GFM extended autolinks: a scheme's URL, www., an e-mail address),
# matched more widely than GitHub does: a false match only costs a code span.
_LINKY = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]*://|\bwww\.|\b(?:mailto|xmpp):)[^\s<>`]*"
                    r"|[A-Za-z0-9._+-]+@[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+")
# GitHub's mention and issue-reference filters run on the rendered text (escaping does not stop them):
# "@name" after a non-word ASCII character (or at the start), and "#123".
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@")
_ISSUE = re.compile(r"#(?=\d)")


def _inert(text: str) -> str:
    """Plain text as literal Markdown: escaped, HTML made inert, no mention and no issue reference."""
    escaped = _MD_SPECIAL.sub(r"\\\1", text.replace("&", "&amp;").replace("<", "&lt;"))
    return _ISSUE.sub("#" + ZWJ, _MENTION.sub("@" + ZWJ, escaped))


def _code(text: str) -> str:
    """`text` as a code span (no backtick in it: _LINKY stops at one); a pipe stays escaped, as GFM tables need."""
    return "`" + text.replace("|", "\\|") + "`"


def md(text: object, limit: int = _CELL_CHARS) -> str:
    """User text as literal Markdown on one line, cut at `limit`: it cannot format, link, mention, reference
    an issue, run HTML or end a table cell (see the module docstring)."""
    one_line = " ".join(str(text).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    out, at = [], 0
    for found in _LINKY.finditer(one_line):
        link = found.group().rstrip(".,;:!?)'\"")  # a sentence's punctuation stays outside the code span
        out += [_inert(one_line[at:found.start()]), _code(link)]
        at = found.start() + len(link)
    return "".join(out + [_inert(one_line[at:])])


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


SCORERS_DIFFER = ("The baseline and the candidate were scored differently, so a difference below may come from "
                  "the scorer rather than the pipeline")
RED, RESET = "\x1b[31m", "\x1b[0m"


def scorer_warning(cmp: RunComparison, allowed: bool = False) -> List[str]:
    """The warning that the runs were scored differently, a line per difference; [] when the scorers match."""
    found = cmp.scorer_differences
    if not found:
        return []
    return [f"WARNING: {SCORERS_DIFFER} ({_gate(cmp, allowed)}):", *[f"  - {d.sentence()}" for d in found]]


def _gate(cmp: RunComparison, allowed: bool) -> str:
    if not any(d.blocks for d in cmp.scorer_differences):
        return "compared on the sample ids both share"
    return ("--allow-different-scorers was given, so --fail-on-regression still judges them" if allowed else
            "--fail-on-regression refuses to judge them (exit 2) unless --allow-different-scorers is given")


def sequential_sentence(d: MetricDelta, alpha: float = ALPHA) -> str:
    """One sentence when the fixed-size test (every pair, decided once: the verdict) and the sequential test
    (allowed to stop at any pair, so its interval is wider) disagree on a metric; "" when they agree."""
    seq = d.sequential
    if seq is None or d.delta is None:
        return ""
    fixed = verdict_of(d, alpha)
    said = seq.verdict if seq.verdict in ("regressed", "improved") else "no significant change"
    if fixed == said:
        return ""
    return (f"{d.metric}: the verdict is the fixed-size test's ({fixed}, {_p_phrase(d)} over all {d.n_pairs} pairs); "
            f"the sequential test says {seq.verdict} because an interval that may stop at any pair "
            f"is wider ({seq.low:+.3f} to {seq.high:+.3f}) than one read once at the end ({_ci(d)}).")


def sequential_cell(d: MetricDelta) -> str:
    """The sequential test in a table cell: its verdict and the rows it needed ("–" when it was not run)."""
    seq = d.sequential
    return "–" if seq is None else f"{seq.verdict} ({seq.rows_used}/{seq.rows_total})"


def sequential_notes(cmp: RunComparison, alpha: float) -> List[str]:
    """Where the two tests disagree, a sentence each; or why no sequential test was run."""
    said = [s for s in (sequential_sentence(d, alpha) for d in cmp.metrics) if s]
    return said + ([cmp.sequential_note] if cmp.sequential_note else [])


def to_text(cmp: RunComparison, alpha: float = ALPHA, *, color: bool = False, allowed: bool = False) -> str:
    """The comparison as a terminal table (plain text; nothing is interpreted); the scorer warning in red
    when `color`."""
    warning = scorer_warning(cmp, allowed)
    if warning and color:
        warning = [RED + line + RESET for line in warning]
    lines = [f"baseline:  base {cmp.run_a.run_id} ({cmp.run_a.label})",
             f"candidate: new  {cmp.run_b.run_id} ({cmp.run_b.label})", *warning,
             *[f"changed: {c.sentence()}" for c in cmp.pipeline_changes],
             cmp.version_note(), f"rows: {_rows_line(cmp)}", "",
             f"{'metric':<22}{'base':>8}{'new':>8}{'diff':>9}  {'95% CI':<18}{'p':>7}  {'verdict':<23}sequential test"]
    for d in cmp.metrics:
        lines.append(f"{d.metric:<22}{_num(d.mean_a):>8}{_num(d.mean_b):>8}{_num(d.delta, True):>9}  "
                     f"{_ci(d):<18}{_p(d):>7}  {verdict_of(d, alpha):<23}{sequential_cell(d)}")
    lines += sequential_notes(cmp, alpha)
    if cmp.worst:
        lines += ["", "samples that regressed most:"]
        lines += [f"  {m.sample_id}  {m.metric} {m.a:.3f} → {m.b:.3f} ({m.delta:+.3f})  {m.reason[:100]}"
                  for m in cmp.worst]
    for row in cmp.lost:
        lines.append(f"  lost: {row.sample_id} ({row.b})")
    return "\n".join(lines)


def _side(info: Any, role: str) -> Dict[str, Any]:
    return {"role": role, "run_id": info.run_id, "label": info.label, "dataset": info.dataset_name,
            "created_at": info.created_at, "project": info.project}


def to_json(cmp: RunComparison, alpha: float = ALPHA, *, allowed: bool = False) -> str:
    """The comparison as one JSON document: both runs by role, the scorer differences, one verdict per metric."""
    doc: Dict[str, Any] = {
        "baseline": _side(cmp.run_a, "baseline (BASE, A)"), "candidate": _side(cmp.run_b, "candidate (NEW, B)"),
        "scorers_match": not cmp.scorer_differences,
        "scorer_differences": [d.to_dict() for d in cmp.scorer_differences],
        "different_scorers_allowed": allowed,
        "warning": scorer_warning(cmp, allowed)[0] if cmp.scorer_differences else None,
        "pipeline_changes": [d.to_dict() for d in cmp.pipeline_changes],
        "alpha": alpha, "dataset_versions": {"baseline": cmp.version_a, "candidate": cmp.version_b,
                                             "note": cmp.version_note()},
        "rows": {"paired": cmp.n_paired, "only_baseline": cmp.only_a, "only_candidate": cmp.only_b,
                 "lost": [vars(c) for c in cmp.lost], "gained": [vars(c) for c in cmp.gained]},
        "metrics": [{"metric": d.metric, "baseline": d.mean_a, "candidate": d.mean_b, "delta": d.delta,
                     "ci95": None if d.ci_low is None else [d.ci_low, d.ci_high], "p": d.p_value, "pairs": d.n_pairs,
                     "verdict": verdict_of(d, alpha),
                     "sequential": None if d.sequential is None else d.sequential.to_dict(),
                     "tests_disagree": sequential_sentence(d, alpha) or None} for d in cmp.metrics],
        "sequential_note": cmp.sequential_note or None,
        "regressions": failures(cmp, alpha),
        "worst": [vars(m) for m in cmp.worst],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2)


def _table(cmp: RunComparison, alpha: float) -> List[str]:
    rows = ["| metric | base | new | Δ (new − base) | 95% CI | p | | sequential test |",
            "|---|---:|---:|---:|---|---:|---|---|"]
    marks = {"regressed": ":red_circle: regressed", "improved": ":green_circle: improved"}
    for d in cmp.metrics:
        verdict = verdict_of(d, alpha)
        rows.append(f"| {md(d.metric)} | {_num(d.mean_a)} | {_num(d.mean_b)} | {_num(d.delta, True)} | {_ci(d)} | "
                    f"{_p(d)} | {marks.get(verdict, verdict)} | {sequential_cell(d)} |")
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


def _md_warning(cmp: RunComparison, allowed: bool) -> List[str]:
    """A GitHub warning block listing each scorer difference (the values are the user's: through md)."""
    found = cmp.scorer_differences
    if not found:
        return []
    gate = _gate(cmp, allowed)  # our own words (no user text)
    return ["> [!WARNING]", f"> **{SCORERS_DIFFER}** ({gate}):",
            *[f"> - {md(d.what)}: {md(d.baseline)} (baseline) vs {md(d.candidate)} (candidate)" for d in found], ""]


def to_markdown(cmp: RunComparison, alpha: float = ALPHA, dashboard_url: Optional[str] = None, *,
                allowed: bool = False) -> str:
    """The comparison as a pull-request comment: a summary, the scorer warning, the metrics table, the
    regressions folded."""
    problems = failures(cmp, alpha)
    head = (f"**ragmeter:** {len(problems)} regression(s) at α={alpha}" if problems
            else f"**ragmeter:** no significant regression at α={alpha}")
    changed = [f"- changed: {md(c.what)}: {md(c.baseline)} → {md(c.candidate)}" for c in cmp.pipeline_changes]
    lines = ["### ragmeter compare", "", head, "",
             f"Baseline (base): {md(cmp.run_a.run_id)} ({md(cmp.run_a.label)}) → candidate (new): "
             f"{md(cmp.run_b.run_id)} ({md(cmp.run_b.label)})", "", *_md_warning(cmp, allowed),
             *changed, *([""] if changed else []), cmp.version_note(), "", f"Rows: {_rows_line(cmp)}", ""]
    # Our own sentences (numbers, hex versions and metric names, which are \w and @ only): no escaping needed.
    lines += [f"- {p}" for p in problems] + ([""] if problems else [])
    # Sequential-test sentences carry metric names (\w) and our own words and numbers: through md all the same.
    notes = [f"- {md(s, 1000)}" for s in sequential_notes(cmp, alpha)]
    return "\n".join(lines + _table(cmp, alpha) + [""] + notes + ([""] if notes else []) + _regressions(cmp.worst)
                     + _links(cmp, dashboard_url)) + "\n"
