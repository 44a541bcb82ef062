"""Retrieval runs: a TREC run file with its qrels, and a BEIR folder, as samples the retrieval metrics score.

    ragmeter evaluate run.txt --qrels qrels.txt          a TREC run and TREC qrels (any extension)
    ragmeter evaluate beir/scifact/ --run run.txt        a BEIR folder: queries.jsonl, qrels/test.tsv

A run line is `query_id Q0 doc_id rank score run_name` (6 columns, spaces or tabs: what trec_eval, ranx and
Pyserini write). A TREC qrels line is `query_id iteration doc_id grade` (4 columns); a BEIR qrels file is a
TSV with the header `query-id corpus-id score`. The file's shape decides, never its extension.

One sample per query of the run: its id is the query id, its question the query's text (BEIR's queries.jsonl)
or the id, its `retrieval_ids` the run's documents and its `relevance` every judged document with its grade.
trec_eval's conventions, so ragmeter's figures equal trec_eval's (and ranx's):
  - documents are ranked by score, highest first; ties by doc id in reverse order (trec_eval's qsort); the
    rank column is not used (trec_eval ignores it too);
  - a query of the run with no judgments in the qrels is not scored (trec_eval leaves it out); a judged query
    the run does not retrieve for is left out too (trec_eval without -c), and the note counts both;
  - a document listed twice for one query is an error (trec_eval refuses the file), as is a line with the
    wrong number of columns or a score that is not a number: each names the file and line.
BEIR's corpus.jsonl is not read: the retrieval metrics need only ids.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from ..errors import DatasetError
from ..model import EvalSample

RUN_COLUMNS = "query_id Q0 doc_id rank score run_name"
QRELS_COLUMNS = "query_id iteration doc_id grade"
RETRIEVAL_METRICS = "ndcg@10,mrr@10,precision@10,recall@100,hit@10"  # the CLI's default with --qrels or --run
BEIR_SPLITS = ("test", "dev", "train")


@dataclass
class Run:
    """A run's documents per query, in the file's query order: doc id -> score, and the run's name."""

    docs: Dict[str, Dict[str, float]] = field(default_factory=dict)
    names: Dict[str, str] = field(default_factory=dict)


def _lines(path: Path) -> Iterator[Tuple[int, List[str]]]:
    try:
        with path.open(encoding="utf-8-sig") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    yield number, line.split()
    except UnicodeDecodeError:
        raise DatasetError("is not UTF-8 text; a TREC file is plain text", file=str(path)) from None
    except OSError as exc:
        raise DatasetError(f"cannot be read ({exc.strerror or exc}); check the path", file=str(path)) from None


def read_run(path: Path) -> Run:
    """The run file's documents per query; DatasetError naming file and line for a malformed line."""
    run = Run()
    for number, cells in _lines(path):
        if len(cells) != 6:
            raise DatasetError(f"has {len(cells)} columns; a TREC run line has 6 ({RUN_COLUMNS}), e.g. "
                               "'q1 Q0 doc7 1 12.5 bm25'. Fix or delete this line", file=str(path), line=number)
        query, _, doc, _, score, name = cells
        try:
            value = float(score)
        except ValueError:
            raise DatasetError(f"the score '{score}' (column 5) is not a number", file=str(path), line=number) from None
        docs = run.docs.setdefault(query, {})
        if doc in docs:
            raise DatasetError(f"lists document '{doc}' twice for query '{query}' (as trec_eval, a run ranks each "
                               "document once); delete the repeated line", file=str(path), line=number)
        docs[doc] = value
        run.names.setdefault(query, name)
    if not run.docs:
        raise DatasetError(f"has no run lines ({RUN_COLUMNS})", file=str(path))
    return run


def read_qrels(path: Path) -> Dict[str, Dict[str, float]]:
    """Judgments per query: TREC qrels (4 columns) or a BEIR TSV (query-id, corpus-id, score, with that header)."""
    judged: Dict[str, Dict[str, float]] = {}
    for number, cells in _lines(path):
        if number == 1 and [c.casefold() for c in cells[:2]] == ["query-id", "corpus-id"]:
            continue  # BEIR's header
        if len(cells) == 4:
            query, _, doc, grade = cells
        elif len(cells) == 3:
            query, doc, grade = cells
        else:
            raise DatasetError(f"has {len(cells)} columns; a qrels line has 4 ({QRELS_COLUMNS}, e.g. 'q1 0 doc7 1') "
                               "or, in a BEIR qrels TSV, 3 (query-id corpus-id score). Fix or delete this line",
                               file=str(path), line=number)
        try:
            judged.setdefault(query, {})[doc] = float(grade)
        except ValueError:
            raise DatasetError(f"the grade '{grade}' is not a number", file=str(path), line=number) from None
    if not judged:
        raise DatasetError(f"has no judgments ({QRELS_COLUMNS})", file=str(path))
    return judged


