"""`ragmeter evaluate --engine ray`: the command line's side of the Ray engine (evaluator/engines/ray.py).

Rows stream to --output (.parquet) and the history; the report comes from the streamed summary, so a
million rows are never held in memory. The exit code and last line come from the same verdict as a
local run's (evaluator/verdict.py), decided over the streamed tally.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from .args import UsageError, parse_pairs, parse_thresholds, run_config, run_link
from ..scoring.costs import usage_line
from ..scoring.progress import Progress
from ..scoring.verdict import Verdict, decide
from ..engines.ray import history_rows, need_ray, run_ray
from ..io.versions import ROWS_KEY, VERSION_KEY, row_digest, version_of_digests


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

    def __init__(self, store: Any, dataset: str, settings: Dict[str, Any], project: Optional[str] = None) -> None:
        self.store, self.dataset, self.settings, self.project = store, dataset, settings, project
        self.run_id: Optional[str] = None
        self.digests: List[str] = []  # each row's test-set hash: the data version, recorded at the end

    def start(self, total: int) -> None:
        self.run_id = self.store.create_run(dataset_name=self.dataset, samples=[], settings=self.settings,
                                            n_samples=total, project=self.project)

    def save(self, frame: Any) -> None:
        rows = history_rows(frame)
        self.digests += [row_digest(r.sample) for _, r in rows if r.sample is not None]
        self.store.record_results(self.run_id, rows)

    def finish(self, status: str, total_time: Optional[float] = None, usage: Optional[Dict[str, Any]] = None,
               verdict: Optional[Verdict] = None) -> None:
        if self.run_id:
            if status == "finished":  # the rows streamed past this process: their version is known now
                self.store.update_settings(self.run_id, {VERSION_KEY: version_of_digests(self.digests),
                                                         ROWS_KEY: len(self.digests)})
            self.store.finish_run(self.run_id, status=status, total_time=total_time, usage=usage, verdict=verdict)


def ray_evaluate(args: argparse.Namespace, store: Any = None) -> Verdict:
    """Score on a Ray cluster, saving to `store` (a RunStore, or None); print the usual report; the verdict."""
    check_ray_args(args)
    need_ray()
    config = run_config(args)
    thresholds = parse_thresholds(args.fail_under, [m.name for m in config.chosen_metrics()])
    settings = dict(config.settings(), engine="ray", ray_workers=args.ray_workers, ray_address=args.ray_address)
    history = None if store is None else RayHistory(store, Path(args.data).name, settings, args.project)
    line, counts = Progress(stream=None if args.quiet else sys.stderr), {"done": 0, "total": 0}

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
    ending = ray_report(run, usage, args, thresholds)
    if history is not None:
        history.finish("finished", run.elapsed, usage or None, ending)
        if args.dashboard_url and history.run_id:  # the last line on stdout, as a local run's (README "Team mode")
            print(run_link(args.dashboard_url, history.run_id))
    return ending


def ray_report(run: Any, usage: Dict[str, Any], args: argparse.Namespace, thresholds: Dict[str, float]) -> Verdict:
    """The local engine's closing lines from the streamed tally, and the verdict over it."""
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
    means = dict(tally.means(), overall=tally.overall_mean())
    return decide(tally.counts(), means, thresholds=thresholds, max_fallback_rate=args.max_fallback_rate)
