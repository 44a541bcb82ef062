"""The `ragmeter` command line.

    ragmeter evaluate DATA [--offline | --model M --base-url URL | --judge NAME] [--language ar|en|auto]
                      [--max-workers N] [--output report.json|.csv|.html] [--fail-under METRIC=VALUE ...]
                      [--dry-run] [--resume RUN_ID] [--labels] [--batch [--batch-poll SECONDS]]
                      [--engine local|ray [--ray-address auto|ray://HOST:PORT] [--ray-workers N]]
                      [--target URL|module:function|file.py:function|openai:MODEL [--target-body JSON]
                       [--target-header 'Name: value' ...] [--target-field answer=PATH ...]
                       [--target-workers N] [--target-timeout S]]
    ragmeter evaluate --rescore RUN_ID [judge options]   score a saved run's answers again
    ragmeter evaluate DATA --submit     queue the run for `ragmeter worker` processes, print its id
    ragmeter runs [stop|delete RUN_ID]  list the run history (queued runs with their place) and the test-set
                                        generations, stop or delete a run or a generation
    ragmeter worker [--history URL] [--slots N] [--engine ray] [--once]   score queued runs until SIGTERM (cli/jobs.py)
    ragmeter review export|import|stats|queue|align RUN_ID ...   people's reviews (cli/review.py)
    ragmeter ab DATA --target A --target-b B [--metric M] [--alpha 0.05] [--tie 0.02] [--max-samples N]
                [--json out.json]   sequential A/B test of two pipelines (cli/ab.py)
    ragmeter generate --docs DOCS -o testset.jsonl [--model M | --offline]   a test set (see cli_generate.py)
    ragmeter compare BASE NEW [--format markdown] [--fail-on-regression]   what changed (cli/compare.py)
    ragmeter collect --listen HOST:PORT --project NAME [--sample RATE] [--rule EXPR]...   score production traces (cli/collect.py)
    ragmeter config [--json] [--history H] [--judge NAME] ...   each setting and where it came from (cli/config_cmd.py)

Exit codes (evaluator/verdict.py decides them, once, for every engine): 0 ok, 1 a --fail-under threshold
was missed or is N/A, 2 bad input or usage (one line, no traceback), 3 the judge failed (the run stopped
early on judge failure, a reply could not give a score, or more than --max-fallback-rate of the judged
scores fell back to the heuristic), 4 some target calls failed (those rows are unscored, never 0),
5 nothing was scored, 6 the run was scored but some of it could not be saved to the history, 70 a bug,
130 Ctrl-C or a run stopped from elsewhere (`ragmeter runs stop`). The last line of output says which, and why.

With a history, a run is a job (evaluator/runs/jobs.py): queued, then claimed by this process's own worker,
which heartbeats it and reads its stop flag, so `ragmeter runs stop RUN_ID` from another shell stops it.
"""
from __future__ import annotations

import argparse
import heapq
import json
import shlex
import sys
import traceback
from importlib import import_module
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .args import UsageError, build_parser, parse_pairs, parse_thresholds, run_config, run_link
from ..errors import RagmeterError
from ..service import history as service_naming
from ..model import EvalReport, EvalResult
from ..service import evaluation, history, runs, workers
from ..service.evaluation import (EXIT_CODES, OFFLINE_NOTICE, OUTPUTS, Progress, Verdict, check_output,
                                  from_decision, missed_thresholds, plural, summaries, write_results)  # noqa: F401 (missed_thresholds: the command's own name too)
from ..service.exports import run_header
from ..service.options import AUTO_JUDGE_MODE as AUTO
from ..service.runs import BATCH_PREPARING, OFFLINE, Run, RunConfig, TargetConfig
from .printing import print_fallbacks, print_labels, print_target_failures, print_usage_summary, summary_lines

EXIT_OK, EXIT_THRESHOLD, EXIT_USAGE, EXIT_JUDGE = 0, 1, 2, 3
EXIT_TARGET, EXIT_NOTHING_SCORED, EXIT_HISTORY = EXIT_CODES["target_failed"], EXIT_CODES["nothing_scored"], \
    EXIT_CODES["history_failed"]
EXIT_BUG = 70  # EX_SOFTWARE: an internal error
EXIT_INTERRUPTED = 130  # the shell's code for Ctrl-C


