"""`ragmeter ab`: which of two pipelines answers better, stopping as soon as the data says so.

    ragmeter ab DATA --target A --target-b B [--metric faithfulness] [--alpha 0.05] [--tie 0.02]
                [--max-samples N] [--seed S] [--workers N] [--json out.json] [--offline | --model M --base-url URL]

Exit codes: 0 the test decided (a winner or a tie), 1 undecided when the samples ran out, 2 bad input,
3 the judge failed (the test stopped: no score of a failing judge is trusted), as `evaluate`'s.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import JudgeFailed
from ..service import ab
from ..service.ab import ABResult, ABSettings
from .args import UsageError, run_config

EXIT_DECIDED, EXIT_UNDECIDED, EXIT_JUDGE_FAILED = 0, 1, 3


def settings_of(args: argparse.Namespace) -> ABSettings:
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
    from dataclasses import replace

    settings = settings_of(args)
    if args.workers < 1:
        raise UsageError(f"--workers {args.workers}: at least 1")
    config = replace(run_config(args), metrics=(settings.metric,))
    try:
        config.chosen_metrics()  # an unknown metric: named now, before any target is asked
    except ValueError as exc:
        raise UsageError(f"--metric {settings.metric}: {exc}") from None
    a, b = (ab.ab_target(spec, args.target_header, args.target_timeout) for spec in (args.target, args.target_b))
    samples = ab.ab_samples(args.data)
    if not samples:
        raise UsageError(f"{args.data}: no rows to test")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    try:
        result = ab.ab_test(samples, a, b, config, settings, on_step=None if args.quiet else _progress,
                            workers=args.workers)
    except JudgeFailed as exc:  # the last line says so, and the exit code is evaluate's for a failing judge
        print(f"\nragmeter: judge failed: {exc}", file=sys.stderr)
        return EXIT_JUDGE_FAILED
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
