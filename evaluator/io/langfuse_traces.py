"""Langfuse traces with their observations: what `GET /api/public/traces/{id}` returns and the UI's JSON
export holds (a list of them, or the API's page {"data": [...]}), one sample per trace. A flat export of
observations (one row each, with traceId and parentObservationId) is grouped into its traces first.

    {"id", "name", "input", "output", "sessionId", "userId", "metadata", "tags",
     "observations": [{"id", "type": "GENERATION"|"SPAN"|"RETRIEVER"|..., "name", "startTime",
                       "parentObservationId", "input", "output", "model", "metadata"}],
     "scores": [{"name", "value", "source": "API"|"EVAL"|"ANNOTATION", "comment"}]}

The question is the trace's input, the answer its output (else the last GENERATION's). The contexts are
the documents the model saw, in this order of preference:
    1. the last GENERATION's own input, when it holds documents (a "documents"/"context" key);
    2. a reranker's output (a SPAN or RETRIEVER whose name says rerank): the reranked documents, not
       the retriever's order;
    3. the retriever's output (a RETRIEVER observation, or a SPAN named like a retriever).
The note says which observation the contexts came from. Scores become external_langfuse_<name>, or
human_<metric> for an ANNOTATION (a person's label) of a metric ragmeter scores.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .experiments import CONTEXT_KEYS, pick, regrouped
from .grades import grades_of
from .paths import decoded
from .readings import Reading, Tally
from .sources import Records, Where
from .traces import ANSWER_KEYS, QUESTION_KEYS

_DOC_TEXT = ("page_content", "pageContent", "content", "text", "document")
_USED = ("id", "input", "output", "observations", "scores")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    if {"traceid", "type", "starttime"} <= set(by_key) and "observations" not in by_key:
        return Reading("Langfuse observations", regroup=_grouped, what="traces", notes=(
            "Langfuse observations (one row each): grouped by traceId; the root observation's input is the "
            "question and its output the answer; contexts as for a trace export.",))
    observations = first.get(by_key.get("observations", ""))
    if not isinstance(observations, list) or not {"input", "id"} <= set(by_key):
        return None
    if observations and not (isinstance(observations[0], dict) and "type" in observations[0]):
        return None
    return regrouped("Langfuse traces", "traces",
                     "Langfuse traces: the question from the trace's input, the answer from its output, contexts "
                     "from the documents the model saw (the generation's own input documents, else the reranker's "
                     "output, else the retriever's), scores as external_langfuse_<name>.", _trace)


def _grouped(records: Records, tally: Tally) -> Records:
    """A flat export of observations (one row each), grouped by trace: its root observation (no parent) holds
    the question and answer, and the trace is read like a trace export."""
    traces: Dict[str, List[Tuple[Where, Dict[str, Any]]]] = {}
    for where, row in records:
        traces.setdefault(str(row.get("traceId") or ""), []).append((where, row))
    for trace_id, rows in traces.items():
        tally.found += 1
        roots = [r for _, r in rows if not r.get("parentObservationId")]
        if not trace_id or not roots:
            tally.skip(f"trace {trace_id or '(no traceId)'}", "no root observation (every one names a parent)")
            continue
        root = min(roots, key=lambda r: str(r.get("startTime") or ""))
        trace = {"id": trace_id, "input": root.get("input"), "output": root.get("output"),
                 "observations": [r for _, r in rows]}
        out = _trace(trace, rows[0][0], tally)
        if out is not None:
            yield rows[0][0], {k: v for k, v in out.items() if v is not None}


def _trace(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    observations = sorted((o for o in row.get("observations") or [] if isinstance(o, dict)),
                          key=lambda o: str(o.get("startTime") or ""))
    generations = [o for o in observations if str(o.get("type", "")).upper() == "GENERATION"]
    question = _text(row.get("input"), QUESTION_KEYS, "user")
    answer = row.get("output")
    if answer is None and generations:
        answer = generations[-1].get("output")
    answer = _text(answer, ANSWER_KEYS, "assistant")
    if not question or answer is None:
        tally.skip(f"trace {row.get('id') or where.label()}", "no input (question)" if not question else
                   "no output (answer) on the trace or its generations")
        return None
    docs, source = seen_documents(observations, generations)
    tally.count("with retrieval", 1 if docs else 0)
    if source and not source.startswith("retriever"):  # the model saw other documents than the retriever's list
        tally.count(f"with contexts from the {source.split(' ', 1)[0]}")
    scores = [s for s in row.get("scores") or [] if isinstance(s, dict) and s.get("name")]
    human = [(str(s["name"]), _value(s)) for s in scores if str(s.get("source", "")).upper() == "ANNOTATION"]
    machine = [(str(s["name"]), _value(s)) for s in scores if str(s.get("source", "")).upper() != "ANNOTATION"]
    out = {"sample_id": row.get("id"), "question": question, "answer": answer, "contexts": docs or None,
           "contexts_from": source, **grades_of("langfuse", machine), **grades_of("langfuse", human, human=True)}
    return {**{k: v for k, v in row.items() if k not in _USED}, **out}


def _value(score: Mapping[str, Any]) -> Any:
    """A score's value; a CATEGORICAL score's stringValue ("pass", "yes") when it has no number."""
    return score.get("value") if score.get("value") is not None else score.get("stringValue")


def seen_documents(observations: List[Dict[str, Any]], generations: List[Dict[str, Any]]
                   ) -> Tuple[List[str], Optional[str]]:
    """The documents the model saw and where they came from ("generation 'llm' input", ...)."""
    for gen in reversed(generations):
        docs = _documents(_keyed(gen.get("input")))
        if docs:
            return docs, f"generation '{gen.get('name')}' input"
    for kind, test in (("reranker", _is_reranker), ("retriever", _is_retriever)):
        for obs in reversed([o for o in observations if test(o)]):
            docs = _documents(decoded(obs.get("output")))
            if docs:
                return docs, f"{kind} '{obs.get('name')}' output"
    return [], None


def _is_reranker(obs: Mapping[str, Any]) -> bool:
    return "rerank" in str(obs.get("name", "")).casefold() or str(obs.get("type", "")).upper() == "RERANKER"


def _is_retriever(obs: Mapping[str, Any]) -> bool:
    kind, name = str(obs.get("type", "")).upper(), str(obs.get("name", "")).casefold()
    return kind == "RETRIEVER" or (kind == "SPAN" and ("retriev" in name or "search" in name))


def _keyed(value: Any) -> Any:
    """A generation input's documents: under a context key of the input, not its chat messages."""
    value = decoded(value)
    if isinstance(value, dict):
        return next((value[k] for k in CONTEXT_KEYS if value.get(k)), None)
    return None


