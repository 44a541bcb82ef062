"""What `ragmeter evaluate` prints of a finished run's summary: the report's table, the judge's usage, the
samples that fell back to the heuristic, the target's failures, the agreement with people's labels. It
prints; what it prints comes from the service (evaluator/service/evaluation.py)."""
from __future__ import annotations

import argparse
from typing import Any, Dict, List

from ..model import METHOD_FLAGGED
from ..service.evaluation import RunSummary, format_agreement_table, format_judge_noise, summaries, usage_line


def summary_lines(summary: RunSummary) -> List[str]:
    """The report's table, then the judge's noise over repeats when there were some."""
    lines = [summaries.format_summary(summary)]
    noise = format_judge_noise(list(summary.noise))
    if noise:
        lines.append(noise)
    return lines


def print_usage_summary(summary: RunSummary, args: argparse.Namespace, settings: Dict[str, Any]) -> None:
    """Calls, tokens and cost; prices from the command line, else those the run was started with."""
    usage = summary.usage
    if not usage:
        return
    print(f"judge status: {summary.judge_status}")
    price_in = args.price_in if args.price_in is not None else settings.get("price_in")
    price_out = args.price_out if args.price_out is not None else settings.get("price_out")
    print(usage_line(dict(usage), price_in, price_out))


def print_fallbacks(summary: RunSummary) -> None:
    total = summary.n_rows
    for metric in summary.metrics:
        counts = metric.methods
        if counts.get("heuristic_fallback"):
            print(f"warning: {metric.name}: {counts['heuristic_fallback']}/{total} samples fell back to the heuristic "
                  "after a judge failure (see each score's reasoning)")
        if counts.get(METHOD_FLAGGED):
            print(f"warning: {metric.name}: {counts[METHOD_FLAGGED]}/{total} judge replies contradicted "
                  "their own verdicts; their verdicts' score is used (flagged in each score's reasoning)")


def print_target_failures(summary: RunSummary) -> None:
    stats = summary.target
    if stats and stats.failures:
        first = summary.decision.target_cause
        print(f"warning: {stats.failures}/{stats.calls} target calls failed; those rows are kept with "
              f"target_error and their metrics skipped (first: {first})")


def print_labels(summary: RunSummary) -> None:
    found = summary.agreement
    table = {k: a for k, a in found.items() if " vs " not in k}
    external = {k: a for k, a in found.items() if " vs " in k}
    if table:
        print(format_agreement_table(table))
    if external:  # other tools' grades of the metrics we scored: how far the two evaluators agree
        print("Agreement with other tools' grades (external_<tool>_<metric>):")
        print(format_agreement_table(external))
    if not table and not external:
        print("No human_<metric> label columns (nor other tools' grades of these metrics) in this dataset.")
