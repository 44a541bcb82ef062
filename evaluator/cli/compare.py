"""`ragmeter compare BASE NEW`: what changed between two saved runs, for a terminal or a pull request.

    ragmeter compare BASE NEW [--project P] [--history DB] [--format text|markdown|json|html] [-o FILE]
                     [--dashboard-url URL] [--fail-on-regression [--alpha 0.05]] [--allow-different-scorers]
                     [--chart compare -o FILE.png|.svg|.pdf]

BASE is the baseline, NEW the candidate: `ragmeter compare RUN_ID latest --project P` compares the newest run
against RUN_ID. Each is a run id, or `latest` (the newest finished run of --project; as BASE it is the newest
other than NEW). When the two runs were scored differently (judge, model, heuristic set, metric settings,
language, dataset version) every format says so first, listing each difference, and --fail-on-regression
exits 2 instead of judging them, unless --allow-different-scorers. Per metric: both means over the sample ids both runs share, the difference with its
paired bootstrap 95% CI and a paired permutation test's p; the rows lost and gained; the samples that
regressed most; whether the runs scored the same version of their test set. Exit codes: 0, or 1 with
--fail-on-regression when a metric fell significantly (p < --alpha) or rows scored in BASE are lost in
NEW; 2 for an unknown run, bad usage, or (with --fail-on-regression) runs scored differently.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Optional

from ..analysis.compare import compare_runs
from ..analysis.compare_text import ALPHA, failures, to_json, to_markdown, to_text
from ..errors import RagmeterError
from ..store.history import RunStore
from ..team.settings import history_location
from ..environment import variables

LATEST = "latest"


def add_compare_parser(sub: Any) -> None:
    cmp = sub.add_parser("compare", help="what changed between two saved runs (a PR comment with --format markdown)")
    cmp.add_argument("base", metavar="BASE", help="the baseline run id (the older run), or 'latest' (with --project)")
    cmp.add_argument("new", metavar="NEW", help="the candidate run id (the run under test), or 'latest' (with --project)")
    cmp.add_argument("--project", default=None, help="the project whose newest finished run 'latest' means")
    cmp.add_argument("--history", default=None, help="run history: a SQLite file or a postgresql:// URL "
                     "(default $RAGMETER_HISTORY, else the team file's [server] history, else ~/.ragmeter)")
    cmp.add_argument("--format", choices=("text", "markdown", "json", "html"), default="text",
                     help="text (default), markdown (a pull-request comment with a table and the regressions "
                          "folded), json, or html (one self-contained page with the compare chart)")
    cmp.add_argument("--output", "-o", default=None,
                     help="write the comparison (or with --chart, the chart) to this file instead of stdout")
    cmp.add_argument("--chart", choices=("compare",), default=None,
                     help="write the compare chart (per metric: both means with their intervals and the "
                          "difference with its 95%% CI) to -o FILE.png, .svg or .pdf")
    cmp.add_argument("--allow-different-scorers", action="store_true",
                     help="let --fail-on-regression judge runs scored differently (judge, model, heuristics, "
                          "metric settings, language, dataset version); the warning is still printed")
    cmp.add_argument("--dashboard-url", default=None, metavar="URL",
                     help="the team dashboard's address: add links to both reports and to the comparison")
    cmp.add_argument("--fail-on-regression", action="store_true",
                     help="exit 1 when a metric fell significantly or rows scored in BASE are lost in NEW")
    cmp.add_argument("--alpha", type=float, default=ALPHA,
                     help="significance level of the paired permutation test (default %(default)s)")


def resolve(store: RunStore, given: str, project: Optional[str], other: Optional[str] = None) -> str:
    """A run id as given, or the newest finished run of `project` (other than `other`) for 'latest'."""
    if given != LATEST:
        return store.get_run(given).run_id  # HistoryError (exit 2) for an unknown id
    if not project:
        raise RagmeterError("'latest' needs --project: which project's newest run to compare")
    found = [r for r in store.list_runs(project=project) if r.status == "finished" and r.run_id != other]
    if not found:
        raise RagmeterError(f"project {project!r} has no finished run{' other than ' + other if other else ''} "
                            "to compare; list them with: ragmeter runs --project NAME")
    return found[0].run_id


def run_compare(args: argparse.Namespace) -> int:
    if not 0 < args.alpha < 1:
        raise RagmeterError(f"--alpha must be between 0 and 1 (e.g. 0.05), not {args.alpha}")
    if LATEST in (args.base, args.new) and not args.project:
        raise RagmeterError("'latest' needs --project: which project's newest run to compare")
    store = RunStore(history_location(args.history))
    new = resolve(store, args.new, args.project, other=None if args.base == LATEST else args.base)
    base = resolve(store, args.base, args.project, other=new)
    cmp = compare_runs(store, base, new)
    if args.chart:
        from .charts import write_compare_chart

        return write_compare_chart(cmp, args.output)
    allowed = args.allow_different_scorers
    if args.format == "markdown":
        text = to_markdown(cmp, args.alpha, args.dashboard_url, allowed=allowed)
    elif args.format == "json":
        text = to_json(cmp, args.alpha, allowed=allowed)
    elif args.format == "html":
        from ..report.comparison import comparison_html

        text = comparison_html(cmp, args.alpha, allowed=allowed)
    else:
        text = to_text(cmp, args.alpha, color=not args.output and _colour(), allowed=allowed)
    if args.output:
        try:
            Path(args.output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        except OSError as exc:
            raise RagmeterError(f"{args.output}: the comparison cannot be written there ({exc.strerror or exc}); "
                                "choose another path") from None
    else:
        print(text)
    differ = [d for d in cmp.scorer_differences if d.blocks]
    if args.fail_on_regression and differ and not allowed:
        print(f"ragmeter: error: the runs were scored differently ({'; '.join(d.sentence() for d in differ)}), so "
              "a regression cannot be told from a change of scorer; score both with the same settings, or pass "
              "--allow-different-scorers (exit 2)", file=sys.stderr)
        return 2
    problems = failures(cmp, args.alpha)
    if args.fail_on_regression and problems:
        print(f"ragmeter: regression: {'; '.join(problems)} (exit 1)", file=sys.stderr)
        return 1
    return 0


def _colour() -> bool:
    """Red warnings on a terminal, unless NO_COLOR (no-color.org) is set."""
    return sys.stdout.isatty() and not variables().get("NO_COLOR")
