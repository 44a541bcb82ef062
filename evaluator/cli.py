"""The `ragmeter` command line.

    ragmeter evaluate DATA [--offline | --model M --base-url URL] [--language ar|en|auto]
                      [--max-workers N] [--output report.json|.csv|.html] [--fail-under METRIC=VALUE ...]
                      [--dry-run] [--resume RUN_ID] [--labels] [--batch [--batch-poll SECONDS]]
                      [--engine local|ray [--ray-address auto|ray://HOST:PORT] [--ray-workers N]]
                      [--target URL|module:function|file.py:function|openai:MODEL [--target-body JSON]
                       [--target-header 'Name: value' ...] [--target-field answer=PATH ...]
                       [--target-workers N] [--target-timeout S]]
    ragmeter evaluate --rescore RUN_ID [judge options]   score a saved run's answers again
    ragmeter runs     list the run history

Exit codes: 0 ok, 1 a --fail-under threshold was missed, 2 bad input or usage (one line, no traceback),
3 the judge failed (the run stopped early on judge failure, or more than --max-fallback-rate of the
judged scores fell back to the heuristic). The last line of output says which.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from .analysis import judging
from .analysis.noise import format_judge_noise, judge_noise
from .cli_args import build_parser
from .costs import estimate_run
from .errors import RagmeterError
from .io.conversations import CONVERSATIONS, dataset_kind
from .io.datasets import CLI, load_dataset
from .judges.offline import OfflineJudge
from .metrics.registry import known_metrics
from .metrics.rubric import load_rubrics
from .model import METHOD_BLEND, METHOD_FALLBACK, METRICS, EvalReport
from .progress import ProgressLine
from .runs import BATCH_PREPARING, OFFLINE, OPENAI, Run, RunConfig
from .targets import TargetConfig

EXIT_OK, EXIT_THRESHOLD, EXIT_USAGE, EXIT_JUDGE = 0, 1, 2, 3
EXIT_BUG = 70  # EX_SOFTWARE: an internal error
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C


class UsageError(RagmeterError):
    """Bad arguments: printed as one line, exit code 2."""


class RunFailed(RagmeterError):
    """The run stopped on one of ragmeter's own errors; its finished rows are in the history."""


def target_config(args: argparse.Namespace) -> Optional[TargetConfig]:
    """The target the command line names, or None; TargetConfigError (exit 2) when it is unusable."""
    if not args.target:
        if args.target_body or args.target_field or args.target_base_url:
            raise UsageError("--target-body, --target-field and --target-base-url need --target")
        return None
    config = TargetConfig.from_options(args.target, body=args.target_body, headers=args.target_header,
                                       fields=args.target_field, base_url=args.target_base_url,
                                       timeout=args.target_timeout, workers=max(1, args.target_workers))
    config.build()  # a bad spec, path or header fails here, before any file is read
    return config


