"""`score_frame`: the one partition function every engine calls (Ray, Spark, Dask, or none).

Rows in, one results row per sample out (see `io.frames` for the columns). It is pure in the way
a distributed engine needs: it depends only on the frame and on `config`, a plain-data run
configuration that travels to the workers. Each worker builds its own judge from the config and
reads the API key from its own environment (the config names the variable, it never holds the key).

Input columns follow `load_dataset`'s rules (aliases, list cells, human_<metric> labels, other
columns into metadata), so the rows of a file give the same samples either way. One optional
column is reserved: `_row`, the row's 1-based position in the whole dataset; without it a partition
does not know where its rows sit, so `index` is -1 and rows without an id get sample_id None (the
Ray engine numbers them as it collects the output in order).
"""
from __future__ import annotations

import json
import threading
from typing import Any, Dict, List, Optional, Tuple

from ..environment import require_key
from ..errors import JudgeFailed
from ..io.datasets import samples_from_rows
from ..io.frames import USAGE_COLUMNS, plain, result_columns, result_row
from ..io.records import sample_from_record, sample_to_record
from ..judges.base import accepts, call_info, close_judge, is_offline
from ..judges.health import failed_data, failed_from
from ..model import EvalResult, EvalSample
from ..scoring.run_config import RunConfig
from ..scoring.conversations import row_metric_names
from .pool import Pool

ROW_COLUMN = "_row"
SAMPLE_COLUMN = "_sample"  # a Ray input row: the whole EvalSample as JSON text (sample_json)
# A results row the worker's dead judge dropped: why (JudgeFailed as JSON); "" for a row it scored.
STOPPED_COLUMN = "_judge_stopped"
UNKNOWN_INDEX = -1


class CountingJudge:
    """Wraps a judge and counts, per thread, the calls, cache hits and tokens of each sample.

    A sample is scored on one thread, so the counts taken after it are that sample's alone;
    summed over rows they equal the judge's own usage totals. Everything else is the wrapped judge's:
    a call's options (its completion cap, reply schema, repeat index, token probabilities) reach it, so a
    Ray worker asks exactly what a local run asks.
    """

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.offline = is_offline(judge)
        self.name = getattr(judge, "name", type(judge).__name__)
        self._local = threading.local()

    def generate(self, prompt: str, **options: Any) -> str:
        counts = self._counts()
        try:
            reply = self.judge.generate(prompt, **options)
        except Exception:
            counts["judge_failures"] += 1
            raise
        finally:
            info = self.call_info()
            counts["judge_retries"] += int(info.get("retries") or 0)
        if info.get("cached"):
            counts["cache_hits"] += 1
        else:
            counts["judge_calls"] += 1
            counts["prompt_tokens"] += int(info.get("prompt_tokens") or 0)
            counts["completion_tokens"] += int(info.get("completion_tokens") or 0)
        return reply

    def call_info(self) -> dict:
        return call_info(self.judge)

    def accepts_option(self, option: str) -> bool:
        return accepts(self.judge, option)

    def __getattr__(self, name: str) -> Any:
        """count_reply, reply_unusable, caches_prefix (so judge mode auto lays out a Ray worker's calls as a
        local run's), …: the wrapped judge answers."""
        if name == "judge":  # not set yet (a copy being built): no judge to ask
            raise AttributeError(name)
        return getattr(self.judge, name)

    def take(self) -> Dict[str, int]:
        """This thread's counts since the last take(), then reset."""
        counts = self._counts()
        self._local.counts = None
        return counts

    def _counts(self) -> Dict[str, int]:
        counts = getattr(self._local, "counts", None)
        if counts is None:
            counts = self._local.counts = dict.fromkeys(USAGE_COLUMNS, 0)
        return counts


