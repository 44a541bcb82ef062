"""A run comparison in words: a terminal table, a pull-request comment in GitHub Markdown, or JSON.

Every output names the baseline (BASE, run A) and the candidate (NEW, run B) with their names and scorers. When
the two were scored differently (judge, model, endpoint, heuristics, metric settings, language: provenance.py)
it opens with "not comparable: scored by different heuristics (default vs jaccard)", lists each difference (in
red on a terminal, a warning block in Markdown, `"comparable": false` in JSON) and gives no verdict, unless
verdicts across scorers were allowed (`allowed`, --allow-different-scorers), which every output then says.
Per metric every output gives one decision in one vocabulary (analysis/decision.py: better, worse, no clear
change, not comparable), the sequential test folded in as a starred footnote where it reads the change
differently.

Everything the user typed or the pipeline said (sample ids, questions, reasons, run and dataset names) goes
through `md` before it enters Markdown, so it stays data in a GitHub comment: Markdown and HTML are escaped,
`@name` cannot mention anyone (a zero-width joiner follows the `@`), `#12` cannot reference an issue, a URL,
`www.` address or e-mail address sits in a code span (GitHub neither links nor mentions inside code), and a
pipe or a line break cannot close a table cell.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any, Dict, List, Optional
from urllib.parse import quote

from .compare import MetricDelta, Mover, RunComparison
from .decision import ALLOWED_MARK, BETTER, WORSE, counted

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


def allowing(cmp: RunComparison, allowed: bool) -> RunComparison:
    """`cmp`, with verdicts across scorers when `allowed` (--allow-different-scorers) says so."""
    return replace(cmp, scorers_allowed=True) if allowed and not cmp.scorers_allowed else cmp


def dropped(cmp: RunComparison, alpha: float) -> List[MetricDelta]:
    """The metrics (overall included) that are worse at `alpha`; none when the runs are not comparable."""
    return [d for d in cmp.metrics if cmp.decision(d, alpha) == WORSE]


def failures(cmp: RunComparison, alpha: float) -> List[str]:
    """Why `--fail-on-regression` fails: each metric decided worse (only between comparable runs, or across
    scorers when allowed), rows B lost, or no shared sample at all; empty when none."""
    found = [f"{d.metric} fell {d.mean_a:.3f} → {d.mean_b:.3f} ({d.delta:+.3f}, {_p_phrase(d)}, alpha {alpha})"
             for d in dropped(cmp, alpha) if d.mean_a is not None and d.mean_b is not None and d.delta is not None]
    if not cmp.n_paired:  # a gate must not pass on a comparison of nothing
        found.append("the runs share no sample id, so nothing could be compared")
    if cmp.lost:  # rows lost are the pipeline's, whoever scored them
        found.append(f"{len(cmp.lost)} row(s) scored in the base run are missing or unscored in the new one")
    return found


def _rows_line(cmp: RunComparison) -> str:
    return (f"{cmp.n_paired} paired by sample id · {cmp.only_a} only in base · {cmp.only_b} only in new · "
            f"{len(cmp.lost)} lost (scored in base, not in new) · {len(cmp.gained)} newly scored")


SCORERS_DIFFER = "The baseline and the candidate scored different versions of the test set"
RED, RESET = "\x1b[31m", "\x1b[0m"


def scorer_warning(cmp: RunComparison, allowed: bool = False) -> List[str]:
    """The comparison's first lines when the runs were scored differently: "not comparable: ..." (or, allowed,
    that verdicts were given across scorers), then each difference; [] when the scorers match."""
    found = cmp.scorer_differences
    if not found:
        return []
    said = allowing(cmp, allowed).comparability.headline() or f"note: {SCORERS_DIFFER}; compared on the sample ids both share"
    return [said, *[f"  - {d.sentence()}" for d in found]]


def footnotes(cmp: RunComparison, alpha: float) -> List[str]:
    """Where the sequential test reads a metric differently from its decision, a sentence each (marked *);
    or why no sequential test was run."""
    said = [f"* {s}" for s in (cmp.footnote(d, alpha) for d in cmp.metrics) if s]
    return said + ([cmp.sequential_note] if cmp.sequential_note else [])


def decision_cell(cmp: RunComparison, d: MetricDelta, alpha: float) -> str:
    """The metric's decision as a table cell, starred when a footnote says the sequential test differs."""
    return cmp.decision_shown(d, alpha) + (" *" if cmp.footnote(d, alpha) else "")