class RunFailed(RagmeterError):
    """The run stopped on one of ragmeter's own errors; its finished rows are in the history."""


def target_config(args: argparse.Namespace) -> Optional[TargetConfig]:
    """The target the command line names, or None; TargetConfigError (exit 2) when it is unusable."""
    if not args.target:
        if args.target_body or args.target_field or args.target_base_url:
            raise UsageError("--target-body, --target-field and --target-base-url need --target")
        return None
    return runs.target_config(args.target, body=args.target_body, headers=args.target_header,
                              fields=args.target_field, base_url=args.target_base_url, timeout=args.target_timeout,
                              workers=max(1, args.target_workers), replays=True)


def resumed_config(args: argparse.Namespace, stored: Dict[str, Any]) -> RunConfig:
    """A resumed run scores as it started; a judge named on the command line replaces the stored one."""
    if args.metrics is not None or args.rubrics or args.repeats != 1 or args.temperature or args.align_with \
            or args.judge_mode != AUTO:
        raise UsageError("--metrics, --rubrics, --repeats, --temperature, --align-with and --judge-mode cannot change "
                         "a resumed run: it scores as it started")
    config = RunConfig.from_settings(stored)
    if args.offline:
        return replace(config, judge=OFFLINE, batch=False)
    if args.batch:  # a stored batch run stays one; --batch also turns a direct run's rest into a batch
        config = replace(config, batch=True, batch_poll=args.batch_poll)
    if args.model or args.judge:
        given = run_config(args)
        if given.offline:
            return replace(config, judge=OFFLINE, batch=False)
        return replace(config, judge=given.judge, model=given.model, base_url=given.base_url,
                       api_key_env=given.api_key_env, cache=given.cache, max_workers=given.max_workers)
    return config


def open_store(path: Optional[str]) -> Any:
    """The history --history names, else the environment's, else the team file's (team/settings.py)."""
    return history.open_history(history.history_for(path))


def read_samples(args: argparse.Namespace, target: Optional[TargetConfig]) -> list:
    if not args.data:
        raise UsageError("evaluate needs a DATA file (or --resume RUN_ID, or --rescore RUN_ID)")
    mapping = parse_pairs(args.mapping, "--mapping", "FIELD=COLUMN") or None
    notes: List[str] = []  # which tool's file was recognised, how it was read, rows it left out
    args.load_warnings = []  # unread columns that look like a field: printed again on the last lines (announce)
    source = evaluation.DataSource(args.data, mapping, qrels=getattr(args, "qrels", None),
                                   run=getattr(args, "run", None), needs_answer=target is None,
                                   tool_evidence=not getattr(args, "no_tool_evidence", False),
                                   sheet=getattr(args, "sheet", None), **input_limits(args))
    try:
        return evaluation.read_samples(source, notes, args.load_warnings)
    finally:
        for note in notes:
            print(f"ragmeter: note: {note}", file=sys.stderr)


def input_limits(args: argparse.Namespace) -> Dict[str, int]:
    """--max-rows and --max-mb, else the environment's, else the team file's [inputs], else the defaults."""
    from ..service.options import Flags, input_limits as resolved

    given = {key: getattr(args, key, None) for key in ("max_rows", "max_mb")}
    for key, value in given.items():
        if value is not None and value < 1:
            raise UsageError(f"--{key.replace('_', '-')} must be at least 1, not {value}")
    limits = resolved(Flags(max_rows=given["max_rows"], max_mb=given["max_mb"]))
    return {s.name.partition(".")[2]: int(s.value) for s in limits}


# The files a run was started to write (-o, --record), stored with it (OUTPUTS), so --resume writes them too.
_OUTPUT_FLAGS = {"output": "-o", "record": "--record"}


def new_run(args: argparse.Namespace) -> Run:
    """A run kept in no history (--no-history), scored here."""
    target = target_config(args)
    samples = read_samples(args, target)
    return runs.local_run(run_config(args), samples, dataset_name=Path(args.data).name, target=target,
                          project=args.project, settings={**output_settings(args), **what_changed(args)})


def output_settings(args: argparse.Namespace) -> Dict[str, Any]:
    return evaluation.output_settings({name: getattr(args, name) for name in _OUTPUT_FLAGS
                                       if getattr(args, name, None)})


