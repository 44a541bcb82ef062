"""The Ray engine: a Run's rows scored by a pool of Ray Data workers, with the same `score_frame` as everywhere.

    pip install 'ragmeter[ray]'
    ragmeter evaluate data.jsonl --engine ray --ray-workers 4 -o results.json

Ray is an engine under `Run` (evaluator/runs/run.py), never a second way to run: the file is read, stored,
resumed, re-scored and written exactly as for the local engine; only the scoring of the pending rows moves
(`score_on_ray`, which runs/ray_run.RayEngine sets as the Run's engine). How the scoring goes:
1. The pending rows become one numbered input frame (`samples_frame`: each whole sample, every field), cut
   into batches.
2. `map_batches(FrameScorer, compute=ActorPoolStrategy(...))`: each worker builds its own judge from the
   plain-data config once and reads the API key from its own environment; the key never travels.
3. The driver takes the results frames in input order (`preserve_order`) and hands each row to the one
   per-row loop (scoring/passes.py) and so to the Run's own callbacks (history, progress, means), checking
   its stop flag and the judge's health between frames. Each worker watches its own judge calls; once its
   judge is dead its rows fail at once, each marked with why, and the driver stops as a local run does.

The judge budget is global: the config's concurrency is the run's total, and each worker gets
total // N of it (at least 1). Cached replies are shared: every worker opens the config's judge
cache, one SQLite file in WAL mode, which processes on one machine share safely (give a node-local
path per machine on a multi-node cluster; SQLite must not be shared over NFS).

A worker that dies mid-run is restarted and its batch retried by Ray Data (actors have unlimited
restarts and task retries); output order is kept, so a retried batch lands once, in its place.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import queue
import re
import threading
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .. import errors
from ..errors import JudgeFailed, MissingExtra, RagmeterError
from ..io.frames import results_from_frame
from ..judges.health import JudgeHealth, failed_from
from ..model import EvalReport, EvalResult, EvalSample
from ..scoring.passes import ScoringPass
from ..scoring.run_config import RunConfig
from .partition import ROW_COLUMN, SAMPLE_COLUMN, STOPPED_COLUMN, FrameScorer, frame_metrics, sample_json
from .summary import RunTally

OFFLINE_BATCH = 500  # rows per task offline: big enough to amortise Ray's per-task cost
JUDGE_BATCH_PER_SLOT = 8  # with a judge, batches of 8 rows per concurrent call keep every slot busy

POLL = 0.2  # seconds between looks at the stop flag while the next frame is on its way
_END = object()  # the pump's last item: every frame was read


def need_ray() -> Any:
    """The ray module, or MissingExtra saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401  (the Data library is an extra of the ray package)
    except ImportError:
        raise MissingExtra("The Ray engine needs Ray Data: pip install 'ragmeter[ray]'") from None
    return ray


def connect(address: Optional[str], workers: int) -> bool:
    """Join the cluster at `address` ("auto", "ray://host:10001"), or start a local one; True if started here.

    Joining ships ragmeter's own code with the job (`py_modules`), so the nodes need only Ray,
    pandas and pyarrow; a local cluster gets one CPU per scoring worker and one for reading.
    """
    ray = need_ray()
    if not ray.is_initialized():
        options: Dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   "logging_level": logging.WARNING}
        if address:
            package = Path(__file__).resolve().parents[1]
            ray.init(address=address, runtime_env={"py_modules": [str(package)]}, **options)
        else:
            ray.init(num_cpus=max(1, workers) + 1, **options)  # one CPU more for the read tasks
        started = True
    else:
        started = False
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the library prints nothing; the CLI shows its own progress
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    return started


