"""`ragmeter ab`: which of two pipelines answers better, stopping as soon as the data says so.

    ragmeter ab DATA --target A --target-b B [--metric faithfulness] [--alpha 0.05] [--tie 0.02]
                [--max-samples N] [--seed S] [--json out.json] [--offline | --model M --base-url URL]

Exit codes: 0 the test decided (a winner or a tie), 1 undecided when the samples ran out, 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..runs.ab import DEFAULT_METRIC, ABResult, ABSettings

EXIT_DECIDED, EXIT_UNDECIDED = 0, 1


def add_ab_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    ab = sub.add_parser("ab", help="sequential A/B test of two pipelines: stops as soon as one wins or they tie",
                        description="Send the dataset's questions in random order to both targets, score both "
                                    "answers, and stop when an anytime-valid confidence sequence for the mean "
                                    "difference excludes 0 (a winner) or lies within ±tie (no practical difference).")
    ab.add_argument("data", help="dataset file with the questions (CSV, JSONL or JSON)")
    ab.add_argument("--target", required=True, help="pipeline A: URL, module:function, file.py:function or openai:MODEL")
    ab.add_argument("--target-b", required=True, help="pipeline B, in the same forms")
    ab.add_argument("--target-header", action="append", default=[], metavar="'NAME: VALUE'",
                    help="HTTP header for both targets; ${VAR} is read from the environment at call time")
    ab.add_argument("--target-timeout", type=float, default=60.0, help="seconds per target call")
    ab.add_argument("--metric", default=DEFAULT_METRIC, help="the metric compared (default %(default)s)")
    ab.add_argument("--alpha", type=float, default=0.05, help="chance of a false winner (default %(default)s)")
    ab.add_argument("--tie", type=float, default=0.02,
                    help="differences within ±this are no practical difference (default %(default)s)")
    ab.add_argument("--max-samples", type=int, default=None, metavar="N", help="ask at most N questions")
    ab.add_argument("--seed", type=int, default=0, help="seed of the random order (default 0)")
    ab.add_argument("--json", metavar="PATH", help="write the decision as JSON")
    judge = ab.add_mutually_exclusive_group()
    judge.add_argument("--offline", action="store_true", help="score with heuristics only (the default without --model)")
    judge.add_argument("--model", help="judge model name on an OpenAI-compatible endpoint")
    ab.add_argument("--judge", metavar="NAME", help="which judge scores (as for evaluate)")
    ab.add_argument("--base-url", help="the judge's OpenAI-compatible endpoint")
    ab.add_argument("--api-key-env", default="", help="environment variable holding the judge's API key")
    ab.add_argument("--language", choices=["ar", "en", "auto"], default="auto", help="prompt language (default auto)")
    ab.add_argument("--quiet", "-q", action="store_true", help="no progress line")
    # evaluate's judge options this command keeps at their defaults (run_config reads them)
    ab.set_defaults(metrics=None, rubrics=[], repeats=1, temperature=0.0, align_with=None, judge_mode="separate",
                    heuristics="ragmeter", max_workers=2, no_cache=True, cache="", price_in=None, price_out=None,
                    batch=False, batch_poll=10.0, judge_timeout=60.0, resume=None, history=None)


def settings_of(args: argparse.Namespace) -> ABSettings:
    from .args import UsageError

    try:
        return ABSettings(args.metric, args.alpha, args.tie, args.max_samples, args.seed)
    except ValueError as exc:
        raise UsageError(str(exc).replace("alpha must", "--alpha must").replace("tie must", "--tie must")
                         .replace("max_samples must", "--max-samples must")) from None


def summary(r: ABResult) -> str:
    """What the test found, in the words a user acts on."""
    s = r.settings
    verdict = {"A": "A is better", "B": "B is better", "tie": f"no practical difference (within ±{s.tie:g})",
               "undecided": "undecided: more samples are needed"}[r.decision]
    lines = [f"{s.metric}: {verdict}",
             f"difference A - B {r.difference:+.3f}, {100 * (1 - s.alpha):g}% interval "
             f"[{r.interval[0]:+.3f}, {r.interval[1]:+.3f}] (A {r.means[0]:.3f}, B {r.means[1]:.3f})",
             f"samples used {r.samples_used} of {r.samples_total}: {r.samples_saved} saved; "
             f"judge calls {r.judge_calls}, about {r.judge_calls_saved} saved"]
    if r.left_out:
        lines.append(f"warning: {len(r.left_out)} pair(s) left out of the test (first: {r.left_out[0]})")
    return "\n".join(lines)


def run_ab_command(args: argparse.Namespace) -> int:
    from ..io.datasets import CLI, load_dataset
    from ..judges.base import close_judge
    from ..runs.ab import run_ab
    from ..targets import TargetConfig
    from .args import UsageError, run_config

    settings = settings_of(args)
    config = run_config(args)
    from dataclasses import replace

    config = replace(config, metrics=(settings.metric,))
    try:
        config.chosen_metrics()  # an unknown metric: named now, before any target is asked
    except ValueError as exc:
        raise UsageError(f"--metric {settings.metric}: {exc}") from None
    specs = (args.target, args.target_b)
    targets = tuple(TargetConfig.from_options(spec, headers=args.target_header if spec.startswith("http") else (),
                                              timeout=args.target_timeout).build() for spec in specs)
    samples = load_dataset(args.data, surface=CLI, needs_answer=False)
    if not samples:
        raise UsageError(f"{args.data}: no rows to test")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    judge = config.build_judge()
    try:
        result = run_ab(samples, (targets[0], targets[1]), specs, config.evaluator(judge), settings,
                        on_step=None if args.quiet else _progress)
    finally:
        close_judge(judge)
    if not args.quiet:
        print(file=sys.stderr)
    print(summary(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=2), encoding="utf-8")
        print(f"wrote {args.json}")
    return EXIT_DECIDED if result.decision != "undecided" else EXIT_UNDECIDED


def _progress(r: Any) -> None:
    print(f"\rab: {r.samples_used}/{r.samples_total} samples, A - B {r.difference:+.3f} "
          f"[{r.interval[0]:+.3f}, {r.interval[1]:+.3f}]", end="", file=sys.stderr, flush=True)
