"""The `ragmeter` command line.

    ragmeter evaluate DATA [--offline | --model M --base-url URL] [--language ar|en|auto]
                      [--max-workers N] [--output report.json|.csv|.html|.parquet] [--fail-under METRIC=VALUE ...]
                      [--dry-run] [--resume RUN_ID] [--labels]
                      [--engine local|ray [--ray-address auto|ray://HOST:PORT] [--ray-workers N]]
    ragmeter runs     list the run history

Exit codes: 0 ok, 1 a --fail-under threshold was missed, 2 bad input or usage (one line, no traceback).
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .costs import estimate_run
from .errors import RagmeterError
from .io.datasets import load_dataset
from .judges.cache import default_cache_path
from .judges.offline import OfflineJudge
from .metrics.heuristics import DEFAULT_HEURISTICS, HEURISTIC_SETS
from .model import METRICS, RULE_METRICS, EvalReport
from .progress import ProgressLine
from .runs import OFFLINE, OPENAI, Run, RunConfig

EXIT_OK, EXIT_THRESHOLD, EXIT_USAGE = 0, 1, 2
EXIT_BUG = 70  # EX_SOFTWARE: an internal error
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C


class UsageError(RagmeterError):
    """Bad arguments: printed as one line, exit code 2."""


class RunFailed(RagmeterError):
    """The run stopped on one of ragmeter's own errors; its finished rows are in the history."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragmeter", description="Measure the quality of RAG answers.")
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="score a dataset (CSV, JSONL or JSON)")
    ev.add_argument("data", nargs="?", help="dataset file; optional with --resume")
    judge = ev.add_mutually_exclusive_group()
    judge.add_argument("--offline", action="store_true", help="score with heuristics only (the default without --model)")
    judge.add_argument("--model", help="judge model name on an OpenAI-compatible endpoint")
    ev.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    ev.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    ev.add_argument("--language", choices=["ar", "en", "auto"], default="auto")
    ev.add_argument("--max-workers", type=int, default=4)
    ev.add_argument("--heuristics", default=DEFAULT_HEURISTICS, choices=sorted(HEURISTIC_SETS),
                    help="offline scorers: ragmeter (default), jaccard (the seed's), embedding "
                         "(needs pip install 'ragmeter[embeddings]')")
    ev.add_argument("--mapping", action="append", default=[], metavar="FIELD=COLUMN", help="map a dataset column to a field")
    ev.add_argument("--output", "-o", help="write the report: .json (default), .csv, .html or .parquet (one row per sample)")
    ev.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                    help="exit 1 when the mean of METRIC (or 'overall') is below VALUE")
    ev.add_argument("--no-cache", action="store_true", help="do not use the on-disk judge cache")
    ev.add_argument("--cache", default=str(default_cache_path()),
                    help="judge cache file (default $RAGMETER_JUDGE_CACHE or %(default)s)")
    ev.add_argument("--history", default=None, help="run history database (default $RAGMETER_HISTORY or ~/.ragmeter)")
    ev.add_argument("--no-history", action="store_true", help="do not save this run in the history")
    ev.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run from the history")
    ev.add_argument("--dry-run", action="store_true", help="estimate judge calls, tokens and cost; call nothing")
    ev.add_argument("--price-in", type=float, help="price per million prompt tokens")
    ev.add_argument("--price-out", type=float, help="price per million completion tokens")
    ev.add_argument("--labels", action="store_true", help="report agreement with human_<metric> label columns")
    ev.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    ev.add_argument("--engine", choices=["local", "ray"], default="local",
                    help="local: this process (default); ray: a Ray cluster (pip install 'ragmeter[ray]')")
    ev.add_argument("--ray-address", help="Ray cluster to join: auto, or ray://host:10001 (default: start a local one)")
    ev.add_argument("--ray-workers", type=int, default=2,
                    help="scoring workers on Ray; --max-workers is the judge concurrency shared among them")
    runs = sub.add_parser("runs", help="list saved runs")
    runs.add_argument("--history", default=None)
    return parser


