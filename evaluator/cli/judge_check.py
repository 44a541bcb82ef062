"""`ragmeter judge check`: the exam (review/exam.py) for the judge the flags name, beside its baselines.

    ragmeter judge check --model qwen2.5:7b --base-url http://127.0.0.1:11434/v1
    ragmeter judge check --model m --base-url URL --exam labelled.csv --json exam.json

Prints per metric: format compliance, balanced accuracy and Cohen's kappa with their 95% intervals, calls,
tokens and seconds per item, and a verdict (fit to gate releases / fit for trends / unusable / no verdict)
with advice; each probe's figure (injection, position bias, length bias, flip rate, contradictions); then
the baselines (the offline heuristics, a constant and a random judge, never fit). The result is stored in
the run history with the judge's settings (never a key), so every run scored by this judge shows it.
Exit 0 fit (to gate releases or for trends), 1 unusable or no verdict, 2 bad usage, 3 the judge failed and
the exam stopped.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from ..errors import HistoryError, RagmeterError
from ..service import history, judging
from ..service.options import AUTO_JUDGE_MODE, JUDGE_MODES, Flags, RunConfig, judge, judge_max_tokens, load_rubrics

EXIT_FIT, EXIT_NOT_FIT, EXIT_USAGE, EXIT_JUDGE = 0, 1, 2, 3


def add_judge_parser(sub: Any) -> None:
    """`ragmeter judge check`: registered by cli/args.py."""
    judge_kinds = judging.judge_kinds
    judge = sub.add_parser("judge", help="check whether a judge model is fit to judge (the judge exam)")
    commands = judge.add_subparsers(dest="judge_command", required=True, help="check: run the judge exam")
    p = commands.add_parser("check", help="run the judge exam: format compliance, agreement with labels, cost",
                            description=__doc__.split("\n\n")[0] if __doc__ else None)
    who = p.add_mutually_exclusive_group()
    who.add_argument("--offline", action="store_true", help="examine the offline heuristics (a baseline)")
    who.add_argument("--model", help="judge model name on an OpenAI-compatible endpoint")
    p.add_argument("--judge", metavar="NAME", help=f"judge kind ({', '.join(judge_kinds())}) or a [[judges]] entry")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--api-key-env", default="", help="environment variable holding the judge's API key")
    p.add_argument("--judge-max-tokens", type=int, default=None, metavar="N",
                   help="completion cap of every call (default: each metric's own)")
    p.add_argument("--judge-timeout", type=float, default=60.0, metavar="S", help="seconds one request may take")
    p.add_argument("--judge-mode", default=AUTO_JUDGE_MODE, choices=JUDGE_MODES,
                   help="ask the items as runs in this judge mode ask them (default auto: grouped on a server not "
                        "known to reuse a prompt prefix, so a context metric's item shares its call with the other "
                        "context metrics; see ragmeter evaluate --help)")
    p.add_argument("--exam", metavar="FILE", help="a labelled dataset (human_<metric> columns) instead of the "
                   f"built-in exam of {judging.EXAM_ITEMS} items")
    p.add_argument("--rubrics", action="append", default=[], metavar="FILE.toml",
                   help="rubric metrics (as evaluate --rubrics) to examine on the --exam file's human_<rubric> labels")
    p.add_argument("--probes", type=int, default=judging.PROBE_PAIRS, metavar="N",
                   help=f"pairs asked per probe (injection, position and length bias, flip rate; default "
                   f"{judging.PROBE_PAIRS}, 0: none)")
    p.add_argument("--limit", type=int, default=0, metavar="N", help="ask at most N items per metric")
    p.add_argument("--no-baselines", action="store_true", help="do not print the baselines")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON ('-' for stdout)")
    p.add_argument("--history", default=None, help="the run history to store the result in")
    p.add_argument("--no-store", action="store_true", help="do not store the result in the run history")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")


def run_judge_check(args: argparse.Namespace) -> int:
    if args.probes < 0:
        raise RagmeterError(f"--probes must be 0 (no probes) or more, not {args.probes}")
    rubrics = {r.name: r for path in args.rubrics for r in load_rubrics(path)}
    items, exam = judging.exam_items(args.exam, args.limit, tuple(rubrics))
    config = exam_config(args)
    judge = config.build_judge()
    settings = judging.exam_settings(config, judge)
    print(f"judge check: {getattr(judge, 'name', config.judge)} on the {exam} exam "
          f"({len(items)} items; {_languages(items)})", file=sys.stderr)
    terminal = sys.stderr.isatty()
    try:
        result = judging.sit_exam(judge, items, settings, exam=exam, probes=args.probes,
                                  on_item=None if args.quiet else _progress(terminal), metrics=rubrics)
    finally:
        if not args.quiet and terminal:
            print(file=sys.stderr)
    shown: List[judging.ExamResult] = [result] + ([] if args.no_baselines or result.baseline
                                                  else judging.baselines(items, args.probes, rubrics))
    print(judging.format_table(shown))
    if len(shown) > 1:
        print("baselines are never fit: a constant answer is right half the time; the heuristics read words, "
              "not meaning")
    print("\n".join(judging.summary_lines(result)))
    _store(args, result, settings)
    _write_json(args.json, [r.to_dict() for r in shown])
    if result.stopped:
        return EXIT_JUDGE
    return EXIT_FIT if result.verdict in judging.FIT else EXIT_NOT_FIT


def exam_config(args: argparse.Namespace) -> Any:
    """The RunConfig of the judge the flags name, resolved as evaluate resolves it (team/settings.py:
    flag > environment > the team file's [[judges]] entry and [judge] max_tokens > default)."""
    if args.judge_max_tokens is not None and not 0 <= args.judge_max_tokens <= 32768:
        raise RagmeterError(f"--judge-max-tokens must be 0 (each metric's own cap) to 32768, "
                            f"not {args.judge_max_tokens}")
    if not args.judge_timeout > 0:
        raise RagmeterError(f"--judge-timeout must be more than 0 seconds, not {args.judge_timeout:g}")
    flags = Flags(judge=args.judge, offline=args.offline, model=args.model, base_url=args.base_url,
                  api_key_env=args.api_key_env or None, judge_max_tokens=args.judge_max_tokens)
    kind, model, base_url, variable, _ = judge(flags)
    if kind.value != "offline" and not model.value:
        raise RagmeterError("ragmeter judge check needs --model (the judge model name), or --offline")
    if kind.value == "offline":
        if args.base_url and not args.offline:
            raise RagmeterError("--base-url needs --model (the judge model name); ragmeter judge check needs "
                                "--model, or --offline for the heuristics")
        return RunConfig()
    return RunConfig(judge=str(kind.value), model=str(model.value), base_url=str(base_url.value or ""),
                     api_key_env=str(variable.value or ""), max_workers=1, judge_timeout=float(args.judge_timeout),
                     judge_mode=args.judge_mode,
                     judge_max_tokens=int(judge_max_tokens(flags).value or 0))


def _languages(items: list) -> str:
    langs = sorted({i.lang for i in items})
    return " and ".join({"en": "English", "ar": "Arabic"}.get(lang, lang) for lang in langs)


PROGRESS_LINES = 10  # lines a log gets over a whole exam


def _progress(terminal: bool) -> Any:
    """A terminal's progress rewrites one line; a log (CI, a pipe) gets a line every tenth of the exam."""
    def on_terminal(done: int, total: int) -> None:
        print(f"\rexam item {done}/{total}", end="", file=sys.stderr, flush=True)

    def on_log(done: int, total: int) -> None:
        step = max(1, total // PROGRESS_LINES)
        if done % step == 0 or done == total:
            print(f"exam item {done}/{total}", file=sys.stderr, flush=True)
    return on_terminal if terminal else on_log


def _store(args: argparse.Namespace, result: Any, settings: Dict[str, Any]) -> None:
    if args.no_store or result.baseline:
        return
    try:
        exam_id = judging.store_exam(history.open_history(history.history_for(args.history)), result, settings)
    except (HistoryError, RagmeterError) as exc:
        print(f"warning: the result was not stored in the run history: {exc}", file=sys.stderr)
        return
    print(f"stored as judge exam {exam_id}: the Report of every run scored by this judge shows it")


def _write_json(target: Any, data: list) -> None:
    if not target:
        return
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if target == "-":
        print(text)
    else:
        Path(target).write_text(text + "\n", encoding="utf-8")
