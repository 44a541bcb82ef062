"""Scoring through the OpenAI Batch API: collect the prompts, submit, wait, replay the replies.

    client = BatchClient(judge)   # judge: an OpenAIJudge
    report = evaluate_batch(RAGEvaluator(judge), list(enumerate(samples)), client, store=store,
                            run_id=run_id, on_status=print_line, on_result=save_row)

Both passes run the evaluator's own scoring (see judges/batch.py), so a batch run scores
exactly as a direct run would with the same replies. With a run history, the batch ids are
saved in the run's settings the moment each batch is created, so a process that is closed
while the batch runs loses nothing: calling `evaluate_batch` again for the same run id polls
the saved batches instead of uploading again.
"""
from __future__ import annotations

import threading
import time
from functools import partial
from typing import Any, List, Optional, Sequence, Tuple

from ..errors import JudgeConfigError
from .evaluation import RAGEvaluator
from ..store.history import RunStore
from ..judges.batch import BatchClient, CollectingJudge, ReplayJudge, StatusCallback
from ..judges.openai import OpenAIJudge
from ..model import EvalReport, EvalSample
from .passes import ScoringPass
from .progress import ProgressCallback, ResultCallback

Pending = Sequence[Tuple[int, EvalSample]]
# Settings keys a batch run keeps in the history.
BATCH_IDS, BATCH_FILES = "batch_ids", "batch_files"


def batch_client(evaluator: RAGEvaluator, **options: Any) -> BatchClient:
    """The BatchClient for the evaluator's judge; JudgeConfigError when it is not an OpenAI judge."""
    if not isinstance(evaluator.llm, OpenAIJudge):
        raise JudgeConfigError("The Batch API needs an OpenAI-compatible judge: pass --model (and --base-url), "
                               "not --offline.")
    return BatchClient(evaluator.llm, **options)


def evaluate_batch(evaluator: RAGEvaluator, pending: Pending, client: BatchClient, *,
                   store: Optional[RunStore] = None, run_id: Optional[str] = None,
                   on_status: Optional[StatusCallback] = None, on_progress: Optional[ProgressCallback] = None,
                   on_result: Optional[ResultCallback] = None,
                   stop: Optional[threading.Event] = None) -> EvalReport:
    """Score `pending` ((index, sample) pairs) through batches, like `RAGEvaluator.evaluate_dataset`.

    The callbacks are evaluate_dataset's (`on_result` gets the position in `pending`), plus
    `on_status(statuses)` after each poll. With `store` and `run_id`, the run's batches are
    saved as soon as they exist, and batches saved earlier are polled instead of submitted
    again; recording the rows is the caller's job (on_result). When `stop` is set while the
    batches run, the report is empty: the batches go on, and a later call picks them up.
    """
    start = time.perf_counter()
    collector = CollectingJudge(client.judge)
    _score_all(evaluator, collector, pending, ScoringPass(len(pending), keep=False))  # its scores are thrown away
    batch_ids = _submit(client, collector, store, run_id)
    statuses = client.wait(batch_ids, on_status, stop) if batch_ids else []
    if statuses is None:
        return EvalReport(total_time=time.perf_counter() - start, usage={BATCH_IDS: batch_ids})
    replay = ReplayJudge(client.judge, client.results(statuses), batch_ids, sent=len(collector.requests))
    scoring = ScoringPass(len(pending), usage=replay.usage, on_progress=on_progress, on_result=on_result)
    scoring.start = start  # the run's time is the whole wait, not the replay's
    _score_all(evaluator, replay, pending, scoring)
    return scoring.report()


def _score_all(evaluator: RAGEvaluator, judge: Any, pending: Pending, scoring: ScoringPass) -> None:
    """One pass over the samples with `judge` in place of the evaluator's judge, one sample at a time
    (the judge numbers each sample's calls, which is what makes custom_ids reproducible); each row's
    callbacks are the pass's, with its position in `pending`."""
    stand_in = evaluator.with_judge(judge)
    for position, (index, sample) in enumerate(pending):
        judge.begin(index)
        scoring.add(position, partial(stand_in.evaluate, sample))


def _submit(client: BatchClient, collector: CollectingJudge, store: Optional[RunStore],
            run_id: Optional[str]) -> List[str]:
    """The run's batch ids: those saved earlier, plus a new batch for each requests file not yet sent."""
    saved = store.get_run(run_id).settings if store is not None and run_id else {}
    batch_ids = list(saved.get(BATCH_IDS) or [])
    if batch_ids and len(batch_ids) >= int(saved.get(BATCH_FILES) or 0):
        return batch_ids  # every requests file was sent before the process was closed
    files = client.chunks(collector.requests)
    for data in files[len(batch_ids):]:
        batch_ids.append(client.submit(data))
        if store is not None and run_id:  # saved at once: a closed process must not submit twice
            store.update_settings(run_id, {BATCH_IDS: batch_ids, BATCH_FILES: len(files)})
    return batch_ids