def parse_pairs(items: Sequence[str], what: str, form: str = "NAME=VALUE") -> Dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{what} expects {form}, got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_thresholds(items: Sequence[str]) -> Dict[str, float]:
    known = set(METRICS) | set(RULE_METRICS) | {"overall"}
    thresholds = {}
    for name, value in parse_pairs(items, "--fail-under", "METRIC=VALUE").items():
        if name not in known:
            raise UsageError(f"--fail-under: unknown metric {name!r}; choose from {', '.join(sorted(known))}")
        try:
            thresholds[name] = float(value)
        except ValueError:
            raise UsageError(f"--fail-under: {value!r} is not a number (metric {name})") from None
    return thresholds


def run_config(args: argparse.Namespace) -> RunConfig:
    """The run the command line asks for, as plain data (the key stays in the environment)."""
    if not args.model:
        if args.base_url:
            raise UsageError("--base-url needs --model (the judge model name)")
        return RunConfig(language=args.language, heuristics=args.heuristics, max_workers=args.max_workers)
    return RunConfig(judge=OPENAI, model=args.model, base_url=args.base_url or "", api_key_env=args.api_key_env,
                     language=args.language, heuristics=args.heuristics, max_workers=args.max_workers,
                     cache="" if args.no_cache else args.cache, price_in=args.price_in, price_out=args.price_out)


def resumed_config(args: argparse.Namespace, stored: Dict[str, Any]) -> RunConfig:
    """A resumed run scores as it started; a judge named on the command line replaces the stored one."""
    config = RunConfig.from_settings(stored)
    if args.offline:
        return replace(config, judge=OFFLINE)
    if args.model:
        given = run_config(args)
        return replace(config, judge=OPENAI, model=given.model, base_url=given.base_url,
                       api_key_env=given.api_key_env, cache=given.cache, max_workers=given.max_workers)
    return config


def missed_thresholds(means: Dict[str, Optional[float]], overall: float, thresholds: Dict[str, float]) -> List[str]:
    """The thresholds a run's means miss, one line each; `means` maps metric -> mean (None: none scored)."""
    means = dict(means, overall=overall)
    missed = []
    for name, limit in thresholds.items():
        value = means.get(name)
        if value is None:
            missed.append(f"{name}: no sample could be scored (threshold {limit})")
        elif value < limit:
            missed.append(f"{name}: {value:.4f} < {limit}")
    return missed


def write_output(report: EvalReport, path: str, settings: Dict[str, Any], dataset: str) -> None:
    from .io import export

    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(export.results_parquet(report))
        return
    if suffix == ".csv":
        text = export.results_csv(report)
    elif suffix in (".html", ".htm"):
        text = export.html_report(report, dataset_name=dataset, settings=settings)
    else:
        text = export.results_json(report, settings=settings)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")


def print_usage_summary(usage: Dict[str, Any], args: argparse.Namespace) -> None:
    if not usage:
        return
    from .costs import price

    line = (f"judge: {usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{usage.get('prompt_tokens', 0)} prompt + {usage.get('completion_tokens', 0)} completion tokens, "
            f"{usage.get('retries', 0)} retries, {usage.get('failures', 0)} failures")
    cost = price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), args.price_in, args.price_out)
    print(line + (f", cost {cost:.4f}" if cost is not None else ""))


def print_fallbacks(methods: Dict[str, Dict[str, int]], total: int) -> None:
    """A warning per metric some samples of which fell back to the heuristic; `methods`: metric -> method -> count."""
    for metric, counts in methods.items():
        if counts.get("heuristic_fallback"):
            print(f"warning: {metric}: {counts['heuristic_fallback']}/{total} samples fell back to the heuristic "
                  "after a judge failure (see each score's reasoning)")


def print_labels(report: EvalReport) -> None:
    from .analysis.agreement import agreement_table, format_agreement_table

    table = agreement_table(report)
    print(format_agreement_table(table) if table else "No human_<metric> label columns in this dataset.")


def open_store(path: Optional[str]) -> Any:
    from .history import RunStore

    return RunStore(path)


def new_run(args: argparse.Namespace, store: Any) -> Run:
    if not args.data:
        raise UsageError("evaluate needs a DATA file (or --resume RUN_ID)")
    mapping = parse_pairs(args.mapping, "--mapping", "FIELD=COLUMN") or None
    samples = load_dataset(args.data, mapping)
    return Run.new(run_config(args), samples, dataset_name=Path(args.data).name, store=store)


