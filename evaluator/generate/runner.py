"""Generation: slots from the planner, written and checked by the judge, kept until `n` pass.

    gen = Generation(judge, chunks, GenerateSettings(n=50)).run()   # blocking; or .start() / .stop() / .join()
    gen.items, gen.rejected, gen.attempts, gen.calls, gen.tokens, gen.status, gen.shortfall()

Attempts run `workers` at a time on threads (the judge is thread-safe). No more attempts start once
`n` items are kept or in flight, so a run never pays for surplus items. `max_attempts` (default
3n + 10) caps the judge spend; a kind that keeps failing stops being planned once it used its
share of the cap. The judge is watched like a run's (judges.health): rejected or unreachable first
calls, or a high failure rate, stop the generation with status "failed" and the cause in `error`.
`stop()` lets the attempts in flight finish and starts no more (status "stopped"); what was kept
is kept, and a new Generation given those items as `existing` carries on where it stopped.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..engines.pool import Pool, Task
from ..errors import JudgeError
from ..judges.base import is_offline, judge_usage
from ..judges.health import JudgeHealth, WatchedJudge
from ..text import tokens
from . import gate, prompts
from .chunking import Chunk
from .extractive import MIN_WORDS, capacity, cloze
from .items import OFFLINE_GENERATOR, TestItem
from .kinds import DEFAULT_MIX, KINDS, OFFLINE_KIND
from .plan import Planner, Section, Slot
from .retrieval import LexicalIndex

UNANSWERABLE_TOP_K = 4
AVOID_MAX = 6  # questions already written from a chunk that a new prompt for it lists
Outcome = Tuple[Optional[TestItem], Optional[str]]  # (item, None) or (None, rejection reason)


@dataclass(frozen=True)
class GenerateSettings:
    n: int = 50
    mix: Dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    language: str = "auto"  # en | ar | mix | auto (the language of each anchor chunk)
    max_attempts: int = 0  # 0: 3n + 10
    seed: int = 0
    workers: int = 4

    def attempts_cap(self) -> int:
        return self.max_attempts or 3 * self.n + 10


class _Rejected(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Generation:
    """One generation of up to `settings.n` new items over `chunks` (see the module docstring)."""

    def __init__(self, judge: Any, chunks: Sequence[Chunk], settings: GenerateSettings = GenerateSettings(), *,
                 existing: Sequence[TestItem] = (), only: Optional[Set[Section]] = None,
                 generator: str = "", on_progress: Optional[Callable[["Generation"], None]] = None) -> None:
        self.offline = is_offline(judge)
        self.health = JudgeHealth()
        self.judge = judge if self.offline else WatchedJudge(judge, self.health)
        self.chunks, self.settings, self.existing = list(chunks), settings, list(existing)
        self.index = LexicalIndex(self.chunks)
        mix = {OFFLINE_KIND.name: 1.0} if self.offline else settings.mix
        self.planner = Planner(self.chunks, mix, settings.language, seed=settings.seed, index=self.index, only=only)
        by_id = {c.chunk_id: c for c in self.chunks}
        for item in self.existing:
            self.planner.count(item.kind, [by_id[c] for c in item.chunk_ids if c in by_id])
        self.generator = OFFLINE_GENERATOR if self.offline else (generator or getattr(judge, "name", "judge"))
        self.on_progress = on_progress
        self.items: List[TestItem] = []
        self.rejected: Counter = Counter()
        self.attempts, self.calls = 0, 0
        self.kind_attempts: Counter = Counter()
        self.status = "ready"  # then running; finished, short, stopped or failed
        self.error: Optional[str] = None
        self.started: Optional[float] = None
        self.elapsed = 0.0
        self._kept_words = [gate.word_set(i.question) for i in self.existing]
        self._ids = {i.id for i in self.existing}
        self._asked: Dict[str, List[str]] = {}  # anchor chunk id -> questions written from it so far
        for item in self.existing:
            if item.chunk_ids:
                self._asked.setdefault(item.chunk_ids[0], []).append(item.question)
        self._usage0 = judge_usage(judge)
        self._judge0 = judge
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    # -- control ------------------------------------------------------------------------------
    def start(self) -> "Generation":
        self._thread = threading.Thread(target=self.run, name="ragmeter-generate", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: Optional[float] = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def run(self) -> "Generation":
        self.status, self.started = "running", time.monotonic()
        try:
            self._loop()
        except Exception as exc:  # a bug must not leave a page spinning: say what happened
            self.status, self.error = "failed", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.elapsed = time.monotonic() - self.started
            self._report()
        return self

    # -- figures ------------------------------------------------------------------------------
    @property
    def tokens(self) -> int:
        now = judge_usage(self._judge0)
        return sum(int(now.get(k, 0)) - int(self._usage0.get(k, 0)) for k in ("prompt_tokens", "completion_tokens"))

    def shortfall(self) -> Optional[str]:
        """None when `n` items were kept; else the honest line saying how many and why not more."""
        missing = self.settings.n - len(self.items)
        if missing <= 0 or self.status == "failed":
            return None
        why = ", ".join(f"{count} {reason}" for reason, count in self.rejected.most_common()) or "none rejected"
        if self.status == "stopped":
            cause = "stopped by the user"
        elif self.offline:  # more attempts pick the same sentences again: say what the documents can give
            cause = (f"the documents can give at most {self.offline_capacity} offline items (one per sentence of "
                     f"{MIN_WORDS}+ words); add documents, or write items with a model (--model)")
        elif self.planner.empty:
            cause = "nothing left to write from"
        else:
            cause = f"the attempt cap ({self.settings.attempts_cap()}, --max-attempts) was reached"
        return (f"kept {len(self.items)} of {self.settings.n} items after {self.attempts} attempts: {cause} "
                f"(rejected: {why})")

    @property
    def offline_capacity(self) -> int:
        """Offline: how many cloze items the documents can give at most (extractive.capacity)."""
        return capacity(self.chunks)

    @property
    def can_resume(self) -> bool:
        """Whether a new Generation carrying these items on could keep more: not after an offline run fell
        short (its attempts already went over every sentence the documents have)."""
        return self.status == "stopped" or (self.status == "short" and not self.offline)

    # -- the loop -----------------------------------------------------------------------------
    def _loop(self) -> None:
        workers = 1 if self.offline else max(1, self.settings.workers)
        with Pool(workers, "ragmeter-generate") as pool:
            for slot, future in pool.completed(lambda: self._next_task(pool), stop=self._stopping):
                self._settle(slot, *future.result())
        self.status = self._final_status()

    def _stopping(self) -> bool:
        return self._stop.is_set() or self.health.tripped

    def _next_task(self, pool: Pool) -> Optional[Task]:
        """The next attempt while fewer items are kept or being written than asked for, under the attempt cap."""
        s = self.settings
        if len(self.items) + pool.in_flight >= s.n or self.attempts >= s.attempts_cap():
            return None
        slot = self._next_slot()
        if slot is None:
            return None
        self.attempts += 1
        self.kind_attempts[slot.kind] += 1
        return slot, partial(self._attempt, slot)

    def _final_status(self) -> str:
        if self.health.tripped:
            self.error = str(self.health.failure())
            return "failed"
        if len(self.items) >= self.settings.n:
            return "finished"
        return "stopped" if self._stop.is_set() else "short"

    def _next_slot(self) -> Optional[Slot]:
        if self.planner.empty:
            return None
        cap = self.settings.attempts_cap()
        share = sum(self.planner.mix.values())
        spent = [k for k, w in self.planner.mix.items() if self.kind_attempts[k] >= max(5, cap * w / share)]
        if len(spent) == len(self.planner.mix):
            return None
        return self.planner.next(exclude=spent)

    def _settle(self, slot: Slot, item: Optional[TestItem], reason: Optional[str]) -> None:
        with self._lock:
            if item is not None and gate.near_duplicate(item.question, self._kept_words):
                item, reason = None, "near_duplicate"  # written at the same time as a kept twin
            if item is None:
                self.rejected[reason or "unparseable"] += 1
                self.planner.release(slot)
            else:
                item = item.edited(id=self._new_id())
                self.items.append(item)
                self._kept_words.append(gate.word_set(item.question))
                self.planner.keep(item.kind)
        self._report()

    def _new_id(self) -> str:
        n = len(self._ids) + 1
        while f"gen-{n:04d}" in self._ids:
            n += 1
        self._ids.add(f"gen-{n:04d}")
        return f"gen-{n:04d}"

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self)

    # -- one attempt --------------------------------------------------------------------------
    def _attempt(self, slot: Slot) -> Outcome:
        try:
            if self.offline:
                return self._cloze(slot)
            if slot.kind == "unanswerable":
                return self._unanswerable(slot)
            return self._answerable(slot)
        except _Rejected as rejected:
            return None, rejected.reason

    def _ask(self, prompt: str) -> str:
        with self._lock:
            self.calls += 1
        try:
            return self.judge.generate(prompt)
        except JudgeError:
            raise _Rejected("judge_error") from None

    def _avoid(self, slot: Slot) -> List[str]:
        with self._lock:
            return list(self._asked.get(slot.chunks[0].chunk_id, []))[-AVOID_MAX:]

    def _written(self, slot: Slot, question: str) -> None:
        with self._lock:
            self._asked.setdefault(slot.chunks[0].chunk_id, []).append(question)

    def _answerable(self, slot: Slot) -> Outcome:
        task = KINDS[slot.kind].task or prompts.SINGLE_TASK
        prompt = prompts.write_prompt(task, slot.chunks, slot.language, self._avoid(slot))
        fields, why = gate.read_generation(self._ask(prompt), False)
        if fields is None:
            return None, why
        question, answer = fields["question"], fields["answer"]
        self._written(slot, question)
        if why := self._lexical(question, slot.chunks):
            return None, why
        verdict = gate.read_check(self._ask(prompts.check_prompt(slot.chunks, question, answer)),
                                  "answerable", "supported")
        if verdict is None:
            return None, "unparseable_check"
        if not verdict["answerable"]:
            return None, "not_answerable"
        if not verdict["supported"]:
            return None, "unsupported_reference"
        return self._item(slot, question, answer, gate.answer_keywords(fields["keywords"], answer)), None

    def _unanswerable(self, slot: Slot) -> Outcome:
        reply = self._ask(prompts.unanswerable_prompt(slot.chunks[0], slot.language, self._avoid(slot)))
        fields, why = gate.read_generation(reply, True)
        if fields is None:
            return None, why
        question = fields["question"]
        self._written(slot, question)
        if why := self._lexical(question, slot.chunks):
            return None, why
        found = [c for c, _ in self.index.search(question, k=UNANSWERABLE_TOP_K)]
        verdict = gate.read_check(self._ask(prompts.check_unanswerable_prompt(found, question)), "answerable")
        if verdict is None:
            return None, "unparseable_check"
        if verdict["answerable"]:
            return None, "answerable_from_corpus"
        item = self._item(slot, question, prompts.NO_ANSWER[slot.language], [])
        return item.edited(expected_docs=[]), None

    def _cloze(self, slot: Slot) -> Outcome:
        made = cloze(slot.chunks[0], slot.language, pick=self.attempts)
        if made is None:
            return None, "empty"
        question, sentence, word = made
        with self._lock:
            if gate.near_duplicate(question, self._kept_words):
                return None, "near_duplicate"
        return self._item(slot, question, sentence, [word]), None

    def _lexical(self, question: str, chunks: Sequence[Chunk]) -> Optional[str]:
        if not tokens(question):
            return "empty"
        if gate.copies_passage(question, chunks):
            return "copies_passage"
        with self._lock:
            if gate.near_duplicate(question, self._kept_words):
                return "near_duplicate"
        return None

    def _item(self, slot: Slot, question: str, answer: str, keywords: List[str]) -> TestItem:
        titles = list(dict.fromkeys(c.title for c in slot.chunks))
        return TestItem(id="", question=question, ground_truth=answer, expected_docs=titles,
                        expected_answer_keywords=keywords, kind=slot.kind, language=slot.language,
                        chunk_ids=[c.chunk_id for c in slot.chunks], generator=self.generator)