def what_changed(args: argparse.Namespace) -> Dict[str, Any]:
    """The git commit (and uncommitted changes) and --prompt-version, recorded with the run."""
    return evaluation.what_changed(getattr(args, "prompt_version", None))


def resume_command(run_id: Optional[str], args: argparse.Namespace) -> str:
    """The command that resumes `run_id` and writes what this one was to write (-o, --record)."""
    words = ["ragmeter", "evaluate", "--resume", str(run_id)]
    for name, flag in _OUTPUT_FLAGS.items():
        if getattr(args, name, None):
            words += [flag, shlex.quote(str(getattr(args, name)))]
    return " ".join(words)


def queued_run_id(args: argparse.Namespace, store: Any, judge: Any) -> str:
    """Queue the run the command line asks for (new, --resume or --rescore); its id. `judge` (None with
    --submit) stays in this process: the job is then pinned here. The command line has a laptop's trust:
    who may run it may write the history."""
    limits, pin, access = workers.queue_limits(), not args.submit, history.LAPTOP_ACCESS
    if args.rescore:
        if args.resume or args.data or args.target:
            raise UsageError("--rescore takes the saved answers of a run: give no DATA file, --resume or --target")
        return runs.rescore_run(store, store.get_run(args.rescore), run_config(args), access=access, judge=judge,
                                limits=limits, pin=pin, name=getattr(args, "name", None))
    if args.resume:
        config = _resume_config(args, store)
        return runs.resume_run(store, store.get_run(args.resume), access=access, judge=judge,
                               config=config if judge is not None else None, target=target_config(args),
                               target_headers=args.target_header, limits=limits, pin=pin)
    target = target_config(args)
    if args.submit and target is not None and target.headers:
        raise UsageError("--submit cannot hand --target-header values to a worker (they are never stored): "
                         "run it here without --submit")
    samples = read_samples(args, target)
    settings = {**output_settings(args), **what_changed(args)}
    return runs.submit_run(store, run_config(args), samples, dataset_name=Path(args.data).name, access=access,
                           target=target, project=args.project, judge=judge, limits=limits, pin=pin,
                           name=getattr(args, "name", None),
                           settings=settings or None)


def _resume_config(args: argparse.Namespace, store: Any) -> RunConfig:
    settings = store.get_run(args.resume).settings
    config = resumed_config(args, settings)
    for name, path in (settings.get(OUTPUTS) or {}).items():  # what the run was started to write
        if name in _OUTPUT_FLAGS and not getattr(args, name, None):
            setattr(args, name, path)
    if args.output:
        check_output(args.output)  # known before the run resumes, not after it
    return config


def judge_for(args: argparse.Namespace, store: Any) -> Any:
    """The judge this command line's run scores with, built now so a missing key or a bad endpoint
    is an error before anything is queued."""
    if args.resume:
        return resumed_config(args, store.get_run(args.resume).settings).build_judge()
    return run_config(args).build_judge()


def evaluate_as_job(args: argparse.Namespace, store: Any) -> int:
    """Queue the run; with --submit print its id, else claim it here and drive it to its end."""
    from .jobs import claim_own, failed_to_start, submitted_line

    if args.submit:
        run_id = queued_run_id(args, store, None)
        print(run_id)
        print(submitted_line(store, run_id), file=sys.stderr)
        return EXIT_OK
    judge = judge_for(args, store)
    if args.engine == "ray":  # checked here (a missing key is an error now); each Ray worker builds its own
        runs.close_judge(judge)
        judge = None
    worker = None
    try:
        run_id = queued_run_id(args, store, judge)
        worker, run = claim_own(store, run_id, args.quiet, on_event=note_engine, **ray_options(args))
        if not isinstance(run, Run):  # None: it failed to start
            raise RunFailed(f"the run failed: {failed_to_start(store, run_id)}")
        return drive(run, args, parse_thresholds(args.fail_under, run.evaluator.metric_names), worker=worker,
                     store=store)
    finally:
        runs.close_judge(judge)
        if worker is not None and worker.ray is not None:
            worker.shutdown()  # the local Ray cluster it started


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
    print(json.dumps(runs.estimate(samples, config), indent=2))
    return EXIT_OK


def answered(run: Run) -> Optional[int]:
    return run.answered if run.target is not None else None