def parse_pairs(items: Sequence[str], what: str, form: str = "NAME=VALUE") -> Dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{what} expects {form}, got {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_thresholds(items: Sequence[str], chosen: Sequence[str] = ()) -> Dict[str, float]:
    """--fail-under METRIC=VALUE pairs; METRIC is one of the run's `chosen` metrics (any registered
    metric when none are given), or "overall"."""
    known = set(chosen or known_metrics()) | {"overall"}
    thresholds = {}
    for name, value in parse_pairs(items, "--fail-under", "METRIC=VALUE").items():
        if name not in known:
            scope = " (not chosen for this run)" if chosen and name in known_metrics() else ""
            raise UsageError(f"--fail-under: unknown metric {name!r}{scope}; choose from {', '.join(sorted(known))}")
        try:
            thresholds[name] = float(value)
        except ValueError:
            raise UsageError(f"--fail-under: {value!r} is not a number (metric {name})") from None
        if not 0.0 <= thresholds[name] <= 1.0:
            percent = f"; write {name}={thresholds[name] / 100:g} for {value}%" if 2 <= thresholds[name] <= 100 else ""
            raise UsageError(f"--fail-under {name}={value}: thresholds run from 0 to 1{percent}")
    return thresholds


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def run_config(args: argparse.Namespace) -> RunConfig:
    """The run the command line asks for, as plain data (the key stays in the environment)."""
    scoring = metric_options(args)
    if not args.model:
        if args.base_url:
            raise UsageError("--base-url needs --model (the judge model name)")
        if args.batch and not args.resume:
            raise UsageError("--batch needs --model (the Batch API runs an OpenAI-compatible judge)")
        scoring.pop("temperature")  # no judge, nothing to sample
        return RunConfig(language=args.language, heuristics=args.heuristics, max_workers=args.max_workers, **scoring)
    return RunConfig(judge=OPENAI, model=args.model, base_url=args.base_url or "", api_key_env=args.api_key_env,
                     language=args.language, heuristics=args.heuristics, max_workers=args.max_workers,
                     cache="" if args.no_cache else args.cache, price_in=args.price_in, price_out=args.price_out,
                     batch=args.batch, batch_poll=args.batch_poll, **scoring)


def metric_options(args: argparse.Namespace) -> Dict[str, Any]:
    """RunConfig's metrics, rubrics and repeats from --metrics, --rubrics and --repeats (checked here)."""
    if args.repeats < 1:
        raise UsageError(f"--repeats {args.repeats}: ask the judge at least once (K >= 1)")
    rubrics: Dict[str, Any] = {}
    for path in args.rubrics:
        for rubric in load_rubrics(path):
            if rubric.name in rubrics:
                raise UsageError(f"--rubrics: rubric {rubric.name!r} is defined twice ({path})")
            rubrics[rubric.name] = rubric.to_dict()
    names = tuple(n.strip() for n in (args.metrics or "").split(",") if n.strip())
    if args.metrics is not None and not names:
        raise UsageError("--metrics is empty; name at least one metric, e.g. --metrics faithfulness")
    if not 0.0 <= args.temperature <= 2.0:
        raise UsageError(f"--temperature {args.temperature:g}: from 0 to 2")
    return {"metrics": names, "rubrics": rubrics, "repeats": args.repeats, "temperature": args.temperature,
            "judge_mode": args.judge_mode}


def resumed_config(args: argparse.Namespace, stored: Dict[str, Any]) -> RunConfig:
    """A resumed run scores as it started; a judge named on the command line replaces the stored one."""
    if args.metrics is not None or args.rubrics or args.repeats != 1 or args.temperature \
            or args.judge_mode != "separate":
        raise UsageError("--metrics, --rubrics, --repeats, --temperature and --judge-mode cannot change a resumed "
                         "run: it scores as it started")
    config = RunConfig.from_settings(stored)
    if args.offline:
        return replace(config, judge=OFFLINE, batch=False)
    if args.batch:  # a stored batch run stays one; --batch also turns a direct run's rest into a batch
        config = replace(config, batch=True, batch_poll=args.batch_poll)
    if args.model:
        given = run_config(args)
        return replace(config, judge=OPENAI, model=given.model, base_url=given.base_url,
                       api_key_env=given.api_key_env, cache=given.cache, max_workers=given.max_workers)
    return config


def missed_thresholds(report: EvalReport, thresholds: Dict[str, float]) -> List[str]:
    return missed_means(dict(report.mean_scores(), overall=report.overall_mean()), thresholds)


def missed_means(means: Dict[str, Optional[float]], thresholds: Dict[str, float]) -> List[str]:
    """The thresholds `means` (metric or "overall" -> mean, None when nothing was scored) miss."""
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


def print_usage_summary(report: EvalReport, args: argparse.Namespace, settings: Dict[str, Any]) -> None:
    """Calls, tokens and cost; prices from the command line, else those the run was started with."""
    usage = report.usage
    if not usage:
        return
    print(f"judge status: {judging.judge_status(report, settings)}")
    price_in = args.price_in if args.price_in is not None else settings.get("price_in")
    price_out = args.price_out if args.price_out is not None else settings.get("price_out")
    print(usage_line(usage, price_in, price_out))


def usage_line(usage: Dict[str, Any], price_in: Optional[float], price_out: Optional[float]) -> str:
    """Judge calls, cache hits, tokens, retries, failures and the cost when prices are known."""
    from .costs import price

    line = (f"judge: {usage.get('calls', 0)} calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{usage.get('prompt_tokens', 0)} prompt{cached_note(usage)} + {usage.get('completion_tokens', 0)} "
            f"completion tokens, {usage.get('retries', 0)} retries, {usage.get('failures', 0)} failures")
    cost = price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), price_in, price_out)
    return line + (f", cost {cost:.4f}" if cost is not None else "")


