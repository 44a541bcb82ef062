"""Results as a table: one row per sample, every metric's details in columns, and Parquet files.

This is the form the distributed engines exchange (`score_frame` returns it; Ray streams it to
Parquet) and the form `results_parquet` exports. It is lossless: `results_from_frame` gives back
the results that `results_frame` was made from, sample text included.

Columns, in order:
    index, sample_id, category, question, answer, contexts (list), ground_truth,
    expected_answer_keywords (list), expected_docs (list), metadata (JSON text), sample_more (JSON
    text: the sample's other fields, such as tool calls and a target's latency), overall, elapsed_sec,
    then for each metric M of the run, in the run's order: M (score; null when skipped or absent),
    M_method (null when the sample has no such metric), M_llm_score, M_heuristic_score,
    M_reasoning, M_error,
    then `metrics` (JSON text: every MetricScore in full, raw replies and verdicts included; what
    reading back uses) and the row's judge usage: judge_calls, cache_hits, prompt_tokens,
    completion_tokens, judge_retries, judge_failures (summing a column gives the run's total).

pandas and pyarrow are imported on first use: the core library needs neither.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..errors import MissingExtra
from ..model import EvalResult, EvalSample
from .records import result_from_record, result_to_record

SAMPLE_COLUMNS = ("index", "sample_id", "category", "question", "answer", "contexts", "ground_truth",
                  "expected_answer_keywords", "expected_docs", "metadata", "sample_more")
METRIC_PARTS = ("method", "llm_score", "heuristic_score", "reasoning", "error")
USAGE_COLUMNS = ("judge_calls", "cache_hits", "prompt_tokens", "completion_tokens", "judge_retries",
                 "judge_failures")
_LIST_COLUMNS = ("contexts", "expected_answer_keywords", "expected_docs")
# Record keys that have columns of their own (or are rebuilt): the rest go to `sample_more`.
_ROW_KEYS = set(SAMPLE_COLUMNS) | {"elapsed_sec", "overall", "metrics"}
_FLOAT_PARTS = ("llm_score", "heuristic_score")


def result_columns(metrics: Sequence[str]) -> List[str]:
    """Every column of a results frame for a run scoring `metrics`, in order."""
    columns = list(SAMPLE_COLUMNS) + ["overall", "elapsed_sec"]
    for name in metrics:
        columns += [name] + [f"{name}_{part}" for part in METRIC_PARTS]
    return columns + ["metrics"] + list(USAGE_COLUMNS)


def _need(module: str) -> Any:
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        raise MissingExtra(f"Parquet and data frames need pandas and pyarrow: "
                           f"pip install 'ragmeter[parquet]' (no module {module!r})") from None


# -- results -> rows ------------------------------------------------------------------------------
def result_row(index: int, result: EvalResult, metrics: Sequence[str],
               usage: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """One result as a results-frame row (see the module docstring)."""
    record = result_to_record(result, index)
    s = result.sample or EvalSample("", "", [])
    row: Dict[str, Any] = {
        "index": index, "sample_id": result.sample_id, "category": s.category, "question": s.question,
        "answer": s.answer, "contexts": list(s.contexts), "ground_truth": s.ground_truth,
        "expected_answer_keywords": s.expected_answer_keywords, "expected_docs": s.expected_docs,
        "metadata": json.dumps(s.metadata or {}, ensure_ascii=False),
        "sample_more": json.dumps({k: v for k, v in record.items() if k not in _ROW_KEYS}, ensure_ascii=False),
        "overall": result.overall_score(), "elapsed_sec": float(result.elapsed_sec),
    }
    for name in metrics:
        detail = record["metrics"].get(name) or {}
        row[name] = detail.get("score")
        row.update({f"{name}_{part}": detail.get(part) for part in METRIC_PARTS})
    row["metrics"] = json.dumps(record["metrics"], ensure_ascii=False)
    row.update({column: int((usage or {}).get(column, 0)) for column in USAGE_COLUMNS})
    return row


def results_frame(results: Iterable[Tuple[int, EvalResult]], metrics: Sequence[str]) -> Any:
    """A pandas DataFrame with one row per (index, result), columns as in the module docstring."""
    pd = _need("pandas")
    return pd.DataFrame([result_row(i, r, metrics) for i, r in results], columns=result_columns(metrics))


# -- rows -> results ------------------------------------------------------------------------------
def plain(value: Any) -> Any:
    """A cell as plain Python: numpy arrays become lists, numpy scalars Python numbers, NaN/NA None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy arrays and scalars; lists inside arrays become lists too
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is not None and type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def result_from_row(row: Dict[str, Any]) -> Tuple[int, EvalResult]:
    """(index, result) from one results-frame row (cells may still be numpy values)."""
    row = {k: plain(row[k]) for k in SAMPLE_COLUMNS + ("elapsed_sec", "metrics")}
    record = dict(row, metadata=json.loads(row.get("metadata") or "{}"), metrics=json.loads(row["metrics"]),
                  **json.loads(row.get("sample_more") or "{}"))
    return int(row["index"]), result_from_record(record)


