"""Scoring from a view: queue a run, resume or re-score a stored one, score one typed sample, estimate a run,
try a target. A run is a job in the history (evaluator/runs/jobs.py) that a worker scores; the one sample
of a Spot check is a `Run` too, kept in memory."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ..errors import RagmeterError
from ..io.shapes import TargetResponse
from ..judges.base import Judge, close_judge
from ..model import EvalResult, EvalSample
from ..io.typed import typed_sample
from ..runs import jobs as run_jobs
from ..judges.offline import OfflineJudge
from ..runs.run import BATCH_PREPARING, OFFLINE, OPENAI, Run, RunConfig
from ..scoring.costs import estimate_run
from ..store.history import RunInfo, RunStore
from ..store.jobs import Limits
from ..targets import TargetConfig
from ..targets.base import ask
from ..targets.replay import MESSAGES
from ..team.access import Access

SPOT_DATASET = "spot check"  # the dataset name of a Spot check's run (it is never stored)


def submit_run(store: RunStore, config: RunConfig, samples: Sequence[EvalSample], *, dataset_name: str,
               access: Access, owner: Optional[str] = None, project: Optional[str] = None,
               target: Optional[TargetConfig] = None, api_key: str = "", judge: Optional[Judge] = None,
               limits: Limits = Limits(), settings: Optional[Dict[str, Any]] = None, pin: bool = False,
               name: Optional[str] = None) -> str:
    """Queue `samples` as a new run (named `name`: None gives "dataset · scorer · date"); its id. `api_key` is kept in this process's memory only, never stored;
    `judge` overrides the one `config` describes; `target` answers each question first; `settings` adds to what
    is stored (the files a command line writes); `pin` keeps the job for this process's own worker (the command
    line drives its run here). NotAllowed when the session may not run; QueueFull at the team's cap."""
    access.check("run")
    return run_jobs.submit_new(store, config, samples, dataset_name=dataset_name, owner=owner, project=project,
                               target=target, api_key=api_key, judge=judge, limits=limits, settings=settings,
                               pin=pin, name=name)


def resume_run(store: RunStore, info: RunInfo, *, access: Access, api_key: str = "",
               config: Optional[RunConfig] = None, target_headers: Sequence[str] = (),
               limits: Limits = Limits(), external: bool = False, judge: Optional[Judge] = None,
               target: Optional[TargetConfig] = None, pin: bool = False) -> str:
    """Queue the rest of stored run `info` (only rows without a result). With `external` workers, a `config`
    that says what the stored settings say is dropped: the job need not be pinned to this process. `judge`,
    `target` and `pin` as for submit_run (a command line names its own)."""
    access.check("resume", info.owner)
    if external and config is not None and \
            config.api_key_env == RunConfig.from_settings(info.settings).api_key_env:
        config = None
    return run_jobs.submit_resume(store, info.run_id, api_key=api_key, config=config, judge=judge, target=target,
                                  target_headers=[h.strip() for h in target_headers if h.strip()], limits=limits,
                                  pin=pin)


def rescore_run(store: RunStore, info: RunInfo, config: RunConfig, *, access: Access, owner: Optional[str] = None,
                api_key: str = "", limits: Limits = Limits(), judge: Optional[Judge] = None,
                pin: bool = False, name: Optional[str] = None) -> str:
    """Queue a new run scoring run `info`'s saved answers with `config`'s judge (the pipeline is not called)."""
    access.check("rescore", info.owner)
    return run_jobs.submit_rescore(store, info.run_id, config, owner=owner, api_key=api_key, limits=limits,
                                   judge=judge, pin=pin, name=name)


def local_run(config: RunConfig, samples: Sequence[EvalSample], *, dataset_name: str,
              target: Optional[TargetConfig] = None, project: Optional[str] = None,
              settings: Optional[Dict[str, Any]] = None) -> Run:
    """A run scored in this process and kept nowhere (a command line's --no-history); not started yet."""
    run = Run.new(config, samples, dataset_name=dataset_name, store=None, target=target, project=project)
    run.settings.update(settings or {})
    return run


def ray_engine(address: Optional[str], workers: int) -> Any:
    """The Ray engine a run's scoring is placed on (evaluator/runs/ray_run.py); Ray loads only here."""
    from ..runs.ray_run import RayEngine

    return RayEngine(address, workers)


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
    """Judge calls, prompt and completion tokens and cost a run would spend (no network, no judge built: no key
    needed; zero offline)."""
    return estimate_run(samples, config.language, price_in=config.price_in, price_out=config.price_out,
                        judge=OfflineJudge() if config.offline else None, metrics=config.chosen_metrics(),
                        repeats=config.repeats, judge_mode=config.judge_mode).to_dict()


def try_target(target: TargetConfig, question: str) -> TargetResponse:
    """One call of the user's pipeline with `question`, read as a run would read it (the failure included)."""
    return ask(target.build(), question, target.policy)


def target_config(url: str, *, body: Optional[str], headers: List[str], fields: List[str], timeout: float,
                  workers: int, base_url: str = "", replays: bool = False) -> TargetConfig:
    """A target from a form or flags, checked now (URL, body template, headers, paths): TargetError saying what.
    `replays`: a body with the conversation's messages is checked once the rows are known, not here."""
    config = TargetConfig.from_options(url, body=body, headers=headers, fields=fields, base_url=base_url,
                                       timeout=timeout, workers=workers)
    if not (replays and MESSAGES in (body or "")):
        config.build()  # a bad spec, path or header fails here, before any file is read
    return config


# Names the command line builds runs with, from the one run path.
__all__ = [
    "BATCH_PREPARING", "OFFLINE", "OPENAI", "Run", "RunConfig", "SPOT_DATASET", "TargetConfig", "close_judge",
    "estimate", "local_run", "ray_engine", "rescore_run", "resume_run", "spot_check", "submit_run",
    "target_config", "try_target",
]