def cached_note(usage: Dict[str, Any]) -> str:
    """' (N cached)' when the server read some prompt tokens from its prompt cache (billed at a discount)."""
    cached = usage.get("cached_prompt_tokens") or 0
    return f" ({cached} cached)" if cached else ""


def print_fallbacks(report: EvalReport) -> None:
    for metric in report.metric_names():
        counts = report.method_counts(metric)
        if counts.get("heuristic_fallback"):
            total = len(report.results)
            print(f"warning: {metric}: {counts['heuristic_fallback']}/{total} samples fell back to the heuristic "
                  "after a judge failure (see each score's reasoning)")


def print_target_failures(report: EvalReport) -> None:
    stats = report.target_stats()
    if stats and stats["failures"]:
        first = next(r.sample.target_error for r in report.results if r.sample and r.sample.target_error)
        print(f"warning: {stats['failures']}/{stats['calls']} target calls failed; those rows are kept with "
              f"target_error and their metrics skipped (first: {first})")


def print_labels(report: EvalReport) -> None:
    from .analysis.agreement import agreement_table, format_agreement_table

    table = agreement_table(report)
    print(format_agreement_table(table) if table else "No human_<metric> label columns in this dataset.")


def open_store(path: Optional[str]) -> Any:
    from .history import RunStore

    return RunStore(path)


def read_samples(args: argparse.Namespace, target: Optional[TargetConfig]) -> list:
    if not args.data:
        raise UsageError("evaluate needs a DATA file (or --resume RUN_ID, or --rescore RUN_ID)")
    mapping = parse_pairs(args.mapping, "--mapping", "FIELD=COLUMN") or None
    notes: List[str] = []  # which tool's file was recognised, how it was read, rows it left out
    try:
        return load_dataset(args.data, mapping, surface=CLI, needs_answer=target is None, notes=notes)
    finally:
        for note in notes:
            print(f"ragmeter: note: {note}", file=sys.stderr)


def new_run(args: argparse.Namespace, store: Any) -> Run:
    target = target_config(args)
    samples = read_samples(args, target)
    return Run.new(run_config(args), samples, dataset_name=Path(args.data).name, store=store, target=target,
                   project=args.project)


def resumed_run(args: argparse.Namespace, store: Any) -> Run:
    if store is None:
        raise UsageError("--resume needs the run history; drop --no-history")
    config = resumed_config(args, store.get_run(args.resume).settings)
    return Run.resume(store, args.resume, config=config, target=target_config(args),
                      target_headers=args.target_header)


def rescored_run(args: argparse.Namespace, store: Any) -> Run:
    """A new run over the answers saved in run --rescore, with the judge named on the command line."""
    if store is None:
        raise UsageError("--rescore needs the run history; drop --no-history")
    if args.resume or args.data or args.target:
        raise UsageError("--rescore takes the saved answers of a run: give no DATA file, --resume or --target")
    return Run.rescore(store, args.rescore, run_config(args))


