"""Conversations in the run history: one `samples` row per conversation, its turns in the record.

A conversation's sample record is an ordinary sample record (so SQL over `samples` and older
ragmeters still read it) whose `question` is the first user turn and `answer` the last reply, plus
a `conversation` key holding `Conversation.to_dict()`: every turn, with a replay's recorded replies,
errors and turns not asked. Its result record is the compact record of the conversation-level
scores plus `turns`: each scored assistant turn's index and compact scores. No migration is needed:
both are JSON in the columns every run uses.

Reading back rebuilds the `ConversationResult` (its turns' samples from the conversation itself),
so a resumed, re-scored or reopened conversation run is the run that was written.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ..scoring.conversations import ConversationReport, ConversationResult, TurnResult, conversation_sample, turn_sample
from ..conversation import USER, Conversation
from ..io.records import result_from_compact_record, result_to_compact_record, sample_to_record
from ..metrics.conversational import ConversationSample
from ..model import EvalResult, EvalSample, merged_order

KEY = "conversation"  # the sample record's key that marks a conversation


def is_conversation_record(record: Dict[str, Any]) -> bool:
    return isinstance(record.get(KEY), dict)


def conversation_of(sample: Optional[EvalSample]) -> Optional[Conversation]:
    return sample.conversation if isinstance(sample, ConversationSample) else None


def sample_record(sample: ConversationSample, index: Optional[int]) -> Dict[str, Any]:
    """The history's record of a conversation sample (see the module docstring)."""
    conv = sample.conversation
    assert conv is not None  # callers check conversation_of first
    first = next((t.content for t in conv.turns if t.role == USER), "")
    light = EvalSample(first, sample.answer, [], sample.ground_truth, sample_id=conv.conversation_id,
                       metadata=dict(sample.metadata), tool_calls=list(sample.tool_calls),
                       expected_tools=sample.expected_tools, target_error=conv.first_error())
    record = sample_to_record(light, index)
    record[KEY] = conv.to_dict()
    return record


def sample_from(record: Dict[str, Any]) -> ConversationSample:
    conv = Conversation.from_dict(record[KEY])
    sample = conversation_sample(conv)
    sample.target_error = conv.first_error()
    return sample


def result_record(result: EvalResult, *, with_sample: bool) -> Dict[str, Any]:
    """The compact record of a conversation's own scores, plus each scored turn's compact scores."""
    record = result_to_compact_record(result, with_sample=False)
    if with_sample:
        record["sample"] = None if result.sample is None else _any_sample_record(result.sample)
    turns = result.turns if isinstance(result, ConversationResult) else []
    record["turns"] = [dict(result_to_compact_record(t.result), turn=t.index, user_turn=t.user_index)
                       for t in turns]
    return record


def result_from(record: Dict[str, Any], sample: Optional[EvalSample]) -> EvalResult:
    """The ConversationResult `result_record` wrote; a plain result when no conversation is known."""
    embedded = record.get("sample")
    if isinstance(embedded, dict) and is_conversation_record(embedded):
        sample = sample_from(embedded)
    whole = result_from_compact_record({k: v for k, v in record.items() if k != "sample"}, sample)
    conv = conversation_of(sample)
    if conv is None or not isinstance(sample, ConversationSample):
        return whole
    by_reply = {ex.reply_index: (n, ex) for n, ex in enumerate((e for e in conv.exchanges() if e.reply), 1)}
    turns = []
    for data in record.get("turns") or []:
        number, ex = by_reply.get(data.get("turn"), (0, None))
        turn_of = None if ex is None else turn_sample(conv, ex, number, "auto")
        turns.append(TurnResult(int(data.get("turn") or 0), int(data.get("user_turn") or 0),
                                result_from_compact_record(data, turn_of)))
    return ConversationResult(conv, dict(whole.scores), turns, sample, whole.elapsed_sec)


def _any_sample_record(sample: EvalSample) -> Dict[str, Any]:
    if isinstance(sample, ConversationSample) and sample.conversation is not None:
        return sample_record(sample, None)
    return sample_to_record(sample)


def report_of(results: Sequence[EvalResult], total_time: float, usage: Dict[str, Any]) -> ConversationReport:
    """A ConversationReport over stored results (its turn metrics in the turns' own order)."""
    turns: List[TurnResult] = [t for r in results if isinstance(r, ConversationResult) for t in r.turns]
    return ConversationReport(results=list(results), total_time=total_time, usage=usage,
                              turn_metrics=merged_order(t.result.scores for t in turns))
