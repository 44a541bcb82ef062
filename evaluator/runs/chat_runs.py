"""Conversation runs: the `Run` path (history, stop, resume, re-score, verdict) for multi-turn chats.

    run = ConversationRun.new(RunConfig(), conversations, dataset_name="chats.jsonl", store=RunStore()).start()
    ConversationRun.resume(store, run_id).start()       # the conversations without a result
    ConversationRun.rescore(store, run_id, config)      # the recorded replies, another judge

Each conversation is one row of the run (chat_records.py says how it is stored). Conversations
are scored a few at a time (as many as the run has workers; their turns in parallel): each group's
results are saved as soon as it is scored, so a stopped or killed run keeps every finished
conversation. With a target, each conversation is replayed first (targets/replay.py) and its
recording saved at once, so a resumed run never asks the target again for a conversation it
recorded; one cut short by a failure keeps its error, like a single-turn row.
"""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Type, Union

from ..store.chat_records import conversation_of, report_of
from ..scoring.conversations import ConversationReport, conversation_sample, evaluate_conversations
from ..conversation import Conversation
from ..errors import JudgeFailed, RagmeterError
from ..store.history import RunStore
from ..judges.base import Judge
from ..model import EvalReport, EvalResult, EvalSample
from .run import Pending, Run, RunConfig, add_usage
from ..targets import TargetConfig
from ..targets.base import Target
from ..targets.replay import chat_target, replay

KIND = "conversations"  # the run settings' "kind" of a conversation run


class ConversationRun(Run):
    """A `Run` whose rows are conversations (ConversationSamples); `target` replays their user turns."""

    def __init__(self, evaluator: Any, pending: Pending, *, target: Optional[TargetConfig] = None,
                 **options: Any) -> None:
        if options.get("batch_poll") is not None:
            raise RagmeterError("conversations are not scored through the Batch API yet: drop --batch")
        super().__init__(evaluator, pending, **options)
        self.target = target
        self._chat: Optional[Target] = chat_target(target) if target is not None else None
        self.settings["kind"] = KIND
        if target is not None:
            self.settings["target"] = target.settings(self._chat)
        self.answered = self.prior + sum(1 for _, s in self.pending if self._recorded(s))

    @classmethod
    def new(cls, config: RunConfig, samples: Sequence[Union[Conversation, EvalSample]], *, dataset_name: str,
            store: Union[RunStore, str, Any, None] = None, api_key: str = "", judge: Optional[Judge] = None,
            target: Optional[TargetConfig] = None, owner: Optional[str] = None,
            project: Optional[str] = None) -> "ConversationRun":
        """A run of `samples`: Conversations, or their ConversationSamples (chat_scoring.conversation_sample)."""
        config.chosen_metrics()
        rows = [conversation_sample(s) if isinstance(s, Conversation) else s for s in samples]
        built = judge is None
        judge = config.build_judge(api_key) if judge is None else judge
        run = cls(config.evaluator(judge), list(enumerate(rows)), dataset_name=dataset_name,
                  settings=config.settings(judge), store=store, max_workers=config.workers,
                  close_judge=built, target=target)
        run.owner, run.project = owner, project
        return run

    @classmethod
    def resume(cls, store: RunStore, run_id: str, *, api_key: str = "", judge: Optional[Judge] = None,
               config: Optional[RunConfig] = None, target: Optional[TargetConfig] = None,
               target_headers: Sequence[str] = ()) -> "ConversationRun":
        """The conversations of run `run_id` without a result; its target replays only those it never recorded."""
        info = store.get_run(run_id)
        config = config or RunConfig.from_settings(info.settings)
        config.chosen_metrics()
        pending = store.pending_samples(run_id)
        stored = info.settings.get("target")
        if target is None and stored:
            target = TargetConfig.from_settings(stored, target_headers)
        built = judge is None
        judge = config.build_judge(api_key) if judge is None else judge
        return cls(config.evaluator(judge), pending, dataset_name=info.dataset_name, settings=info.settings,
                   store=store, run_id=run_id, prior=info.n_done, max_workers=config.workers,
                   close_judge=built, target=target)

    @classmethod
    def rescore(cls, store: RunStore, run_id: str, config: RunConfig, *, api_key: str = "",
                judge: Optional[Judge] = None) -> "ConversationRun":
        """A new run scoring the conversations recorded in run `run_id` with `config`'s judge; no target is called."""
        info = store.get_run(run_id)
        samples = store.answered_samples(run_id)
        config.chosen_metrics()
        built = judge is None
        judge = config.build_judge(api_key) if judge is None else judge
        settings = dict(config.settings(judge), rescored_from=run_id)
        if info.settings.get("target"):
            settings["target"] = info.settings["target"]  # where the replies came from
        return cls(config.evaluator(judge), list(enumerate(samples)), dataset_name=info.dataset_name,
                   settings=settings, store=store, max_workers=config.workers, close_judge=built)

    # -- scoring ----------------------------------------------------------------------------------
    def _recorded(self, sample: EvalSample) -> bool:
        conv = conversation_of(sample)
        return self.target is not None and conv is not None and conv.recorded_by == self.target.spec

    def _score(self, samples: List[EvalSample]) -> EvalReport:
        start = time.perf_counter()
        results: List[EvalResult] = []
        usage: Dict[str, Any] = {}
        size = max(1, self._workers)
        for low in range(0, len(samples), size):
            if self._stop.is_set():
                break
            group = [self._replayed(low + k, s) for k, s in enumerate(samples[low:low + size])]
            try:
                part = evaluate_conversations(self.evaluator, group, max_workers=self._workers)
            except JudgeFailed as exc:  # the finished conversations are saved; the group in flight is not
                exc.report = report_of(results, time.perf_counter() - start,
                                       add_usage(usage, getattr(exc.report, "usage", None) or {}))
                raise
            usage = add_usage(usage, part.usage)
            for k, result in enumerate(part.results):
                results.append(result)
                self._keep(low + k, result)
                self._tally(len(results), len(samples), result)
        return report_of(results, time.perf_counter() - start, usage)

    def _replayed(self, j: int, sample: EvalSample) -> Conversation:
        """The conversation to score: replayed against the target (and saved) unless already recorded."""
        conv = conversation_of(sample)
        if conv is None:
            raise RagmeterError(f"row {j + 1} of this run is not a conversation; score it as a single-turn run")
        if self._chat is None or self.target is None or self._recorded(sample):
            return conv
        done = replay(conv, self._chat, self.target.spec, self.target.policy, self._stop)
        self._answer(j, conversation_sample(done))
        return done

    def _close(self, report: EvalReport) -> EvalReport:
        closed = super()._close(report)
        if isinstance(closed, ConversationReport):
            return closed
        return report_of(closed.results, closed.total_time, closed.usage)  # a resumed run read back


def run_class(settings: Dict[str, Any]) -> Type[Run]:
    """The Run class that resumes or re-scores a stored run with these settings."""
    return ConversationRun if settings.get("kind") == KIND else Run


def is_conversation_rows(samples: Sequence[EvalSample]) -> bool:
    """Whether these are a conversation dataset's rows (what ConversationRun scores)."""
    return bool(samples) and conversation_of(samples[0]) is not None


__all__ = ["ConversationRun", "KIND", "is_conversation_rows", "run_class"]