def dry_run(args: argparse.Namespace) -> int:
    """Calls, tokens and cost the run would spend; builds no judge, so it needs no API key."""
    config = run_config(args)
    if args.resume:
        store = open_store(args.history)
        config = resumed_config(args, store.get_run(args.resume).settings)
        samples = [s for _, s in store.pending_samples(args.resume)]
    elif args.rescore:
        samples = open_store(args.history).answered_samples(args.rescore)
    else:
        samples = read_samples(args, target_config(args))
    est = estimate_run(samples, config.language, price_in=config.price_in, price_out=config.price_out,
                       judge=OfflineJudge() if config.offline else None, metrics=config.chosen_metrics(),
                       repeats=config.repeats, judge_mode=config.judge_mode)
    print(json.dumps(est.to_dict(), indent=2))
    return EXIT_OK


def answered(run: Run) -> Optional[int]:
    return run.answered if run.target is not None else None


def wait_for(run: Run, quiet: bool) -> None:
    """Draw the progress on stderr until the run ends; Ctrl-C stops it and keeps every finished row."""
    line = ProgressLine(sys.stderr, quiet)
    batch = BatchLines(run, quiet)
    try:
        while not run.join(0.2):
            batch.show()
            line.show(run.done, run.total, answered=answered(run))
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
        line.show(run.done, run.total, final=True, answered=answered(run))


class BatchLines:
    """A batch run's progress on stderr: a line whenever its batches' status changes."""

    def __init__(self, run: Run, quiet: bool) -> None:
        self.run, self.quiet, self.hinted = run, quiet, False
        self.last: Optional[str] = None

    def show(self) -> None:
        status = self.run.batch_status
        if self.quiet or status is None or status == self.last:
            return
        if status != BATCH_PREPARING and not self.hinted and self.run.run_id:  # the batches exist by now
            self.hinted = True
            print(f"closing this is safe: the batches go on at the server, and "
                  f"'ragmeter evaluate --resume {self.run.run_id}' picks them up", file=sys.stderr)
        self.last = status
        print(status, file=sys.stderr)