def wait_for(run: Run, quiet: bool, resume: str = "") -> None:
    """Draw the progress on stderr until the run ends; Ctrl-C stops it and keeps every finished row."""
    line = Progress(stream=None if quiet else sys.stderr)
    batch = BatchLines(run, quiet, resume)
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

    def __init__(self, run: Run, quiet: bool, resume: str = "") -> None:
        self.run, self.quiet, self.hinted = run, quiet, False
        self.resume = resume or f"ragmeter evaluate --resume {run.run_id}"
        self.last: Optional[str] = None

    def show(self) -> None:
        status = self.run.batch_status
        if self.quiet or status is None or status == self.last:
            return
        if status != BATCH_PREPARING and not self.hinted and self.run.run_id:  # the batches exist by now
            self.hinted = True
            print(f"closing this is safe: the batches go on at the server, and "
                  f"'{self.resume}' picks them up", file=sys.stderr)
        self.last = status
        print(status, file=sys.stderr)


def check_name(args: argparse.Namespace) -> None:
    """--name is refused now, before the data is read, when it is too long; it names a new run only."""
    if getattr(args, "name", None) is None:
        return
    if args.resume:
        raise UsageError("--name names a new run: --resume keeps the run's name (rename it with the History page)")
    try:
        args.name = service_naming.clean_name(args.name)
    except RagmeterError as exc:
        raise UsageError(f"--name: {exc}") from None


def run_evaluate(args: argparse.Namespace) -> int:
    if not 0.0 <= args.max_fallback_rate <= 1.0:
        raise UsageError(f"--max-fallback-rate {args.max_fallback_rate:g}: a share from 0 to 1, e.g. 0.1")
    if args.output:
        check_output(args.output)  # a report that cannot be written is known now, not after the run
    check_name(args)
    if (getattr(args, "qrels", None) or getattr(args, "run", None)) and args.metrics is None:
        args.metrics = evaluation.RETRIEVAL_METRICS  # a retrieval run has ids and judgments, no answers to judge
        print(f"note: a retrieval run: scoring {args.metrics} (choose others with --metrics)", file=sys.stderr)
    if args.dry_run:
        return dry_run(args)
    check_engine(args)
    if args.submit and args.no_history:
        raise UsageError("--submit queues the run in the history for workers: drop --no-history")
    store = None if args.no_history else open_store(args.history)
    if store is not None:
        return evaluate_as_job(args, store)
    if args.rescore or args.resume:
        raise UsageError(f"{'--rescore' if args.rescore else '--resume'} needs the run history; drop --no-history")
    run = new_run(args)
    if run.target is not None and store is None and not args.record and _conversations(run.pending):
        print("note: the replayed conversations are not saved (--no-history and no --record)", file=sys.stderr)
    run.keep_rows = bool(args.output or args.record)  # with nothing to write, the rows are only counted
    ray = place_on_ray(run, args)
    try:
        return drive(run, args, parse_thresholds(args.fail_under, run.evaluator.metric_names))
    finally:
        if ray is not None:
            ray.close()


def check_engine(args: argparse.Namespace) -> None:
    """--engine ray's own flags, checked before anything starts (the rest is the local engine's)."""
    if args.engine == "ray":
        if args.ray_workers < 1:
            raise UsageError("--ray-workers must be at least 1")
        if args.submit:
            raise UsageError("--submit queues the run for 'ragmeter worker' processes, which choose their engine "
                             "themselves ([runs] engine or 'ragmeter worker --engine ray'): drop --engine ray")
    elif args.ray_address:
        raise UsageError("--ray-address needs --engine ray")


def ray_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The Worker's engine options for this command line (the local engine's: none)."""
    if args.engine != "ray":
        return {}
    return {"engine": "ray", "ray_address": args.ray_address or None, "ray_workers": args.ray_workers}


def place_on_ray(run: Run, args: argparse.Namespace) -> Any:
    """With --engine ray and no history: the Ray engine this run scores on (closed by the caller), else None."""
    if args.engine != "ray":
        return None
    engine = runs.ray_engine(args.ray_address, args.ray_workers)
    try:
        note_engine(engine.place(run, run_config(args)))
    except BaseException:
        engine.close()
        raise
    return engine


def note_engine(where: str) -> None:
    """The Ray engine's word on a run it leaves to this process (a target, the Batch API): said, never silent."""
    if "not on Ray" in where:
        print(f"ragmeter: note: {where.lstrip('; ')}", file=sys.stderr)