def results_from_frame(frame: Any) -> Iterator[Tuple[int, EvalResult]]:
    """(index, result) for every row of a results frame, in row order."""
    for row in frame.to_dict("records"):
        yield result_from_row(row)


def metric_columns(frame: Any) -> List[str]:
    """The metrics a results frame has columns for, in order."""
    return [c[:-len("_method")] for c in frame.columns if c.endswith("_method") and c[:-len("_method")] in frame]


# -- Parquet -------------------------------------------------------------------------------------
def parquet_schema(metrics: Sequence[str]) -> Any:
    """The pyarrow schema of a results table (explicit, so an all-null column still has a type)."""
    pa = _need("pyarrow")
    text, number, texts = pa.string(), pa.float64(), pa.list_(pa.string())
    types = {"index": pa.int64(), "overall": number, "elapsed_sec": number}
    types.update({c: texts for c in _LIST_COLUMNS})
    types.update({c: pa.int64() for c in USAGE_COLUMNS})
    for name in metrics:
        types[name] = number
        types.update({f"{name}_{p}": number for p in _FLOAT_PARTS})
    return pa.schema([(c, types.get(c, text)) for c in result_columns(metrics)])


def frame_table(frame: Any, metrics: Sequence[str]) -> Any:
    """A results DataFrame as a pyarrow Table with the results schema."""
    pa = _need("pyarrow")
    return pa.Table.from_pandas(frame[result_columns(metrics)], schema=parquet_schema(metrics),
                                preserve_index=False)


class ParquetSink:
    """Appends results frames to one Parquet file as they arrive (one row group per frame)."""

    def __init__(self, path: str | Path, metrics: Sequence[str]) -> None:
        pq = _need("pyarrow.parquet")
        self.path, self.metrics = Path(path), list(metrics)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rows = 0
        self._writer = pq.ParquetWriter(str(self.path), parquet_schema(metrics), compression="zstd")

    def write(self, frame: Any) -> None:
        self._writer.write_table(frame_table(frame, self.metrics))
        self.rows += len(frame)

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> "ParquetSink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def results_parquet(results: Iterable[Tuple[int, EvalResult]], path: str | Path, metrics: Sequence[str]) -> int:
    """Write (index, result) pairs to a Parquet file; returns the number of rows written."""
    with ParquetSink(path, metrics) as sink:
        sink.write(results_frame(results, metrics))
    return sink.rows


def parquet_bytes(results: Iterable[Tuple[int, EvalResult]], metrics: Sequence[str]) -> bytes:
    """(index, result) pairs as the bytes of a Parquet file (for downloads)."""
    import io

    pq = _need("pyarrow.parquet")
    buffer = io.BytesIO()
    pq.write_table(frame_table(results_frame(results, metrics), metrics), buffer, compression="zstd")
    return buffer.getvalue()


def read_results_parquet(path: str | Path) -> List[Tuple[int, EvalResult]]:
    """The (index, result) pairs of a results Parquet file, in index order."""
    pq = _need("pyarrow.parquet")
    frame = pq.read_table(str(path)).to_pandas()
    return sorted(results_from_frame(frame), key=lambda pair: pair[0])