def summary_line(cmp: RunComparison, alpha: float) -> str:
    """How the metrics went, counted ("decisions at alpha 0.05: 6 worse · 2 no clear change"); the
    not-comparable headline when no verdict is given."""
    judged = cmp.comparability
    if not judged.judged:
        return ""  # the "not comparable" headline opens the comparison
    counted_ = counted([cmp.decision(d, alpha) for d in cmp.metrics])
    return f"decisions at alpha {alpha}{ALLOWED_MARK if not judged.comparable else ''}: {counted_}"


def to_text(cmp: RunComparison, alpha: float = ALPHA, *, color: bool = False, allowed: bool = False) -> str:
    """The comparison as a terminal table (plain text; nothing is interpreted); "not comparable" first, in red
    when `color`."""
    cmp = allowing(cmp, allowed)
    warning = scorer_warning(cmp)
    if warning and color:
        warning = [RED + line + RESET for line in warning]
    lines = [*warning, f"baseline:  base {cmp.run_a.run_id} ({who(cmp.run_a)})",
             f"candidate: new  {cmp.run_b.run_id} ({who(cmp.run_b)})",
             *[f"changed: {c.sentence()}" for c in cmp.pipeline_changes],
             cmp.version_note(), f"rows: {_rows_line(cmp)}", *filter(None, [summary_line(cmp, alpha)]), "",
             f"{'metric':<22}{'base':>8}{'new':>8}{'diff':>9}  {'95% CI':<18}{'p':>7}  decision"]
    for d in cmp.metrics:
        lines.append(f"{d.metric:<22}{_num(d.mean_a):>8}{_num(d.mean_b):>8}{_num(d.delta, True):>9}  "
                     f"{_ci(d):<18}{_p(d):>7}  {decision_cell(cmp, d, alpha)}")
    lines += footnotes(cmp, alpha)
    if cmp.worst:
        lines += ["", "samples whose scores fell most:"]
        lines += [f"  {m.sample_id}  {m.metric} {m.a:.3f} → {m.b:.3f} ({m.delta:+.3f})  {m.reason[:100]}"
                  for m in cmp.worst]
    for row in cmp.lost:
        lines.append(f"  lost: {row.sample_id} ({row.b})")
    return "\n".join(lines)


def who(info: Any) -> str:
    """A run as a comparison names it: its name, and its scorer when the name does not already say it."""
    return info.label if not info.name else f"{info.label}; {info.scorer}"


def _side(info: Any, role: str) -> Dict[str, Any]:
    return {"role": role, "run_id": info.run_id, "name": info.label, "label": info.label, "scorer": info.scorer,
            "dataset": info.dataset_name, "created_at": info.created_at, "project": info.project}


def _metric_json(cmp: RunComparison, d: MetricDelta, alpha: float) -> Dict[str, Any]:
    """One metric in JSON: its numbers and its one decision; the sequential test only where a verdict is given."""
    judged = cmp.comparability.judged
    return {"metric": d.metric, "baseline": d.mean_a, "candidate": d.mean_b, "delta": d.delta,
            "ci95": None if d.ci_low is None else [d.ci_low, d.ci_high], "p": d.p_value, "pairs": d.n_pairs,
            "decision": cmp.decision(d, alpha), "across_scorers": judged and not cmp.comparability.comparable,
            "sequential": d.sequential.to_dict() if d.sequential is not None and judged else None,
            "footnote": cmp.footnote(d, alpha) or None}


