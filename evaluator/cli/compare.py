"""`ragmeter compare BASE NEW`: what changed between two saved runs, for a terminal or a pull request.

    ragmeter compare BASE NEW [--project P] [--history DB] [--format text|markdown|json|html] [-o FILE]
                     [--dashboard-url URL] [--fail-on-regression [--alpha 0.05]] [--allow-different-scorers]
                     [--chart compare -o FILE.png|.svg|.pdf]

BASE is the baseline, NEW the candidate: `ragmeter compare RUN_ID latest --project P` compares the newest run
against RUN_ID. Each is a run id, or `latest` (the newest finished run of --project; as BASE it is the newest
other than NEW). When the two runs were scored differently (judge, model, endpoint, heuristic set, metric
settings, language) every format opens with "not comparable: scored by different heuristics (default vs
jaccard)", lists each difference, and gives no verdict; --allow-different-scorers gives verdicts anyway, marked
"(scorers differ)". Per metric: both means over the sample ids both runs share, the difference with its paired
bootstrap 95% CI and a paired permutation test's p, and one decision (better, worse, no clear change, not
comparable: analysis/decision.py) with a footnote where the sequential test reads it differently; the rows lost
and gained; the samples whose scores fell most; whether the runs scored the same version of their test set.
Exit codes: 0, or 1 with --fail-on-regression when a metric is worse (p < --alpha) or rows scored in BASE are
lost in NEW; 2 for an unknown run or bad usage. Runs not comparable fail the gate only on lost rows: their last
line says the metrics were not judged.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import RagmeterError
from ..environment import variables
from ..service.compare import (ALPHA, FORMATS, LATEST, cli_history, compare, comparison_text, not_comparable,
                               regressions, resolve_run)


def add_compare_parser(sub: Any) -> None:
    cmp = sub.add_parser("compare", help="what changed between two saved runs (a PR comment with --format markdown)")
    cmp.add_argument("base", metavar="BASE", help="the baseline run id (the older run), or 'latest' (with --project)")
    cmp.add_argument("new", metavar="NEW", help="the candidate run id (the run under test), or 'latest' (with --project)")
    cmp.add_argument("--project", default=None, help="the project whose newest finished run 'latest' means")
    cmp.add_argument("--history", default=None, help="run history: a SQLite file or a postgresql:// URL "
                     "(default $RAGMETER_HISTORY, else the team file's [server] history, else ~/.ragmeter)")
    cmp.add_argument("--format", choices=FORMATS, default="text",
                     help="text (default), markdown (a pull-request comment with a table and the regressions "
                          "folded), json, or html (one self-contained page with the compare chart)")
    cmp.add_argument("--output", "-o", default=None,
                     help="write the comparison (or with --chart, the chart) to this file instead of stdout")
    cmp.add_argument("--chart", choices=("compare",), default=None,
                     help="write the compare chart (per metric: both means with their intervals and the "
                          "difference with its 95%% CI) to -o FILE.png, .svg or .pdf")
    cmp.add_argument("--allow-different-scorers", action="store_true",
                     help="give verdicts (and let --fail-on-regression judge) runs scored differently (judge, model, "
                          "endpoint, heuristics, metric settings, language): without it they are 'not comparable'; "
                          "each verdict is then marked '(scorers differ)'")
    cmp.add_argument("--dashboard-url", default=None, metavar="URL",
                     help="the team dashboard's address: add links to both reports and to the comparison")
    cmp.add_argument("--fail-on-regression", action="store_true",
                     help="exit 1 when a metric fell significantly or rows scored in BASE are lost in NEW")
    cmp.add_argument("--alpha", type=float, default=ALPHA,
                     help="significance level of the paired permutation test (default %(default)s)")


def run_compare(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 1:
        raise RagmeterError(f"--alpha must be between 0 and 1 (e.g. 0.05), not {args.alpha}")
    if LATEST in (args.base, args.new) and not args.project:
        raise RagmeterError("'latest' needs --project: which project's newest run to compare")
    store = cli_history(args.history)
    new = resolve_run(store, args.new, args.project, other=None if args.base == LATEST else args.base)
    base = resolve_run(store, args.base, args.project, other=new)
    allowed = args.allow_different_scorers
    cmp = compare(store, base, new, allow_different_scorers=allowed)  # the History page's comparison
    if args.chart:
        from ..service.charts import write_compare_chart

        print(f"ragmeter: wrote {write_compare_chart(cmp, args.output)}")
        return 0
    text = comparison_text(cmp, args.format, alpha=args.alpha, allowed=allowed, dashboard_url=args.dashboard_url,
                           color=not args.output and _colour())
    if args.output:
        try:
            Path(args.output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        except OSError as exc:
            raise RagmeterError(f"{args.output}: the comparison cannot be written there ({exc.strerror or exc}); "
                                "choose another path") from None
    else:
        print(text)
    return gate(cmp, args) if args.fail_on_regression else 0


def gate(cmp: Any, args: argparse.Namespace) -> int:
    """--fail-on-regression: 1 when a metric is worse or rows were lost. Runs scored differently cannot be judged
    (unless --allow-different-scorers): a gate that cannot decide must not pass, so they end with exit 2."""
    problems = regressions(cmp, args.alpha)
    why = not_comparable(cmp)
    if problems:
        unjudged = f" (the metrics were not judged: {why})" if why else ""
        print(f"ragmeter: regression: {'; '.join(problems)}{unjudged} (exit 1)", file=sys.stderr)
        return 1
    if why:
        print(f"ragmeter: not comparable: {why}; --fail-on-regression cannot judge these runs (exit 2). Score both "
              "runs the same way, or pass --allow-different-scorers to judge them anyway", file=sys.stderr)
        return 2
    return 0


def _colour() -> bool:
    """Red warnings on a terminal, unless NO_COLOR (no-color.org) is set."""
    return sys.stdout.isatty() and not variables().get("NO_COLOR")