def ranked(docs: Dict[str, float]) -> List[str]:
    """trec_eval's order: score descending, ties by doc id descending."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def run_samples(run: Run, judged: Dict[str, Dict[str, float]], queries: Optional[Dict[str, str]] = None,
                notes: Optional[List[str]] = None, name: str = "run") -> List[EvalSample]:
    """One sample per judged query of the run (see the module docstring); `notes` gets what was left out."""
    samples = [EvalSample(question=(queries or {}).get(query) or query, answer="", contexts=[], sample_id=query,
                          retrieval_ids=ranked(docs), relevance=dict(judged[query]),
                          metadata={"run": run.names.get(query, "")})
               for query, docs in run.docs.items() if query in judged]
    unjudged = [q for q in run.docs if q not in judged]
    missing = [q for q in judged if q not in run.docs]
    said = [f"TREC run: {_queries_n(len(samples))} scored from {name} ({sum(len(d) for d in run.docs.values()):,} "
            "lines), ranked by score as trec_eval ranks them (ties by doc id, the rank column unused)."]
    if unjudged:
        said.append(f"{_queries_n(len(unjudged))} of the run {_have(len(unjudged))} no judgments in the qrels and are not scored, as in "
                    f"trec_eval (first: {', '.join(unjudged[:5])}).")
    if missing:
        said.append(f"{_queries_n(len(missing), 'judged ')} {_have(len(missing))} no line in the run and are left out, as trec_eval does "
                    f"without -c (first: {', '.join(missing[:5])}).")
    if notes is not None:
        notes.extend(said)
    if not samples:
        raise DatasetError("shares no query id with the qrels; check that the run and the qrels are of the same "
                           f"queries (run: {', '.join(list(run.docs)[:3])}; qrels: {', '.join(list(judged)[:3])})",
                           file=name)
    return samples


def _queries_n(n: int, kind: str = "") -> str:
    return f"{n:,} {kind}{'query' if n == 1 else 'queries'}"


def _have(n: int) -> str:
    return "has" if n == 1 else "have"


def load_trec(run_path: str, qrels_path: str, notes: Optional[List[str]] = None) -> List[EvalSample]:
    """A TREC run and its qrels as samples."""
    return run_samples(read_run(Path(run_path)), read_qrels(Path(qrels_path)), notes=notes, name=str(run_path))


def load_beir(folder: str, run_path: str, notes: Optional[List[str]] = None) -> List[EvalSample]:
    """A BEIR folder (queries.jsonl, qrels/<split>.tsv) and a TREC run of its queries as samples."""
    root = Path(folder)
    qrels = next((root / "qrels" / f"{s}.tsv" for s in BEIR_SPLITS if (root / "qrels" / f"{s}.tsv").is_file()), None)
    if qrels is None:
        raise DatasetError("is not a BEIR folder: it has no qrels/test.tsv (nor dev.tsv, train.tsv); download the "
                           "dataset whole, or give a TREC run and qrels: ragmeter evaluate RUN --qrels QRELS",
                           file=folder)
    said = [f"BEIR folder: judgments from qrels/{qrels.name}, query texts from queries.jsonl; corpus.jsonl not read "
            "(the retrieval metrics need only document ids)."]
    samples = run_samples(read_run(Path(run_path)), read_qrels(qrels), _queries(root / "queries.jsonl"), said,
                          name=str(run_path))
    if notes is not None:
        notes.extend(said)
    return samples


def _queries(path: Path) -> Dict[str, str]:
    if not path.is_file():
        return {}
    found: Dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"is not JSON Lines ({exc})", file=str(path), line=number) from None
            found[str(item.get("_id"))] = str(item.get("text") or "")
    return found


def looks_like_run(path: str) -> bool:
    """Whether the file's first line has a TREC run's shape (6 columns, Q0 second): for a hint, never a guess."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            cells = f.readline().split()
    except OSError:
        return False
    return len(cells) == 6 and cells[1].upper() == "Q0"


def read_retrieval(data: str, qrels: Optional[str], run: Optional[str], notes: Optional[List[str]] = None
                   ) -> List[EvalSample]:
    """The CLI's two forms: DATA is a TREC run with `qrels`, or a BEIR folder with `run`."""
    if qrels and run:
        raise DatasetError("give either a TREC run with --qrels QRELS, or a BEIR folder with --run RUN, not both",
                           file=data)
    if run:
        if not Path(data).is_dir():
            raise DatasetError("--run needs a BEIR folder as DATA (queries.jsonl, qrels/test.tsv); for a TREC "
                               "qrels file use: ragmeter evaluate RUN --qrels QRELS", file=data)
        return load_beir(data, run, notes)
    return load_trec(data, str(qrels), notes)