def to_json(cmp: RunComparison, alpha: float = ALPHA, *, allowed: bool = False) -> str:
    """The comparison as one JSON document: both runs by role, whether they are comparable (and why not), one
    decision per metric."""
    cmp = allowing(cmp, allowed)
    judged = cmp.comparability
    doc: Dict[str, Any] = {
        "comparable": judged.comparable, "not_comparable_reason": judged.reason or None,
        "different_scorers_allowed": cmp.scorers_allowed,
        "baseline": _side(cmp.run_a, "baseline (BASE, A)"), "candidate": _side(cmp.run_b, "candidate (NEW, B)"),
        "scorers_match": not cmp.scorer_differences,
        "scorer_differences": [d.to_dict() for d in cmp.scorer_differences],
        "warning": scorer_warning(cmp)[0] if cmp.scorer_differences else None,
        "pipeline_changes": [d.to_dict() for d in cmp.pipeline_changes],
        "alpha": alpha, "dataset_versions": {"baseline": cmp.version_a, "candidate": cmp.version_b,
                                             "note": cmp.version_note()},
        "rows": {"paired": cmp.n_paired, "only_baseline": cmp.only_a, "only_candidate": cmp.only_b,
                 "lost": [vars(c) for c in cmp.lost], "gained": [vars(c) for c in cmp.gained]},
        "metrics": [_metric_json(cmp, d, alpha) for d in cmp.metrics],
        "sequential_note": cmp.sequential_note or None,
        "gate_failures": failures(cmp, alpha),
        "worst": [vars(m) for m in cmp.worst],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2)


MARKS = {WORSE: ":red_circle: ", BETTER: ":green_circle: "}


def _table(cmp: RunComparison, alpha: float) -> List[str]:
    rows = ["| metric | base | new | Δ (new − base) | 95% CI | p | decision |",
            "|---|---:|---:|---:|---|---:|---|"]
    for d in cmp.metrics:
        mark = MARKS.get(cmp.decision(d, alpha), "")
        rows.append(f"| {md(d.metric)} | {_num(d.mean_a)} | {_num(d.mean_b)} | {_num(d.delta, True)} | {_ci(d)} | "
                    f"{_p(d)} | {mark}{decision_cell(cmp, d, alpha)} |")
    return rows


def _fell_most(worst: List[Mover]) -> List[str]:
    if not worst:
        return []
    rows = [f"<details><summary>{len(worst)} sample score(s) that fell most</summary>", "",
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


def _md_warning(cmp: RunComparison) -> List[str]:
    """A GitHub block, "not comparable" (or the verdicts given across scorers) first, listing each scorer
    difference (the values are the user's: through md)."""
    found = cmp.scorer_differences
    if not found:
        return []
    kind = "> [!NOTE]" if cmp.comparability.comparable else "> [!WARNING]"
    return [kind, f"> **{md(scorer_warning(cmp)[0], 1000)}**",
            *[f"> - {md(d.what)}: {md(d.baseline)} (baseline) vs {md(d.candidate)} (candidate)" for d in found], ""]


def to_markdown(cmp: RunComparison, alpha: float = ALPHA, dashboard_url: Optional[str] = None, *,
                allowed: bool = False) -> str:
    """The comparison as a pull-request comment: "not comparable" first when the scorers differ, the decisions
    counted, the metrics table, the samples that fell most folded."""
    cmp = allowing(cmp, allowed)
    problems = failures(cmp, alpha)
    changed = [f"- changed: {md(c.what)}: {md(c.baseline)} → {md(c.candidate)}" for c in cmp.pipeline_changes]
    head = summary_line(cmp, alpha)
    lines = ["### ragmeter compare", "", *_md_warning(cmp), *([f"**ragmeter:** {md(head, 1000)}", ""] if head else []),
             f"Baseline (base): {md(cmp.run_a.run_id)} ({md(who(cmp.run_a))}) → candidate "
             f"(new): {md(cmp.run_b.run_id)} ({md(who(cmp.run_b))})", "",
             *changed, *([""] if changed else []), cmp.version_note(), "", f"Rows: {_rows_line(cmp)}", ""]
    # Our own sentences (numbers, hex versions and metric names, which are \w and @ only): no escaping needed.
    lines += (["What fails --fail-on-regression:"] if problems else []) + [f"- {p}" for p in problems] \
        + ([""] if problems else [])
    notes = [f"- {md(s, 1000)}" for s in footnotes(cmp, alpha)]
    return "\n".join(lines + _table(cmp, alpha) + [""] + notes + ([""] if notes else []) + _fell_most(cmp.worst)
                     + _links(cmp, dashboard_url)) + "\n"