def resumed_run(args: argparse.Namespace, store: Any) -> Run:
    if store is None:
        raise UsageError("--resume needs the run history; drop --no-history")
    config = resumed_config(args, store.get_run(args.resume).settings)
    return Run.resume(store, args.resume, config=config)


def dry_run(args: argparse.Namespace) -> int:
    """Calls, tokens and cost the run would spend; builds no judge, so it needs no API key."""
    config = run_config(args)
    if args.resume:
        store = open_store(args.history)
        config = resumed_config(args, store.get_run(args.resume).settings)
        samples = [s for _, s in store.pending_samples(args.resume)]
    elif args.data:
        samples = load_dataset(args.data, parse_pairs(args.mapping, "--mapping", "FIELD=COLUMN") or None)
    else:
        raise UsageError("evaluate needs a DATA file (or --resume RUN_ID)")
    est = estimate_run(samples, config.language, price_in=config.price_in, price_out=config.price_out,
                       judge=OfflineJudge() if config.offline else None)
    print(json.dumps(est.to_dict(), indent=2))
    return EXIT_OK


def wait_for(run: Run, quiet: bool) -> None:
    """Draw the progress on stderr until the run ends; Ctrl-C stops it and keeps every finished row."""
    line = ProgressLine(sys.stderr, quiet)
    try:
        while not run.join(0.2):
            line.show(run.done, run.total)
    except KeyboardInterrupt:
        print("\nragmeter: stopping: finishing the samples in flight (Ctrl-C again to quit now)…", file=sys.stderr)
        run.stop()
        try:
            run.join()
        except KeyboardInterrupt:
            run.mark_stopped()
            raise
        raise
    finally:
        line.show(run.done, run.total, final=True)


