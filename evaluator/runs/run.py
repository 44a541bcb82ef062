"""One run path for the CLI, the dashboard, resume and re-score: `Run`, started from a `RunConfig`
(evaluator/scoring/run_config.py, re-exported here).

`Run` scores on a daemon thread and saves each finished row to the history as it completes:

    run = Run.new(RunConfig(), samples, dataset_name="faq.csv", store=RunStore()).start()
    run.done, run.total, run.eta(), run.means()   # from any thread, while it runs
    run.stop()                                    # finish the samples in flight, start no more
    run.join(); run.status, run.report            # "finished" | "stopped" | "failed"
    Run.resume(store, run_id).start()             # only the rows the history has no result for
    Run.new(config, questions, dataset_name="q.jsonl", target=TargetConfig("http://127.0.0.1:8765/ask"))
    Run.rescore(store, run_id, RunConfig(judge="openai", model="gpt-4o-mini"))  # stored answers, new judge

Rows are single-turn samples or conversations (an `EvalSample` carrying its turns): both run here,
scored by one pass. With a target, each question is sent to the user's pipeline (a conversation's
user turns one by one) and each answer is judged as soon as it arrives (`evaluator.targets.pipeline`);
every answer is saved to the history as it arrives, so a resumed run never asks the target again for
a row it already answered. `answered` counts them.

Finished rows reach the history in batches (runs/rows.py: one transaction every ~0.5 s or 100 rows,
and at the end or stop), each write retried a few times. A history that cannot be written never
stops the run: it goes on unsaved and says why in `warning`; rows it could not save are counted in
`lost_rows`, and the verdict then says so instead of "ok".

A run a worker executes (runs/worker.py) is built through `Run.resume`, whatever its kind; `detach()`
lets a worker that lost the run's lease stop it without writing its ending (another worker owns it).
A worker's run keeps no rows (`keep_rows = False`): each finished row is counted into `tally`
(analysis/tally.py) and handed to the history, the run's `summary` is built from the tally when it ends,
and its `report` carries no rows; so a 100,000-row run is never held whole (the CLI prints that summary
and writes its files from the history a page at a time).
"""
from __future__ import annotations

import logging
import os
import threading
import time
from functools import partial
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

from ..metrics.retrieval import parse_name  # a retrieval run needs no answers
from ..errors import DatasetError, HistoryError, JudgeFailed, RagmeterError
from ..io.versions import ROWS_KEY, VERSION_KEY, version_settings
from ..judges.base import Judge, close_judge, judge_usage
from ..judges.health import STOPPED_KEY
from ..judges.registry import OFFLINE, OPENAI  # noqa: F401  (re-exported for the CLI and pages)
from ..model import EvalReport, EvalResult, EvalSample
from ..analysis.tally import ReportTally
from ..engines import Engine
from ..scoring.evaluation import RAGEvaluator
from ..analysis import summary as summary_module
from ..scoring import summaries
from ..scoring.passes import usage_delta
from ..scoring.run_config import RunConfig  # re-exported: `from evaluator.runs.run import RunConfig` still works
from ..scoring.verdict import Verdict, from_decision
from ..store.history import RunStore
from ..targets import TargetConfig
from ..targets.pipeline import evaluate_with_target
from ..targets.replay import row_target
from .rows import RowWriter

log = logging.getLogger("ragmeter.runs")

Pending = Sequence[Tuple[int, EvalSample]]
RunStatus = Literal["ready", "running", "finished", "stopped", "failed", "interrupted"]
BATCH_PREPARING = "preparing the batch requests"  # a batch run's status before its batches exist


def describe(exc: BaseException) -> str:
    """The message a user sees for a failed run; ragmeter's own errors already say what to do."""
    return str(exc) if isinstance(exc, RagmeterError) else f"{type(exc).__name__}: {exc}"