def run_evaluate(args: argparse.Namespace) -> int:
    if not 0.0 <= args.max_fallback_rate <= 1.0:
        raise UsageError(f"--max-fallback-rate {args.max_fallback_rate:g}: a share from 0 to 1, e.g. 0.1")
    if args.data and not (args.resume or args.rescore) and dataset_kind(args.data, surface=CLI) == CONVERSATIONS:
        from . import cli_conversations  # multi-turn chats take their own path (cli_conversations.py)

        return cli_conversations.evaluate(args, finish, run_config, parse_thresholds)
    if args.dry_run:
        return dry_run(args)
    if args.engine == "ray":
        return ray_evaluate(args)
    store = None if args.no_history else open_store(args.history)
    if args.rescore:
        run = rescored_run(args, store)
    else:
        run = resumed_run(args, store) if args.resume else new_run(args, store)
    thresholds = parse_thresholds(args.fail_under, run.evaluator.metric_names)
    run.start()
    if run.run_id and not args.quiet:
        print(f"run {run.run_id}: {plural(len(run.pending), 'sample')} to score (resume with --resume {run.run_id})",
              file=sys.stderr)
    try:
        wait_for(run, args.quiet)
    except KeyboardInterrupt:
        saved = (f"saved; resume with: ragmeter evaluate --resume {run.run_id}" if run.run_id
                 else "not saved (--no-history)")
        if run.batch_status and run.run_id:
            saved += " (submitted batches go on at the server and are picked up, not sent again)"
        print(f"ragmeter: stopped: {run.done}/{run.total} samples scored, {saved}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if run.exception is not None and not isinstance(run.exception, RagmeterError):
        raise run.exception  # a bug, not bad input: main() shows the traceback
    if run.warning:
        print(f"warning: {run.warning}", file=sys.stderr)
    if run.status == "failed":
        raise RunFailed(f"the run failed: {run.error}; finished rows are kept (resume with --resume {run.run_id})")
    return finish(run.report or EvalReport(), args, thresholds, run.settings, run.dataset_name, run.run_id)


def finish(report: EvalReport, args: argparse.Namespace, thresholds: Dict[str, float],
           settings: Dict[str, Any], dataset: str, run_id: Optional[str] = None) -> int:
    if judging.is_offline(report):
        print(f"note: {judging.OFFLINE_NOTICE}")
    report.print_report()
    noise = format_judge_noise(judge_noise(report))
    if noise:
        print(noise)
    print_usage_summary(report, args, settings)
    print_fallbacks(report)
    print_target_failures(report)
    if args.labels:
        print_labels(report)
    if args.output:
        write_output(report, args.output, settings, dataset)
        print(f"wrote {args.output}")
    if args.dashboard_url and run_id:  # the last line on stdout, so a CI job can post it (README "Team mode")
        print(run_link(args.dashboard_url, run_id))
    missed = missed_thresholds(report, thresholds)
    for line in missed:
        print(f"FAIL {line}", file=sys.stderr)
    judge_failed = judge_failure_line(report, args, run_id)
    if judge_failed:
        print(f"ragmeter: judge failed: {judge_failed}", file=sys.stderr)
        return EXIT_JUDGE
    if missed:
        print(f"ragmeter: FAIL: {plural(len(missed), 'threshold')} missed ({'; '.join(missed)})", file=sys.stderr)
        return EXIT_THRESHOLD
    print(f"ragmeter: ok: {plural(len(report.results), 'sample')} scored", file=sys.stderr)
    return EXIT_OK


def judge_failure_line(report: EvalReport, args: argparse.Namespace, run_id: Optional[str]) -> Optional[str]:
    """Why this run counts as a judge failure (exit 3), or None."""
    stopped = judging.stopped_reason(report)
    if stopped:
        resume = f"; finished rows are saved: fix the judge, then --resume {run_id}" if run_id else ""
        return cli_hint(stopped, args) + f" (run stopped early after {plural(len(report.results), 'sample')}{resume})"
    fallback, judged = judging.fallback_counts(report)
    if judged and fallback / judged > args.max_fallback_rate:
        cause = judging.main_cause(report) or "see each score's error"
        return (f"{fallback}/{judged} judged scores ({fallback / judged:.0%}) fell back to the heuristic ({cause}), "
                f"above --max-fallback-rate {args.max_fallback_rate:g}")
    return None


def cli_hint(message: str, args: argparse.Namespace) -> str:
    """The library's advice in this command line's own syntax."""
    from .judges.openai import KEY_HINT

    return message.replace(KEY_HINT, f"check the API key ({args.api_key_env or 'OPENAI_API_KEY'} or --api-key-env)")


# -- --engine ray: rows stream to --output (.parquet) and the history; the report comes from the
# streamed summary, so a million rows are never held in memory. -----------------------------------
def check_ray_args(args: argparse.Namespace) -> None:
    """What the Ray engine cannot do yet, refused before anything starts."""
    if args.resume:
        raise UsageError("--resume works with the local engine; run the Ray job again instead "
                         "(the judge cache makes the rows already scored free)")
    if args.labels:
        raise UsageError("--labels needs the local engine (it compares every row in memory)")
    for flag, given in (("--repeats", args.repeats != 1), ("--batch", args.batch), ("--rescore", args.rescore),
                        ("--target", getattr(args, "target", None))):
        if given:
            raise UsageError(f"{flag} needs the local engine (drop --engine ray)")
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


def ray_evaluate(args: argparse.Namespace) -> int:
    """Score on a Ray cluster; print the usual report; exit 1 when a --fail-under threshold is missed."""
    from .engines.ray import need_ray, run_ray

    check_ray_args(args)
    need_ray()
    config = run_config(args)
    thresholds = parse_thresholds(args.fail_under, [m.name for m in config.chosen_metrics()])
    settings = dict(config.settings(), engine="ray", ray_workers=args.ray_workers, ray_address=args.ray_address)
    history = None if args.no_history else RayHistory(open_store(args.history), Path(args.data).name, settings)
    line, counts = ProgressLine(sys.stderr, args.quiet), {"done": 0, "total": 0}

    def started(total: int) -> None:
        counts["total"] = total
        if history is not None:
            history.start(total)

    def arrived(frame: Any) -> None:
        counts["done"] += len(frame)
        if history is not None:
            history.save(frame)
        line.show(counts["done"], counts["total"])

    mapping: Optional[Dict[str, Optional[str]]] = dict(parse_pairs(args.mapping, "--mapping", "FIELD=COLUMN")) or None
    try:
        run = run_ray(args.data, config, workers=args.ray_workers, address=args.ray_address, mapping=mapping,
                      output=args.output, on_start=started, on_frame=arrived)
    except BaseException as exc:
        if history is not None:
            history.finish("stopped" if isinstance(exc, KeyboardInterrupt) else "failed")
        raise
    finally:
        line.show(counts["done"], counts["total"], final=True)
    usage = {} if config.offline else run.tally.judge_usage()
    if history is not None:
        history.finish("finished", run.elapsed, usage or None)
    return ray_report(run, usage, args, thresholds)


def ray_report(run: Any, usage: Dict[str, Any], args: argparse.Namespace, thresholds: Dict[str, float]) -> int:
    """The local engine's closing lines from the streamed tally; the exit code (judge failure 3, threshold 1)."""
    tally = run.tally
    print(tally.format_report(run.elapsed))
    if usage:
        print(usage_line(usage, args.price_in, args.price_out))
    for metric in tally.metric_names():
        fallbacks = tally.methods[metric].get("heuristic_fallback", 0)
        if fallbacks:
            print(f"warning: {metric}: {fallbacks}/{tally.n} samples fell back to the heuristic "
                  "after a judge failure (see each score's reasoning)")
    if args.output:
        print(f"wrote {args.output}")
    judged = sum(tally.methods.get(m, {}).get(k, 0) for m in METRICS for k in (METHOD_BLEND, METHOD_FALLBACK))
    fallback = sum(tally.methods.get(m, {}).get(METHOD_FALLBACK, 0) for m in METRICS)
    if judged and fallback / judged > args.max_fallback_rate:
        print(f"ragmeter: judge failed: {fallback}/{judged} judged scores ({fallback / judged:.0%}) fell back to "
              f"the heuristic, above --max-fallback-rate {args.max_fallback_rate:g}", file=sys.stderr)
        return EXIT_JUDGE
    missed = missed_means(dict(tally.means(), overall=tally.overall_mean()), thresholds)
    if missed:
        print(f"ragmeter: FAIL: {len(missed)} threshold(s) missed ({'; '.join(missed)})", file=sys.stderr)
        return EXIT_THRESHOLD
    print(f"ragmeter: ok: {tally.n} samples scored on Ray", file=sys.stderr)
    return EXIT_OK


def run_link(dashboard_url: str, run_id: str) -> str:
    """The dashboard's share link of a run: its Report page opened straight to it."""
    return f"{dashboard_url.rstrip('/')}/report?run={quote(run_id)}"


def run_list(args: argparse.Namespace) -> int:
    runs = open_store(args.history).list_runs(owner=args.owner, project=args.project)
    if not runs:
        print("No runs saved yet." if args.owner is None and args.project is None else "No runs match.")
    for r in runs:
        overall = "-" if r.overall_mean is None else f"{r.overall_mean:.3f}"
        print(f"{r.run_id}  {r.created_at}  {r.status:<9} {r.n_done}/{r.n_samples}  overall {overall}  "
              f"{r.name or ''}  {r.dataset_name}  {r.owner or '-'}  {r.project or '-'}")
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