def run_evaluate(args: argparse.Namespace) -> int:
    thresholds = parse_thresholds(args.fail_under)
    if args.dry_run:
        return dry_run(args)
    if args.engine == "ray":
        return ray_evaluate(args, thresholds)
    store = None if args.no_history else open_store(args.history)
    run = resumed_run(args, store) if args.resume else new_run(args, store)
    run.start()
    if run.run_id and not args.quiet:
        print(f"run {run.run_id}: {len(run.pending)} samples to score (resume with --resume {run.run_id})",
              file=sys.stderr)
    try:
        wait_for(run, args.quiet)
    except KeyboardInterrupt:
        saved = (f"saved; resume with: ragmeter evaluate --resume {run.run_id}" if run.run_id
                 else "not saved (--no-history)")
        print(f"ragmeter: stopped: {run.done}/{run.total} samples scored, {saved}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if run.exception is not None and not isinstance(run.exception, RagmeterError):
        raise run.exception  # a bug, not bad input: main() shows the traceback
    if run.warning:
        print(f"warning: {run.warning}", file=sys.stderr)
    if run.status == "failed":
        raise RunFailed(f"the run failed: {run.error}; finished rows are kept (resume with --resume {run.run_id})")
    return finish(run.report or EvalReport(), args, thresholds, run.settings, run.dataset_name)


def finish(report: EvalReport, args: argparse.Namespace, thresholds: Dict[str, float],
           settings: Dict[str, Any], dataset: str) -> int:
    report.print_report()
    print_usage_summary(report.usage, args)
    print_fallbacks({m: report.method_counts(m) for m in report.metric_names()}, len(report.results))
    if args.labels:
        print_labels(report)
    if args.output:
        write_output(report, args.output, settings, dataset)
        print(f"wrote {args.output}")
    return fail_under(report.mean_scores(), report.overall_mean(), thresholds)


def fail_under(means: Dict[str, Optional[float]], overall: float, thresholds: Dict[str, float]) -> int:
    missed = missed_thresholds(means, overall, thresholds)
    for line in missed:
        print(f"FAIL {line}", file=sys.stderr)
    return EXIT_THRESHOLD if missed else EXIT_OK


# -- --engine ray ----------------------------------------------------------------------------------
def check_ray_args(args: argparse.Namespace) -> None:
    if args.resume:
        raise UsageError("--resume works with the local engine; run the Ray job again instead "
                         "(the judge cache makes the rows already scored free)")
    if args.labels:
        raise UsageError("--labels needs the local engine (it compares every row in memory)")
    if not args.data:
        raise UsageError("evaluate needs a DATA file")
    if args.output and Path(args.output).suffix.lower() != ".parquet":
        raise UsageError("with --engine ray, --output writes one row per sample as Parquet: name it .parquet")
    if args.ray_workers < 1:
        raise UsageError("--ray-workers must be at least 1")


class RayHistory:
    """Saves a Ray run to the history as its rows stream in, so it opens in the dashboard like any other."""

    def __init__(self, store: Any, dataset: str, settings: Dict[str, Any]) -> None:
        self.store, self.dataset, self.settings = store, dataset, settings
        self.run_id: Optional[str] = None

    def start(self, total: int) -> None:
        self.run_id = self.store.create_run(dataset_name=self.dataset, samples=[], settings=self.settings,
                                            n_samples=total)

    def save(self, frame: Any) -> None:
        from .engines.ray import history_rows

        self.store.record_results(self.run_id, history_rows(frame))

    def finish(self, status: str, total_time: Optional[float] = None, usage: Optional[Dict[str, Any]] = None) -> None:
        if self.run_id:
            self.store.finish_run(self.run_id, status=status, total_time=total_time, usage=usage)


def ray_evaluate(args: argparse.Namespace, thresholds: Dict[str, float]) -> int:
    """--engine ray: score on a Ray cluster; rows stream to --output (.parquet) and to the history."""
    from .engines.ray import need_ray, run_ray

    check_ray_args(args)
    need_ray()
    config = run_config(args)
    settings = dict(config.settings(), engine="ray", ray_workers=args.ray_workers, ray_address=args.ray_address)
    history = None if args.no_history else RayHistory(open_store(args.history), Path(args.data).name, settings)
    line, done = ProgressLine(sys.stderr, args.quiet), [0, 0]

    def started(total: int) -> None:
        done[1] = total
        if history is not None:
            history.start(total)

    def arrived(frame: Any) -> None:
        done[0] += len(frame)
        if history is not None:
            history.save(frame)
        line.show(done[0], done[1])

    try:
        run = run_ray(args.data, config, workers=args.ray_workers, address=args.ray_address,
                      mapping=parse_pairs(args.mapping, "--mapping", "FIELD=COLUMN") or None,
                      output=args.output, on_start=started, on_frame=arrived)
    except BaseException as exc:
        if history is not None:
            history.finish("stopped" if isinstance(exc, KeyboardInterrupt) else "failed")
        raise
    finally:
        line.show(done[0], done[1], final=True)
    usage = run.tally.judge_usage() if not config.offline else {}
    if history is not None:
        history.finish("finished", run.elapsed, usage or None)
    print(run.tally.format_report(run.elapsed))
    print_usage_summary(usage, args)
    print_fallbacks({m: run.tally.methods[m] for m in run.tally.metric_names()}, run.tally.n)
    if args.output:
        print(f"wrote {args.output}")
    return fail_under(run.tally.means(), run.tally.overall_mean(), thresholds)


def run_list(args: argparse.Namespace) -> int:
    runs = open_store(args.history).list_runs()
    if not runs:
        print("No runs saved yet.")
    for r in runs:
        overall = "-" if r.overall_mean is None else f"{r.overall_mean:.3f}"
        print(f"{r.run_id}  {r.created_at}  {r.status:<9} {r.n_done}/{r.n_samples}  overall {overall}  "
              f"{r.name or ''}  {r.dataset_name}")
    return EXIT_OK


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run_evaluate(args) if args.command == "evaluate" else run_list(args)
    except (UsageError, RagmeterError) as exc:
        print(f"ragmeter: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\nragmeter: interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception:  # a bug in ragmeter: show everything, and say so plainly
        traceback.print_exc()
        print("ragmeter: internal error (a bug in ragmeter, not in your data). Please report it with the "
              "traceback above.", file=sys.stderr)
        return EXIT_BUG
