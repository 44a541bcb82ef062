"""Scoring from a view: queue a run, resume or re-score a stored one, score one typed sample, estimate a run,
try a target. A run is a job in the history (evaluator/runs/jobs.py) that a worker scores; the one sample
of a Spot check is a `Run` too, kept in memory."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ..errors import RagmeterError
from ..io.shapes import TargetResponse
from ..judges.base import Judge
from ..model import EvalResult, EvalSample
from ..io.typed import typed_sample
from ..runs import jobs as run_jobs
from ..runs.run import Run, RunConfig
from ..scoring.costs import estimate_run
from ..store.history import RunInfo, RunStore
from ..store.jobs import Limits
from ..targets import TargetConfig
from ..targets.base import ask
from ..team.access import Access

SPOT_DATASET = "spot check"  # the dataset name of a Spot check's run (it is never stored)


def submit_run(store: RunStore, config: RunConfig, samples: Sequence[EvalSample], *, dataset_name: str,
               access: Access, owner: Optional[str] = None, project: Optional[str] = None,
               target: Optional[TargetConfig] = None, api_key: str = "", judge: Optional[Judge] = None,
               limits: Limits = Limits()) -> str:
    """Queue `samples` as a new run; its id. `api_key` is kept in this process's memory only, never stored;
    `judge` overrides the one `config` describes; `target` answers each question first. NotAllowed when the
    session may not run; QueueFull at the team's cap."""
    access.check("run")
    return run_jobs.submit_new(store, config, samples, dataset_name=dataset_name, owner=owner, project=project,
                               target=target, api_key=api_key, judge=judge, limits=limits)


def resume_run(store: RunStore, info: RunInfo, *, access: Access, api_key: str = "",
               config: Optional[RunConfig] = None, target_headers: Sequence[str] = (),
               limits: Limits = Limits(), external: bool = False) -> str:
    """Queue the rest of stored run `info` (only rows without a result). With `external` workers, a `config`
    that says what the stored settings say is dropped: the job need not be pinned to this process."""
    access.check("resume", info.owner)
    if external and config is not None and \
            config.api_key_env == RunConfig.from_settings(info.settings).api_key_env:
        config = None
    return run_jobs.submit_resume(store, info.run_id, api_key=api_key, config=config,
                                  target_headers=[h.strip() for h in target_headers if h.strip()], limits=limits)


def rescore_run(store: RunStore, info: RunInfo, config: RunConfig, *, access: Access, owner: Optional[str] = None,
                api_key: str = "", limits: Limits = Limits()) -> str:
    """Queue a new run scoring run `info`'s saved answers with `config`'s judge (the pipeline is not called)."""
    access.check("rescore", info.owner)
    return run_jobs.submit_rescore(store, info.run_id, config, owner=owner, api_key=api_key, limits=limits)


def spot_check(question: str, answer: str, contexts: str, ground_truth: str, config: RunConfig, *,
               access: Access, api_key: str = "", judge: Optional[Judge] = None) -> EvalResult:
    """Score one sample typed in a form (contexts one per line, or blocks between lines of ---) through the one
    `Run` path, held in memory (never stored); the run's own error when it fails.

    `Run`'s constructor, not `Run.new`: a typed sample may leave its answer empty on purpose (to see what the
    metrics make of none), which `Run.new` refuses for a whole file."""
    access.check("run")
    config.chosen_metrics()  # MetricError before any judge is built
    built = judge is None
    judge = config.build_judge(api_key) if judge is None else judge
    sample = typed_sample(question, answer, contexts, ground_truth)
    run = Run(config.evaluator(judge), [(0, sample)], dataset_name=SPOT_DATASET, settings=config.settings(judge),
              close_judge=built).start()
    run.join()
    if run.exception is not None:
        raise run.exception
    if run.report is None or not run.report.results:
        raise RagmeterError(run.error or f"the spot check ended {run.status} without a result")
    return run.report.results[0]


def estimate(samples: Sequence[EvalSample], config: RunConfig) -> Dict[str, Any]:
    """Judge calls, prompt and completion tokens and cost a run would spend (no network; zero offline)."""
    return estimate_run(samples, config.language, price_in=config.price_in, price_out=config.price_out,
                        metrics=config.chosen_metrics(), repeats=config.repeats,
                        judge_mode=config.judge_mode).to_dict()


def try_target(target: TargetConfig, question: str) -> TargetResponse:
    """One call of the user's pipeline with `question`, read as a run would read it (the failure included)."""
    return ask(target.build(), question, target.policy)


def target_config(url: str, *, body: Optional[str], headers: List[str], fields: List[str], timeout: float,
                  workers: int) -> TargetConfig:
    """An HTTP target from a form, checked now (URL, body template, headers, paths): TargetError saying what."""
    config = TargetConfig.from_options(url, body=body, headers=headers, fields=fields, timeout=timeout,
                                       workers=workers)
    config.build()
    return config