def per_worker(config: RunConfig, workers: int) -> RunConfig:
    """The config each worker gets: the run's judge concurrency divided among the workers."""
    total = max(1, int(config.workers))
    return dataclasses.replace(config, max_workers=max(1, total // max(1, workers)))


def samples_frame(samples: List[EvalSample]) -> Any:
    """Samples as input rows that `score_frame` turns back into the same samples (every field, as JSON
    text: `partition.sample_json`), numbered by `_row`."""
    import pandas as pd

    return pd.DataFrame({SAMPLE_COLUMN: [sample_json(s) for s in samples],
                         ROW_COLUMN: list(range(1, len(samples) + 1))})


def scored(ds: Any, config: RunConfig, mapping: Optional[Dict[str, Optional[str]]], workers: int, batch: int,
           metrics: List[str]) -> Any:
    """The lazy scored dataset: a pool of up to `workers` FrameScorers, one CPU each.

    The pool grows from one worker, not starts at `workers`: a fixed pool holding every CPU of a
    small cluster leaves none for the Parquet read tasks that feed it, and the run never starts.
    """
    ray = need_ray()
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    return ds.map_batches(FrameScorer, batch_format="pandas", batch_size=batch,
                          compute=ray.data.ActorPoolStrategy(min_size=1, max_size=workers), num_cpus=1,
                          fn_constructor_args=(per_worker(config, workers),),
                          fn_constructor_kwargs={"mapping": mapping, "metrics": metrics, "stops": True}, udf_modifying_row_count=False)


def batch_size(config: RunConfig, workers: int) -> int:
    if config.offline:
        return OFFLINE_BATCH
    return max(1, per_worker(config, workers).max_workers) * JUDGE_BATCH_PER_SLOT


def history_rows(frame: Any) -> List[Any]:
    """(index, result) pairs of a results frame, for `RunStore.record_results`."""
    return list(results_from_frame(frame))


def score_on_ray(config: RunConfig, workers: int, samples: List[EvalSample], *,
                 on_progress: Callable[[int, int, EvalResult], None], on_result: Callable[[int, EvalResult], None],
                 stop: threading.Event, pumps: Optional[List[threading.Thread]] = None) -> EvalReport:
    """Score `samples` on the cluster through the one per-row loop (scoring/passes.py), as `evaluate_dataset`
    does here: the same callbacks per finished row (its position in `samples`), the same stop flag (checked
    between frames), a report in input order, and the same early stop on a dead judge. Each worker watches
    its judge; the first that finds it dead drops its rows saying why, the driver's health adopts that
    verdict, reads no more frames (which ends the execution) and the pass raises JudgeFailed.
    `pumps` gets the thread reading the cluster while it runs (see `frames`)."""
    ray = need_ray()
    batch = batch_size(config, workers)
    frame = samples_frame(samples)  # numbered 1..n: each results row's index is its position in `samples`
    metrics = frame_metrics(config, any(s.conversation is not None for s in samples))
    ds = ray.data.from_pandas([frame.iloc[i:i + batch] for i in range(0, len(frame), batch)])
    tally = RunTally()  # the judge usage, summed from the frames' columns (dropped rows' calls too)
    scoring = ScoringPass(len(samples), health=JudgeHealth(), on_progress=on_progress, on_result=on_result,
                          stop=stop, usage=lambda: {} if config.offline else dict(tally.judge_usage()))
    try:
        for out in frames(scored(ds, config, None, workers, batch, metrics), lambda: not scoring.going(),
                          pumps=pumps):
            tally.add(out)
            for j, outcome in row_outcomes(out, samples, scoring):
                scoring.add(j, outcome)
    except ray.exceptions.RayError as exc:  # a worker's traceback in its text: logged, the user reads one line
        raise ray_failure(exc) from exc
    return scoring.report()


def row_outcomes(frame: Any, samples: List[EvalSample],
                 scoring: ScoringPass) -> Iterator[Tuple[int, Callable[[], EvalResult]]]:
    """(position, outcome) of each row of a results frame, for `ScoringPass.add`: the result, carrying the
    sample as stored (not its round trip through the frame), or for a row the worker's dead judge dropped,
    the driver's health adopting why and the JudgeFailed that leaves the row pending."""
    for (j, result), stopped in zip(history_rows(frame), frame[STOPPED_COLUMN].tolist()):
        if stopped:
            yield j, partial(_dropped, scoring, failed_from(json.loads(stopped)))
        else:
            result.sample = samples[j]
            yield j, partial(_kept, result)


def _kept(result: EvalResult) -> EvalResult:
    return result


def _dropped(scoring: ScoringPass, failure: JudgeFailed) -> EvalResult:
    assert scoring.health is not None  # the driver's pass always watches
    scoring.health.adopt(failure)
    raise failure


def frames(ds: Any, stopping: Callable[[], bool], poll: float = POLL,
           pumps: Optional[List[threading.Thread]] = None) -> Iterator[Any]:
    """The scored frames in input order, until every one is read or `stopping()` holds (Stop, a dead judge).

    A pump thread reads the cluster, so a stop is seen within `poll` s even while the next frame is
    minutes away; frames already scored when it comes are still given (their judge calls are paid).
    The pump closes the dataset's iterator, which ends its execution, when it gets its next frame; it is
    in `pumps` until then.
    """
    items: "queue.Queue[Any]" = queue.Queue()
    gone = threading.Event()

    def pump() -> None:
        batches = iter(ds.iter_batches(batch_format="pandas", batch_size=None))
        try:
            for item in batches:
                items.put(item)
                if gone.is_set():
                    break
            items.put(_END)
        except BaseException as exc:  # handed to the reading thread, which raises it
            items.put(exc)
        finally:
            close = getattr(batches, "close", None)
            if callable(close):
                close()
            if pumps is not None:
                pumps.remove(reader)

    reader = threading.Thread(target=pump, name="ragmeter-ray-frames", daemon=True)
    if pumps is not None:
        pumps.append(reader)
    reader.start()
    try:
        while True:
            try:
                item = items.get(block=not stopping(), timeout=poll)
            except queue.Empty:
                if stopping():
                    return
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        gone.set()


# A Ray error's text carries the worker's traceback; its last line of ragmeter's own says what to do.
_OWN_ERROR = re.compile(r"evaluator\.errors\.(\w+): (.+)")


def ray_failure(exc: BaseException) -> RagmeterError:
    """A Ray error as the user reads it: the ragmeter error a Ray worker raised (a judge that cannot
    start on a node), else the error's first line."""
    found = _OWN_ERROR.findall(str(exc))
    if found:
        name, message = found[-1]
        kind = getattr(errors, name, RagmeterError)
        if not (isinstance(kind, type) and issubclass(kind, RagmeterError)):
            kind = RagmeterError
        try:
            return kind(f"on the Ray cluster: {message}")
        except TypeError:  # an error class with other arguments
            return RagmeterError(f"on the Ray cluster: {name}: {message}")
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return RagmeterError(f"the Ray cluster could not score this run: {type(exc).__name__}: {first}")