class FrameScorer:
    """Scores frames with one judge built from a `RunConfig`; Ray keeps one per worker between batches.

    The judge reads its key from this process's environment (the variable `config.api_key_env`).
    """

    def __init__(self, config: RunConfig, mapping: Optional[Dict[str, Optional[str]]] = None,
                 metrics: Optional[List[str]] = None, stops: bool = False) -> None:
        self.config, self.mapping = config, mapping
        self.stops = stops  # Ray's: a dead judge's rows marked in STOPPED_COLUMN; else JudgeFailed is raised
        _need_key(config)
        self.judge = CountingJudge(config.build_judge())
        self.evaluator = config.evaluator(self.judge)
        # One health watch for this worker's whole share of the run, as a local run has one: once the judge is
        # dead, the worker's rows fail at once (no request) and each carries why (STOPPED_COLUMN).
        self.evaluator.watch()
        # Every frame gets these columns, in this order (a conversation run's: frame_metrics(..., True)).
        self.metrics = metrics or list(self.evaluator.metric_names)
        self.workers = config.workers

    def __call__(self, df: Any) -> Any:
        import pandas as pd

        numbered = _numbered_samples(df, self.mapping)
        scored = self._score([sample for _, sample in numbered])
        rows = [dict(result_row(UNKNOWN_INDEX if n is None else n - 1, result, self.metrics, usage),
                     **{STOPPED_COLUMN: stopped}) for (n, _), (result, usage, stopped) in zip(numbered, scored)]
        stopped = [row[STOPPED_COLUMN] for row in rows if row[STOPPED_COLUMN]]
        if stopped and not self.stops:  # a dead judge: the reason, not a frame of placeholder rows
            raise failed_from(json.loads(stopped[0]))
        columns = result_columns(self.metrics) + ([STOPPED_COLUMN] if self.stops else [])
        return pd.DataFrame({c: [row[c] for row in rows] for c in columns})

    def _score(self, samples: List[EvalSample]) -> List[Tuple[EvalResult, Dict[str, int], str]]:
        if self.workers <= 1:
            return [self._one(s) for s in samples]
        with Pool(self.workers, "ragmeter-frame") as pool:
            return pool.map(self._one, samples)  # map keeps input order

    def _one(self, sample: EvalSample) -> Tuple[EvalResult, Dict[str, int], str]:
        """The row's result, its judge usage, and "" (scored) or why the dead judge dropped it (JSON)."""
        self.judge.take()
        try:
            result = self.evaluator.evaluate(sample)
        except JudgeFailed as failure:  # a placeholder the driver drops: the row stays pending
            return EvalResult(sample.sample_id, sample=sample), self.judge.take(), json.dumps(failed_data(failure))
        return result, self.judge.take(), ""

    def close(self) -> None:
        close_judge(self.judge.judge)

    def __enter__(self) -> "FrameScorer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _need_key(config: RunConfig) -> None:
    """JudgeConfigError when the variable the run names for its key is unset here: a judge built without
    it would fail every call and score the whole run on heuristic fallbacks."""
    if not config.offline:
        require_key(config.api_key_env, "the judge", "in the environment the Ray nodes start with (each scoring "
                    "worker reads it there; the key never travels)")


def frame_metrics(config: RunConfig, conversations: bool) -> List[str]:
    """The metric columns of a run's results frames: the chosen metrics, or every score a conversation has."""
    chosen = config.chosen_metrics()
    return row_metric_names(chosen) if conversations else [m.name for m in chosen]


def _numbered_samples(df: Any, mapping: Optional[Dict[str, Optional[str]]]) -> List[Tuple[Optional[int], EvalSample]]:
    """(1-based row number or None, sample) for every row: a Ray input frame's whole samples (SAMPLE_COLUMN),
    else the user's columns, read by load_dataset's rules."""
    numbered = _numbered_rows(df)
    if SAMPLE_COLUMN in df.columns:
        return [(n, sample_from_json(row[SAMPLE_COLUMN])) for n, row in numbered]
    samples = samples_from_rows(numbered, mapping, name="data frame")
    return [(n, sample) for (n, _), sample in zip(numbered, samples)]


def sample_json(sample: EvalSample) -> str:
    """The whole sample as JSON text, every field (io.records): what a Ray input row carries."""
    return json.dumps(sample_to_record(sample), ensure_ascii=False, default=str)


def sample_from_json(text: str) -> EvalSample:
    sample = sample_from_record(json.loads(text))
    assert sample is not None  # sample_json wrote one
    return sample


def _numbered_rows(df: Any) -> List[Tuple[Optional[int], Dict[str, Any]]]:
    """(1-based row number or None, row as plain Python) for every row of the frame."""
    names = [str(c) for c in df.columns]
    columns = [[plain(v) for v in df[c].tolist()] for c in df.columns]  # column-wise: 2x faster than to_dict
    out = []
    for values in zip(*columns):
        row = dict(zip(names, values))
        number = row.pop(ROW_COLUMN, None)
        out.append((None if number is None else int(number), row))
    return out


def score_frame(df: Any, config: RunConfig, *, mapping: Optional[Dict[str, Optional[str]]] = None) -> Any:
    """Score every row of a pandas DataFrame; one results row per input row, in input order.

    `config` is a `RunConfig` (plain data: judge kind, model, base URL, the key's variable name,
    language, heuristic set, concurrency, cache file). Builds the judge from it (see FrameScorer),
    scores, closes the judge; JudgeFailed when the judge is dead (its health tripped). Engines that call
    it many times per worker keep a `FrameScorer` instead, so the judge and its cache stay open.
    """
    with FrameScorer(config, mapping) as scorer:
        return scorer(df)