class Run:
    """Scores `pending` ((index, sample) pairs) on a daemon thread, saving each row as it finishes.

    Build one with `Run.new` or `Run.resume`; the constructor is the low-level form (any evaluator).
    `store` is a RunStore or the path of one (opened by `start`). A new run (`run_id` None) is
    created in it first, with the pending samples; a resumed run keeps its id and `prior` counts
    the rows it already has. `close_judge` closes the judge at the end, for a judge built for this
    run alone. `batch_poll` (seconds) makes it a Batch API run (evaluator/batching.py), and
    `batch_status` then says how its batches are doing.
    """

    def __init__(self, evaluator: RAGEvaluator, pending: Pending, *, dataset_name: str,
                 settings: Optional[Dict[str, Any]] = None, store: Union[RunStore, str, os.PathLike, None] = None,
                 run_id: Optional[str] = None, prior: int = 0, max_workers: int = 1,
                 close_judge: bool = False, batch_poll: Optional[float] = None,
                 target: Optional[TargetConfig] = None) -> None:
        if target is not None and batch_poll is not None:
            raise RagmeterError("a run cannot both call a target and send its judge calls as a batch: run the "
                                "target first, then score its saved answers with --rescore RUN_ID --batch")
        self.evaluator, self.pending = evaluator, list(pending)
        self.target = target  # the user's pipeline, called for each row it has not answered yet
        # TargetConfigError now, not mid-run; a conversation's row gets the target that takes the history.
        self._target = row_target(target, [s for _, s in self.pending]) if target is not None else None
        self.dataset_name, self.settings = dataset_name, dict(settings or {})
        if target is not None and run_id is None:  # what the history keeps of it (no header value)
            self.settings["target"] = target.settings(self._target)
        if run_id is None and VERSION_KEY not in self.settings:  # which test set this run scores
            self.settings.update(version_settings(s for _, s in self.pending))
        self.store, self.run_id, self.prior = store, run_id, prior
        self.owner: Optional[str] = None  # who started it (history.default_owner() when None)
        self.project: Optional[str] = None  # the project it is listed under (the dataset name when None)
        self.total = prior + len(self.pending)
        self.done = prior  # rows finished in the whole run, earlier sessions' included
        # rows the target has answered, earlier sessions' included (their answers are in the history)
        self.answered = prior + sum(1 for _, s in self.pending if s.answered)
        self.status: RunStatus = "ready"  # then running, and finally finished, stopped or failed
        self.report: Optional[EvalReport] = None  # set when the run has ended
        self.error: Optional[str] = None
        self.exception: Optional[BaseException] = None  # what ended a failed run, for callers that re-raise
        self.warning: Optional[str] = None
        self.history_error: Optional[str] = None  # the first history write that failed: the run is then not ok
        self.batch_status: Optional[str] = None  # a batch run's last progress line, while it waits
        self._workers, self._close_judge = max_workers, close_judge
        self._batch_poll = batch_poll  # None: direct judge calls; else a Batch API run polled this often
        # Another engine that scores the pending rows instead of this process (runs/ray_run.py), called as
        # every engine is (evaluator/engines): (samples, on_progress=, on_result=, stop=). Set before start.
        self.engine: Optional[Engine] = None
        # False (a worker's runs): `report` keeps no rows; each is in the history, and counted in `tally`
        # as it finishes, so a 100,000-row run is never held whole (issue 28). Set before start.
        self.keep_rows = True
        self.tally = ReportTally()  # this session's finished rows (their figures, not the rows)
        self.summary: Optional[summary_module.RunSummary] = None  # the whole run's, once it has ended (analysis/summary.py)
        self._results: Dict[int, EvalResult] = {}
        self._finished = 0  # rows this session finished
        self._answered_samples: Dict[int, EvalSample] = {}  # the target's answered rows, as saved
        self._writer: Optional[RowWriter] = None  # the history's batched row writes, once the run has an id
        self.detached = False  # another worker owns the run now: its ending is not written from here
        self._sums: Dict[str, List[float]] = {}  # metric -> [sum, count] of this session's scores
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ended_event = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._started: Optional[float] = None
        self._ended: Optional[float] = None
        # Judge usage: the earlier sessions' (stored) and the judge's totals when this session began. The
        # whole run's figure is stored with each batch of rows, so a killed session's calls count on resume.
        self._usage_prior: Dict[str, Any] = {}
        self._usage_start: Dict[str, Any] = {}

    @classmethod
    def new(cls, config: RunConfig, samples: Sequence[EvalSample], *, dataset_name: str,
            store: Union[RunStore, str, os.PathLike, None] = None, api_key: str = "",
            judge: Optional[Judge] = None, target: Optional[TargetConfig] = None,
            owner: Optional[str] = None, project: Optional[str] = None) -> "Run":
        """A run of `samples` as `config` says; `judge` overrides the one config would build.

        `owner` (default: history.default_owner()) and `project` (default: the dataset name) are
        recorded with the run in the history.

        With `target`, each sample's answer comes from calling it (the file needs only questions).
        MetricError (unknown metric, bad rubric) is raised before any judge is built; DatasetError when no
        sample has an answer and no target gives them (a goldens file: every score would be 0 or N/A)."""
        chosen = config.chosen_metrics()
        # A retrieval run (io/trec.py) has no answers and needs none when every metric is a retrieval metric.
        if target is None and samples and not all(parse_name(m.name) for m in chosen) \
                and not any(s.answer.strip() for s in samples):
            raise DatasetError("has no answers (the answer is empty on every row), so there is nothing to score; "
                               "fill in the answers, or give a target that answers each question", file=dataset_name)
        built = judge is None
        judge = config.build_judge(api_key) if judge is None else judge
        run = cls(config.evaluator(judge), list(enumerate(samples)), dataset_name=dataset_name,
                  settings=config.settings(judge), store=store,
                  max_workers=config.workers, close_judge=built, target=target,
                  batch_poll=config.batch_poll if config.batch else None)
        run.owner, run.project = owner, project
        return run

    @classmethod
    def rescore(cls, store: RunStore, run_id: str, config: RunConfig, *, api_key: str = "",
                judge: Optional[Judge] = None) -> "Run":
        """A new run scoring the answers saved in run `run_id` with `config`'s judge; no target is called."""
        info = store.get_run(run_id)
        samples = store.answered_samples(run_id)
        config.chosen_metrics()
        built = judge is None
        judge = config.build_judge(api_key) if judge is None else judge
        settings = config.settings(judge)
        settings["rescored_from"] = run_id
        settings.update({k: info.settings[k] for k in (VERSION_KEY, ROWS_KEY) if k in info.settings})
        if info.settings.get("target"):
            settings["target"] = info.settings["target"]  # where the answers came from
        return cls(config.evaluator(judge), list(enumerate(samples)), dataset_name=info.dataset_name,
                   settings=settings, store=store, max_workers=config.workers, close_judge=built,
                   batch_poll=config.batch_poll if config.batch else None)

    @classmethod
    def resume(cls, store: RunStore, run_id: str, *, api_key: str = "", judge: Optional[Judge] = None,
               config: Optional[RunConfig] = None, target: Optional[TargetConfig] = None,
               target_headers: Sequence[str] = ()) -> "Run":
        """The rest of run `run_id`, scored with its stored settings (or `config`); HistoryError if unknown.

        The key is never stored, so a run with an API judge needs `api_key` (or its environment variable).
        A run with a target calls it again only for rows it never answered; header values were never
        stored, so such a run needs `target_headers` again (TargetConfigError says which).
        """
        info = store.get_run(run_id)
        config = config or RunConfig.from_settings(info.settings)
        config.chosen_metrics()
        pending = store.pending_samples(run_id)
        target = target or _stored_target(info.settings, pending, target_headers)
        built = judge is None
        judge = config.build_judge(api_key) if judge is None else judge
        return cls(config.evaluator(judge), pending, dataset_name=info.dataset_name,
                   settings=info.settings, store=store, run_id=run_id, prior=info.n_done,
                   max_workers=config.workers, close_judge=built, target=target,
                   batch_poll=config.batch_poll if config.batch else None)

    # -- control ----------------------------------------------------------------------------------
    def start(self) -> "Run":
        """Create the run in the history (unless resumed) and start scoring; returns self."""
        if self._thread is not None:
            raise RuntimeError("This run has already been started; create a new Run.")
        self._open_history()
        if isinstance(self.store, RunStore) and self.run_id:
            self._writer = RowWriter(self.store, self.run_id, usage=self._usage_so_far).start()
        self._usage_prior = self._stored_usage() if self.prior else {}
        self._usage_start = judge_usage(self.evaluator.llm)
        self.status, self._started = "running", time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="ragmeter-run", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Finish the samples in flight and start no more; every finished row is kept."""
        self._stop.set()

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for the run to end (at most `timeout` seconds); True when it has ended.

        Waits on an Event, not Thread.join: a Ctrl-C landing inside Thread.join can leave the thread
        looking dead while it still runs (CPython), and the CLI waits here while the user may press it.
        """
        if self._thread is not None:
            self._ended_event.wait(timeout)
        return not self.running

    def detach(self) -> None:
        """Stop, and write no ending: the run's lease passed and another worker may own it now."""
        self.detached = True
        self._stop.set()

    @property
    def lost_rows(self) -> int:
        """Finished rows the history could not store, every try failed."""
        return self._writer.lost if self._writer is not None else 0

    def unsaved_rows(self) -> List[Tuple[int, EvalResult]]:
        """(index, result) of the rows the history could not store, in index order: a run that keeps no rows
        still has these, so its outputs miss none."""
        return sorted(self._writer.unsaved, key=lambda pair: pair[0]) if self._writer is not None else []

    def mark_stopped(self) -> None:
        """Record the run as stopped now, from the calling thread (the user is quitting before it ends)."""
        self.status = "stopped"
        if self._writer is not None:
            self._writer.flush()  # the rows finished so far, before the process goes
        if isinstance(self.store, RunStore) and self.run_id and not self.detached:
            try:
                self.store.finish_run(self.run_id, status="stopped", total_time=self.elapsed())
            except Exception:
                log.warning("could not mark run %s stopped", self.run_id, exc_info=True)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._ended_event.is_set()

    @property
    def stopping(self) -> bool:
        """Stop was asked for (the run may still be finishing the samples in flight)."""
        return self._stop.is_set()

    # -- live figures -----------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since start, frozen when the run ends."""
        if self._started is None:
            return 0.0
        return (self._ended or time.perf_counter()) - self._started

    def eta(self) -> Optional[float]:
        """Seconds left at this session's pace; None before its first row, 0 once every row is done."""
        new = self.done - self.prior
        return self.elapsed() / new * (self.total - self.done) if new else None

    def means(self) -> Dict[str, float]:
        """Running mean of each metric over this session's scored (not skipped) rows."""
        with self._lock:
            return {name: total / n for name, (total, n) in self._sums.items()}

    # -- the thread -------------------------------------------------------------------------------
    def _open_history(self) -> None:
        if self.store is None:
            return
        try:
            if not isinstance(self.store, RunStore):
                self.store = RunStore(self.store)
            if self.run_id is None:
                samples = [s for _, s in self.pending]
                self.run_id = self.store.create_run(dataset_name=self.dataset_name, samples=samples,
                                                    settings=self.settings, owner=self.owner, project=self.project)
                self.pending = list(enumerate(samples))  # the new run's rows are numbered from 0
        except HistoryError as exc:
            self._history_failed(f"This run is not saved to the history: {exc}")
            self.store = None

    def _run(self) -> None:
        try:
            engine = self.engine or self._local_engine()
            report = engine([s for _, s in self.pending], on_progress=self._tally, on_result=self._keep,
                            stop=self._stop)
            self._save_rows()
            self.status = "finished" if self._finished == len(self.pending) else "stopped"
            self.report = self._close(report)
        except JudgeFailed as exc:  # the judge is failing: stopped early, every finished row saved, resumable
            self._save_rows()
            self.status, self.error = "stopped", describe(exc)
            self.report = self._close(exc.report)
        except BaseException as exc:  # a thread has no caller to raise to: the run must end "failed"
            log.exception("run %s failed", self.run_id)
            self._save_rows()
            self.status, self.error, self.exception = "failed", describe(exc), exc
            self._mark(None, None)
            self.report = self._partial_report()
        finally:
            self._ended = time.perf_counter()
            self._release()
            self._ended_event.set()

    def _local_engine(self) -> Engine:
        """The engine of a run nothing placed elsewhere: the Batch API's, the target pipeline's (the target
        answers, then each answer is judged), or the evaluator's own pool."""
        if self._batch_poll is not None:
            return self._score_batch
        if self._target is not None:
            return self._score_with_target
        return partial(self.evaluator.evaluate_dataset, max_workers=self._workers, keep_results=self.keep_rows)

    def _score_with_target(self, samples: List[EvalSample], **callbacks: Any) -> EvalReport:
        assert self.target is not None and self._target is not None  # set together
        return evaluate_with_target(self.evaluator, samples, self._target, policy=self.target.policy,
                                    target_workers=self.target.workers, judge_workers=self._workers,
                                    spec=self.target.spec, on_answer=self._answer, **callbacks)

    def _answer(self, j: int, sample: EvalSample) -> None:
        """on_answer: count it, and save it now so a resume never asks the target for this row again."""
        self.answered += 1
        if isinstance(self.store, RunStore) and self.run_id:
            try:
                self.store.record_answer(self.run_id, self.pending[j][0], sample)
                self._answered_samples[j] = sample
            except Exception as exc:  # a history failure must not lose the run itself
                self._history_failed(f"Some answers could not be saved to the history: {describe(exc)}")
                log.warning("history write failed", exc_info=True)

    def _score_batch(self, samples: List[EvalSample], **callbacks: Any) -> EvalReport:
        """The Batch API engine; a run stopped while its batches run ends with no rows and resumes later."""
        from ..scoring.batching import batch_client, evaluate_batch  # only batch runs need it
        from ..judges.batch import describe_statuses

        def on_status(statuses: Any) -> None:
            self.batch_status = describe_statuses(statuses)

        self.batch_status = BATCH_PREPARING
        store = self.store if isinstance(self.store, RunStore) else None
        client = batch_client(self.evaluator, poll_interval=self._batch_poll or 0.0)
        return evaluate_batch(self.evaluator, self.pending, client, store=store, run_id=self.run_id,
                              on_status=on_status, **callbacks)

    def _tally(self, done: int, total: int, result: EvalResult) -> None:
        with self._lock:
            for name, ms in result.metric_scores().items():
                if not ms.skipped:
                    cell = self._sums.setdefault(name, [0.0, 0])
                    cell[0] += ms.score
                    cell[1] += 1
            self.done = self.prior + done

    def _keep(self, j: int, result: EvalResult) -> None:
        """on_result: keep the row, and hand it to the batched writer (saved within ~0.5 s)."""
        index = self.pending[j][0]
        with self._lock:
            self._finished += 1
            self.tally.add(index, result)
        if self.keep_rows:
            self._results[index] = result
        if self._writer is not None:
            # The same object as the sample stored (at create, or as the target answered it): not written again.
            own = result.sample is self.pending[j][1] or result.sample is self._answered_samples.get(j)
            self._writer.add(index, result, own)

    def _save_rows(self) -> None:
        """Write every row still waiting; rows the history refused make the run's verdict say how many."""
        if self._writer is None:
            return
        self._writer.close()
        if self._writer.message:
            self.history_error = self.warning = self._writer.message

    def _stored_usage(self) -> Dict[str, Any]:
        try:
            if isinstance(self.store, RunStore) and self.run_id:
                return self.store.stored_usage(self.run_id)
        except HistoryError:
            pass
        return {}

    def _usage_so_far(self) -> Optional[Dict[str, Any]]:
        """The whole run's judge usage so far (earlier sessions' plus this one's); None before any call."""
        session = usage_delta(self._usage_start, judge_usage(self.evaluator.llm))
        if not any(isinstance(v, (int, float)) and v for v in session.values()):
            return None
        return add_usage(self._usage_prior, session)

    def _close(self, report: EvalReport) -> EvalReport:
        """Record the run's end and its summary. A resumed run's figures are the whole run's, its rows read
        back from the history a page at a time (and its report too, unless it keeps no rows)."""
        if not self.keep_rows:
            report = EvalReport(total_time=report.total_time, usage=dict(report.usage or {}))  # the rows are stored
        if not self.prior or not isinstance(self.store, RunStore) or not self.run_id:
            self.tally.total_time, self.tally.usage = report.total_time, dict(report.usage or {})
            self._mark(report.total_time, report.usage or None, self.tally)
            return report
        total_time = (self.store.get_run(self.run_id).total_time or 0.0) + report.total_time
        # The usage stored now holds this session's calls in part (saved row by row): add to what it was.
        usage = add_usage(self._usage_prior, report.usage or {})
        if STOPPED_KEY not in (report.usage or {}):  # an earlier session's judge stop is over: this one went on
            usage.pop(STOPPED_KEY, None)
        whole = summaries.tally_of_store(self.store, self.run_id, total_time)
        whole.usage = usage
        self._mark(total_time, usage or None, whole)
        if not self.keep_rows:
            return EvalReport(total_time=total_time, usage=usage)
        full = self.store.load_report(self.run_id)
        full.total_time, full.usage = total_time, usage
        return full

    def _mark(self, total_time: Optional[float], usage: Optional[Dict[str, Any]],
              tally: Optional[ReportTally] = None) -> None:
        """Keep the run's summary (`tally`'s: None for a run that failed) and write its ending to the history."""
        ending = None
        if tally is not None:
            ending = from_decision(tally.decision(), history_error=self.history_error)
            self.summary = summary_module.of_tally(tally, settings=self.settings, verdict=ending)
        if not isinstance(self.store, RunStore) or not self.run_id or self.detached:
            return
        try:
            self.store.finish_run(self.run_id, status=self.status, total_time=total_time, usage=usage,
                                  verdict=ending)
        except Exception:
            self._history_failed("The run's final status could not be saved to the history.")
            log.warning("finish_run failed", exc_info=True)
        try:  # none for a run that failed: the first page to open it builds it from the rows that are there
            self.store.save_summary(self.run_id, None if self.summary is None else self.summary.to_dict())
        except Exception:  # the rows are saved: a page builds the summary from them on its first open
            log.warning("save_summary failed", exc_info=True)

    def _history_failed(self, message: str) -> None:
        self.warning = self.warning or message
        self.history_error = self.history_error or message

    @property
    def verdict(self) -> Optional[Verdict]:
        """How the run ended (evaluator/verdict.py), once it has; thresholds are the caller's to add."""
        if self.summary is None or self.running:
            return None
        return from_decision(self.summary.decision.to_dict(), history_error=self.history_error)

    def _partial_report(self) -> EvalReport:
        """What a failed run keeps: its saved rows (earlier sessions' too), else the rows in memory."""
        if not self.keep_rows:
            return EvalReport(total_time=self.elapsed())  # the rows are in the history
        if isinstance(self.store, RunStore) and self.run_id:
            try:
                return self.store.load_report(self.run_id)
            except Exception:
                log.warning("could not read back the failed run %s", self.run_id, exc_info=True)
        return EvalReport([self._results[i] for i in sorted(self._results)], total_time=self.elapsed())

    def _release(self) -> None:
        if isinstance(self.store, RunStore):
            self.store.close()  # this thread's connection
        if self._close_judge:
            close_judge(self.evaluator.llm)


def _stored_target(settings: Dict[str, Any], pending: Pending, headers: Sequence[str]) -> Optional[TargetConfig]:
    """The stored run's target, when some pending row still needs an answer from it."""
    stored = settings.get("target")
    if not stored or all(s.answered for _, s in pending):
        return None
    return TargetConfig.from_settings(stored, headers)


def add_usage(before: Dict[str, Any], now: Dict[str, Any]) -> Dict[str, Any]:
    """Two sessions' judge usage added up (counts add; other values take the latest)."""
    total = dict(before)
    for key, value in now.items():
        old = total.get(key)
        both_numbers = isinstance(value, (int, float)) and isinstance(old, (int, float))
        total[key] = old + value if both_numbers and not isinstance(value, bool) else value
    return total
