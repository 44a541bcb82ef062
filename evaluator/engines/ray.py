"""The Ray Data engine: one dataset scored by many workers with the same `score_frame` as everywhere.

    pip install 'ragmeter[ray]'
    ragmeter evaluate traces.parquet --engine ray --ray-workers 4 -o results.parquet

How a run goes:
1. Read. Parquet is read by the cluster (`ray.data.read_parquet`), block by block. CSV, JSONL and
   JSON are read on the driver by `load_dataset` (same cell rules, errors naming the line) and
   handed to the cluster as numbered frames; convert big files to Parquet.
2. Score. `map_batches(FrameScorer, compute=ActorPoolStrategy(size=N))`: each of the N workers
   builds its own judge from the plain-data config once and reads the API key from its own
   environment; the key never travels.
3. Collect. The driver takes the output frames in input order (`preserve_order`) and streams them
   to one Parquet file, to the run history (so the run opens in the dashboard like any other) and
   to a running summary (means, std, CI, method counts, judge usage).

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
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import DatasetError, MissingExtra
from ..io.frames import ParquetSink, results_from_frame
from ..io.records import CONVERSATION
from ..model import EvalSample
from ..scoring.run_config import RunConfig
from .partition import ROW_COLUMN, UNKNOWN_INDEX, FrameScorer, frame_metrics
from .summary import RunTally

OFFLINE_BATCH = 500  # rows per task offline: big enough to amortise Ray's per-task cost
JUDGE_BATCH_PER_SLOT = 8  # with a judge, batches of 8 rows per concurrent call keep every slot busy

FrameCallback = Callable[[Any], None]


@dataclass
class RayRun:
    """What a finished Ray run produced: the tally of every row, where the rows went, timing."""

    tally: RunTally
    workers: int
    total: int = 0
    rows: int = 0
    elapsed: float = 0.0
    output: Optional[str] = None


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
    """Samples as input rows that `score_frame` turns back into the same samples, numbered by `_row`."""
    import pandas as pd

    rows = []
    for number, s in enumerate(samples, 1):
        row = {"question": s.question, "answer": s.answer, "contexts": list(s.contexts),
               "ground_truth": s.ground_truth, "sample_id": s.sample_id,
               "expected_answer_keywords": s.expected_answer_keywords, "expected_docs": s.expected_docs,
               "category": s.category, "tool_calls": s.tool_calls or None, "expected_tools": s.expected_tools,
               "retrieval_ids": s.retrieval_ids,  # JSON text below: a dict's keys differ from row to row
               "relevance": json.dumps(s.relevance, ensure_ascii=False) if s.relevance else None,
               ROW_COLUMN: number}
        if s.conversation is not None:  # its turns, as JSON text: the worker rebuilds the row from them
            row[CONVERSATION] = json.dumps(s.conversation.to_dict(), ensure_ascii=False, default=str)
        meta = dict(s.metadata or {})
        for metric, label in (meta.pop("human_labels", None) or {}).items():
            meta[f"human_{metric}"] = label
        clash = [k for k in meta if k.casefold() in {c.casefold() for c in row}]
        if clash:
            raise DatasetError(f"column '{clash[0]}' has the name of a sample field; rename it or save the "
                               "dataset as Parquet with only the mapped columns", item=number)
        rows.append({**row, **meta})
    return pd.DataFrame(rows)


def read(data: str, mapping: Optional[Dict[str, Optional[str]]], batch: int) -> Tuple[Any, Optional[Dict], bool]:
    """(dataset, the mapping its rows need, whether they are conversations): Parquet read by the cluster,
    other formats (conversation files too) on the driver."""
    ray = need_ray()
    if Path(data).suffix.lower() == ".parquet" or Path(data).is_dir():
        # Blocks of `batch` rows (streamed, no shuffle) so one big file still feeds every worker.
        ds = ray.data.read_parquet(data)
        return ds.repartition(target_num_rows_per_block=batch), mapping, False
    from ..io.datasets import load_dataset

    samples = load_dataset(data, mapping)
    frame = samples_frame(samples)
    chunks = [frame.iloc[i:i + batch] for i in range(0, len(frame), batch)]
    # The frame already has the canonical column names.
    return ray.data.from_pandas(chunks), None, any(s.conversation is not None for s in samples)


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
                          fn_constructor_kwargs={"mapping": mapping, "metrics": metrics}, udf_modifying_row_count=False)


def number_rows(frame: Any, start: int) -> Any:
    """Rows a partition could not number get their position in the output, and "row-<n>" ids."""
    unknown = frame["index"] == UNKNOWN_INDEX
    if unknown.any():
        frame = frame.copy()
        positions = range(start, start + len(frame))
        frame.loc[unknown, "index"] = [p for p, u in zip(positions, unknown) if u]
        no_id = unknown & frame["sample_id"].isna()
        frame.loc[no_id, "sample_id"] = [f"row-{i + 1}" for i in frame.loc[no_id, "index"]]
    return frame


def batch_size(config: RunConfig, workers: int) -> int:
    if config.offline:
        return OFFLINE_BATCH
    return max(1, per_worker(config, workers).max_workers) * JUDGE_BATCH_PER_SLOT


def run_ray(data: str, config: RunConfig, *, workers: int = 2, address: Optional[str] = None,
            mapping: Optional[Dict[str, Optional[str]]] = None, output: Optional[str] = None,
            on_start: Optional[Callable[[int], None]] = None, on_frame: Optional[FrameCallback] = None,
            batch: Optional[int] = None) -> RayRun:
    """Score `data` on Ray with `workers` scoring workers; stream rows to `output` (.parquet) and `on_frame`.

    `on_start(total)` runs once the row count is known, before scoring; `on_frame(frame)` gets each
    results frame in input order (the CLI saves them to the history and draws the progress).
    `batch` is the rows per task (default: 500 offline, 8 per concurrent judge call otherwise).
    A local cluster started here is shut down at the end; one we joined is left running.
    """
    started = connect(address, workers)
    start = time.perf_counter()
    try:
        batch = batch or batch_size(config, workers)
        ds, worker_mapping, conversations = read(data, mapping, batch)
        run = RayRun(RunTally(), workers, total=ds.count(), output=output)
        if on_start is not None:
            on_start(run.total)
        metrics = frame_metrics(config, conversations)
        with ParquetSink(output, metrics) if output else nullcontext() as sink:
            for frame in scored(ds, config, worker_mapping, workers, batch, metrics).iter_batches(
                    batch_format="pandas", batch_size=None):
                frame = number_rows(frame, run.rows)
                run.rows += len(frame)
                run.tally.add(frame)
                if sink is not None:
                    sink.write(frame)
                if on_frame is not None:
                    on_frame(frame)
        run.elapsed = time.perf_counter() - start
        return run
    finally:
        if started:
            need_ray().shutdown()


def history_rows(frame: Any) -> List[Any]:
    """(index, result) pairs of a results frame, for `RunStore.record_results`."""
    return list(results_from_frame(frame))