def _documents(value: Any) -> List[str]:
    value = decoded(value)
    if isinstance(value, dict):
        value = next((value[k] for k in CONTEXT_KEYS if value.get(k)), None)
    if isinstance(value, str):
        return [value] if value.strip() else []
    texts = []
    for doc in value if isinstance(value, list) else []:
        text = doc if isinstance(doc, str) else next((doc[k] for k in _DOC_TEXT if isinstance(doc, dict)
                                                       and isinstance(doc.get(k), str)), None)
        if text and text.strip():
            texts.append(text)
    return texts


def _text(value: Any, keys: Tuple[str, ...], role: str) -> Optional[str]:
    """An input/output as text: its known key, a message list's `role` message, else its JSON (nothing lost)."""
    found = _message(pick(value, keys), role)
    if found is None or isinstance(found, (dict, list)):
        return None if value is None else json.dumps(decoded(value), ensure_ascii=False, default=str)
    return str(found)


def _message(value: Any, role: str) -> Any:
    """A chat message list's last `role` message (an OpenAI-style generation's input/output), else the value."""
    value = decoded(value)
    if isinstance(value, dict) and "content" in value and isinstance(value["content"], str):
        return value["content"]
    if isinstance(value, list):
        said = [m for m in value if isinstance(m, dict) and m.get("role") == role and isinstance(m.get("content"), str)]
        return said[-1]["content"] if said else None
    return value