def _conversations(pending: Sequence[Any]) -> bool:
    return any(s.conversation is not None for _, s in pending)


def save_recording(rows: Callable[[], Iterator[Tuple[int, EvalResult]]], path: Path) -> None:
    """--record: the replayed conversations as JSON Lines, ready to score again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as f:
        for _, result in rows():
            if result.conversation is not None:
                f.write(json.dumps(result.conversation.to_dict(), ensure_ascii=False, default=str) + "\n")
                count += 1
    print(f"recorded {count} conversations to {path} (re-score: ragmeter evaluate {path})", file=sys.stderr)


def drive(run: Run, args: argparse.Namespace, thresholds: Dict[str, float], worker: Any = None,
          store: Any = None) -> int:
    """Start the run (a worker's is started), show its progress until it ends (Ctrl-C stops it, rows kept),
    then `finish`. A worker's run stopped from elsewhere (`ragmeter runs stop`) ends as Ctrl-C does."""
    rows = "conversation" if _conversations(run.pending) else "sample"
    if worker is None:
        run.start()
    if run.run_id and not args.quiet:
        print(f"run {run.run_id}: {plural(len(run.pending), rows)} to score (resume with: "
              f"{resume_command(run.run_id, args)})",
              file=sys.stderr)
    try:
        wait_for(run, args.quiet, resume_command(run.run_id, args))
    except KeyboardInterrupt:
        if worker is not None:
            worker.drain(5.0)  # the job ends "stopped" in the history before the process goes
        return _stopped(run, args, rows)
    if worker is not None:
        worker.drain(5.0)
        from .jobs import stopped_elsewhere

        if run.status == "stopped" and run.error is None and stopped_elsewhere(store, run.run_id):
            print("ragmeter: the run was stopped from elsewhere (ragmeter runs stop, or the dashboard)",
                  file=sys.stderr)
            return _stopped(run, args, rows)
    if run.exception is not None and not isinstance(run.exception, RagmeterError):
        raise run.exception  # a bug, not bad input: main() shows the traceback
    if run.warning:
        print(f"warning: {run.warning}", file=sys.stderr)
    if run.status == "failed":
        raise RunFailed(f"the run failed: {run.error}; finished rows are kept "
                        f"(resume with: {resume_command(run.run_id, args)})")
    results = finished_rows(run, store)
    if args.record and run.target is not None:
        save_recording(results, Path(args.record))
    summary = run.summary or summaries.build(run.report or EvalReport(), settings=run.settings)
    return finish(summary, results, args, thresholds, run.settings, run.dataset_name, run.run_id,
                  history_error=run.history_error)


def finished_rows(run: Run, store: Any) -> Callable[[], Iterator[Tuple[int, EvalResult]]]:
    """A fresh pass over the run's rows, in order: from the history a page at a time when the run kept none in
    memory (a worker's), else from its report."""
    if not run.keep_rows and store is not None and run.run_id:
        # Rows the history refused are in no page of it: merged back in, so -o and --record miss none.
        return lambda: heapq.merge(store.iter_results(run.run_id), run.unsaved_rows(), key=lambda pair: pair[0])
    report = run.report or EvalReport()
    return lambda: enumerate(report.results)


def _stopped(run: Run, args: argparse.Namespace, rows: str) -> int:
    saved = (f"saved; resume with: {resume_command(run.run_id, args)}" if run.run_id
             else "not saved (--no-history)")
    if run.batch_status and run.run_id:
        saved += " (submitted batches go on at the server and are picked up, not sent again)"
    print(f"ragmeter: stopped: {run.done}/{run.total} {rows}s scored, {saved}", file=sys.stderr)
    return EXIT_INTERRUPTED


def finish(summary: summaries.RunSummary, rows: Callable[[], Iterator[Tuple[int, EvalResult]]],
           args: argparse.Namespace, thresholds: Dict[str, float], settings: Dict[str, Any], dataset: str,
           run_id: Optional[str] = None, history_error: Optional[str] = None) -> int:
    """The report (from the run's summary), its warnings and outputs (written from `rows` as they pass), then
    the verdict's last line; returns its exit code."""
    if summary.trust.offline:
        print(f"note: {OFFLINE_NOTICE}")
    print("\n".join(summary_lines(summary)))
    print_usage_summary(summary, args, settings)
    print_fallbacks(summary)
    print_target_failures(summary)
    if args.labels:
        print_labels(summary)
    if args.output:
        write_results(args.output, rows, summary, settings=settings, dataset=dataset,
                      bom=not getattr(args, "no_bom", False), page=getattr(args, "pdf_page", None) or "",
                      header=run_header(dataset, summary, settings, run_id=run_id, date=finished_at(),
                                        name=getattr(args, "name", None)))
        print(f"wrote {args.output}")
    if args.dashboard_url and run_id:  # the last line on stdout, so a CI job can post it (README "Team mode")
        print(run_link(args.dashboard_url, run_id))
    ending = from_decision(summary.decision.to_dict(), thresholds=thresholds, max_fallback_rate=args.max_fallback_rate,
                           history_error=history_error)
    stopped_after = summary.n_rows if summary.trust.stopped else None
    if thresholds:  # a CI gate: say on its last lines whether its judge was examined fit to gate
        _judge_exam_lines(settings, args)
    return announce(ending, args, run_id, stopped_after)


def finished_at() -> str:
    """When the run that has just ended was made, as its files say it: now (ISO, UTC, to the minute)."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="minutes")


def _judge_exam_lines(settings: Dict[str, Any], args: argparse.Namespace) -> None:
    from ..service import judging

    try:
        store = None if getattr(args, "no_history", False) else open_store(args.history)
    except RagmeterError:  # a history that cannot be opened: the exam is unknown, and said so
        store = None
    for line in judging.gate_lines(settings, store):
        print(f"ragmeter: {line}", file=sys.stderr)


def announce(ending: Verdict, args: argparse.Namespace, run_id: Optional[str] = None,
             stopped_after: Optional[int] = None) -> int:
    """Print each missed threshold and the verdict's last line (in this command line's syntax); its exit code."""
    for line in ending.missed:
        print(f"FAIL {line}", file=sys.stderr)
    for warning in getattr(args, "load_warnings", None) or []:  # no silent drop: said where it is read last
        print(f"ragmeter: warning: {warning}", file=sys.stderr)
    line = cli_hint(ending.line, args) if ending.kind == "judge_failed" else ending.line
    if stopped_after is not None:
        resume = f"; finished rows are saved: fix the judge, then {resume_command(run_id, args)}" if run_id else ""
        line += f" (run stopped early after {plural(stopped_after, 'sample')}{resume})"
    print(f"ragmeter: {line}", file=sys.stderr)
    return ending.exit_code


def cli_hint(message: str, args: argparse.Namespace) -> str:
    """The library's advice in this command line's own syntax."""
    return evaluation.with_key_hint(message, f"check the API key ({args.api_key_env or 'OPENAI_API_KEY'} or "
                                             "--api-key-env)")


def worker_main(args: argparse.Namespace) -> int:
    from .jobs import worker_command

    return worker_command(args, open_store(args.history))


# Each subcommand's runner, "module:function" in cli/, imported on first use (`ragmeter compare` never loads the
# scoring path). `evaluate`, `worker` and `runs` are this module's own; `runs --chart` is charts.py's.
COMMANDS: Dict[str, str] = {
    "ab": "ab:run_ab_command", "collect": "collect:run_collect", "compare": "compare:run_compare",
    "config": "config_cmd:run_config_command", "dashboard": "serve:run_serve_command", "export": "export:run_export",
    "generate": "generate:run_generate", "judge": "judge_check:run_judge_check", "note": "note:run_note",
    "review": "review:run_review", "serve": "serve:run_serve_command",
}


def list_main(args: argparse.Namespace) -> int:
    from .listing import run_list

    return run_list(args, open_store(args.history))


def command_for(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    """The function that runs the subcommand `args` names."""
    where = "charts:run_chart" if args.command == "runs" and args.chart else COMMANDS.get(args.command)
    if where is None:
        return {"evaluate": run_evaluate, "worker": worker_main}.get(args.command, list_main)
    module, function = where.split(":")
    return getattr(import_module(f".{module}", __package__), function)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return command_for(args)(args)
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
