"""Metric validity benchmark: do ragmeter's scores agree with human (or gold) labels?

Reads the labelled development sets in ../shared/data/ (schema and scoring protocol per set in
that folder's README.md), scores every row, and prints one table: per set and figure, ragmeter's
value beside the seed's Jaccard heuristic, the README's lexical floor and its "good" target, and
the rows scored per second.

Offline (the default; under two minutes on one core):

    python bench/validity.py
    python bench/validity.py --data /path/to/data --limit 100 --json validity.json
    python bench/validity.py --heuristics jaccard        # the seed's numbers in the ragmeter column
    python bench/validity.py --embedding                 # add the opt-in embedding set's column

`--embedding` needs the `embeddings` extra (pip install 'ragmeter[embeddings]'): an "embedding"
column then shows the opt-in embedding heuristic set (evaluator/embeddings.py) beside the others,
always offline, with its rows/s. It is not on by default because it adds a minute or two (the
model embeds every context and context sentence) to a run that otherwise takes seconds.

Against any OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama, LM Studio, llama.cpp's
server): the ragmeter column then holds the judge's blended scores (0.7 LLM + 0.3 heuristic);
the Jaccard column stays offline. The key is read from the named environment variable and is
never printed or written:

    export OPENAI_API_KEY=sk-...
    python bench/validity.py --model gpt-4o-mini --limit 50
    python bench/validity.py --model local --base-url http://127.0.0.1:8080/v1 --api-key-env NO_KEY --workers 4

Each set costs one judge call per row per metric it validates (HotpotQA two: precision and
recall), so `--limit` is the way to keep a paid run cheap.

With a judge, a "combined" column beside it shows the same figures from the opt-in one-call mode
(`--judge-mode combined`: one call per row returns all five metrics' verdicts, as a user's
combined run asks), and a last line per mode gives judge calls and prompt/completion tokens per
row: whether the cheaper mode keeps its validity can be measured whenever a real model is
available. `--modes separate` skips it (one call per row more).

The labels are never shown to a scorer: a row becomes an EvalSample of question, answer,
contexts and ground_truth only. Data licences: HaluEval (MIT; knowledge from HotpotQA,
CC BY-SA 4.0), HotpotQA (CC BY-SA 4.0), BEGIN/Wizard of Wikipedia (CC BY 4.0), TruthfulQA
(Apache-2.0), ALCE human evaluation (MIT); keep these notices with any figure you publish.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluator.analysis.agreement import auroc, pairwise_accuracy, spearman  # noqa: E402
from evaluator.metrics.embeddings import INSTALL_HINT, available as embeddings_available  # noqa: E402
from evaluator import OfflineJudge, RAGEvaluator  # noqa: E402
from evaluator.metrics.heuristic_sets import context_relevances  # noqa: E402
from evaluator.metrics.heuristics import clear_caches, is_bare_span  # noqa: E402
from evaluator.metrics.scoring import score_metric  # noqa: E402
from evaluator.metrics.combined import COMBINED, SEPARATE  # noqa: E402
from evaluator.model import METRICS, EvalSample, MetricScore  # noqa: E402
from evaluator.text import resolve_language, words  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data"
LOW_OVERLAP = 0.7  # BEGIN's low-overlap subset: unigram precision of the answer below this

Row = Dict[str, Any]
Scores = Dict[str, List[Optional[MetricScore]]]  # metric -> one MetricScore per row (None: not scored)


@dataclass
class Figure:
    """One line of the table."""

    set: str
    metric: str
    figure: str
    n: int
    ragmeter: Optional[float]
    jaccard: Optional[float]
    floor: Optional[float]
    good: Optional[float]
    note: str = ""
    embedding: Optional[float] = None  # the opt-in embedding set, when its extra is installed
    combined: Optional[float] = None  # the judge in one-call mode, when compared


# --- loading ------------------------------------------------------------------------------

def load_rows(path: Path, limit: Optional[int]) -> List[Row]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return rows[:limit] if limit else rows


def to_sample(row: Row) -> EvalSample:
    """The row as the metrics see it: labels stay behind."""
    return EvalSample(row["question"], row["answer"] or "", list(row["contexts"] or []),
                      row.get("ground_truth"), row["sample_id"])


# --- scoring ------------------------------------------------------------------------------

@dataclass
class Scored:
    scores: Scores
    relevances: List[Optional[List[float]]]  # per-context relevance per row (HotpotQA)
    seconds: float


def score_offline(rows: List[Row], metrics: Sequence[str], kind: str) -> Scored:
    """Every row through RAGEvaluator with the offline judge: all five metrics, as a user runs it."""
    clear_caches()  # time a cold cache, as a fresh run would see it
    samples = [to_sample(r) for r in rows]
    start = time.perf_counter()
    report = RAGEvaluator(OfflineJudge(), heuristics=kind).evaluate_dataset(samples)
    seconds = time.perf_counter() - start
    scores = {m: [getattr(res, m) for res in report.results] for m in metrics}
    rels = [context_relevances(s, resolve_language("auto", s.question, s.answer), kind) for s in samples]
    return Scored(scores, rels, seconds)


def score_with_judge(rows: List[Row], metrics: Sequence[str], judge: Any, workers: int) -> Scored:
    """Only the metrics a set validates, one judge call each, `workers` at a time."""
    samples = [to_sample(r) for r in rows]
    jobs = [(m, i) for m in metrics for i in range(len(samples))]

    def run(job):
        metric, i = job
        s = samples[i]
        return score_metric(metric, s, judge, resolve_language("auto", s.question, s.answer, *s.contexts))

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        done = list(pool.map(run, jobs))
    seconds = time.perf_counter() - start
    scores: Scores = {m: [None] * len(samples) for m in metrics}
    for (m, i), ms in zip(jobs, done):
        scores[m][i] = ms
    rels = [_verdict_relevances(ms, len(s.contexts)) for ms, s in
            zip(scores.get("context_precision", [None] * len(samples)), samples)]
    return Scored(scores, rels, seconds)


def _verdict_relevances(ms: Optional[MetricScore], n: int) -> Optional[List[float]]:
    """Per-context verdicts from the judge's context-precision reply, when it gave one per context."""
    if ms is None or len(ms.verdicts) != n:
        return None
    positive = {"yes", "useful", "relevant", "1", "true", "supported"}
    return [1.0 if str(v.get("verdict")).strip().lower() in positive else 0.0 for v in ms.verdicts]


# --- protocols ----------------------------------------------------------------------------

def _values(scored: Scored, metric: str, keep: Callable[[int], bool] = lambda i: True):
    """(row index, score) of rows scored and not skipped for `metric`."""
    return [(i, ms.score) for i, ms in enumerate(scored.scores[metric])
            if ms is not None and not ms.skipped and keep(i)]


def _auroc(rows, scored, metric, label, keep=lambda i: True):
    pairs = _values(scored, metric, keep)
    return auroc([s for _, s in pairs], [rows[i]["labels"][label] for i, _ in pairs]), len(pairs)


def _pairwise(rows, scored, metric, label, group, min_gap=1e-9):
    pairs = _values(scored, metric)
    value = pairwise_accuracy([s for _, s in pairs], [rows[i]["labels"][label] for i, _ in pairs],
                              [group(rows[i]) for i, _ in pairs], min_gap)
    return value, len(pairs)


def _spearman(rows, scored, metric, label):
    pairs = _values(scored, metric)
    return spearman([s for _, s in pairs], [rows[i]["labels"][label] for i, _ in pairs]), len(pairs)


def protocol_halueval(rows, scored):
    pair = lambda r: r["labels"]["pair_id"]  # noqa: E731
    bare = {i for i, r in enumerate(rows) if r["labels"]["faithful"] == 1 and is_bare_span(r["answer"])}
    bare_scores = [s for _, s in _values(scored, "faithfulness", lambda i: i in bare)]
    return [
        ("faithfulness", "pairwise acc", *_pairwise(rows, scored, "faithfulness", "faithful", pair)),
        ("faithfulness", "AUROC", *_auroc(rows, scored, "faithfulness", "faithful")),
        ("faithfulness", "bare-span mean", sum(bare_scores) / len(bare_scores) if bare_scores else None,
         len(bare_scores)),
        ("answer_correctness", "pairwise acc", *_pairwise(rows, scored, "answer_correctness", "correct", pair)),
    ]


def protocol_hotpotqa(rows, scored):
    rel_scores, rel_labels = [], []
    for r, rel in zip(rows, scored.relevances):
        if rel is not None:
            rel_scores += rel
            rel_labels += r["labels"]["context_relevance"]
    return [
        ("context_precision", "per-context AUROC", auroc(rel_scores, rel_labels), len(rel_scores)),
        ("context_precision", "Spearman", *_spearman(rows, scored, "context_precision", "context_precision_gold")),
        ("context_recall", "Spearman", *_spearman(rows, scored, "context_recall", "context_recall_gold")),
        ("context_recall", "AUROC all-gold", *_auroc(rows, scored, "context_recall", "all_gold_retrieved")),
    ]


def unigram_precision(answer: str, contexts: Sequence[str]) -> float:
    """Share of the answer's word tokens found among the contexts' (the README's lexical floor)."""
    toks = words(answer)
    vocab = set(words(" ".join(contexts)))
    return sum(t in vocab for t in toks) / len(toks) if toks else 0.0


def protocol_begin(rows, scored):
    low = {i for i, r in enumerate(rows) if unigram_precision(r["answer"], r["contexts"]) < LOW_OVERLAP}
    return [
        ("faithfulness", "AUROC", *_auroc(rows, scored, "faithfulness", "faithful")),
        ("faithfulness", "AUROC low-overlap", *_auroc(rows, scored, "faithfulness", "faithful", lambda i: i in low)),
    ]


def begin_low_overlap_floor(rows: List[Row]) -> Optional[float]:
    """The unigram-precision floor measured on BEGIN's low-overlap rows (the README gives none)."""
    ups = [unigram_precision(r["answer"], r["contexts"]) for r in rows]
    low = [i for i, u in enumerate(ups) if u < LOW_OVERLAP]
    return auroc([ups[i] for i in low], [rows[i]["labels"]["faithful"] for i in low])


def protocol_correctness(rows, scored):
    return [("answer_correctness", "AUROC", *_auroc(rows, scored, "answer_correctness", "correct"))]


def protocol_informativeness(rows, scored):
    return [("answer_relevancy", "AUROC", *_auroc(rows, scored, "answer_relevancy", "informative"))]


def protocol_swap(rows, scored):
    question = lambda r: r["question"]  # noqa: E731
    return [
        ("answer_relevancy", "AUROC", *_auroc(rows, scored, "answer_relevancy", "relevant")),
        ("answer_relevancy", "pairwise acc", *_pairwise(rows, scored, "answer_relevancy", "relevant", question)),
    ]


def protocol_alce(rows, scored):
    question = lambda r: r["question"]  # noqa: E731
    return [
        ("answer_relevancy", "Spearman", *_spearman(rows, scored, "answer_relevancy", "utility")),
        ("answer_relevancy", "pairwise gap>=2",
         *_pairwise(rows, scored, "answer_relevancy", "utility", question, min_gap=2)),
    ]


@dataclass(frozen=True)
class DataSet:
    name: str
    file: str
    metrics: tuple
    protocol: Callable
    # figure name -> (README lexical floor, README "good" target)
    targets: Dict[str, tuple]


SETS = [
    DataSet("halueval", "halueval_qa.dev.jsonl", ("faithfulness", "answer_correctness"), protocol_halueval,
            {"faithfulness pairwise acc": (0.90, 0.95), "faithfulness bare-span mean": (None, 0.80)}),
    DataSet("hotpotqa", "hotpotqa_context.dev.jsonl", ("context_precision", "context_recall"), protocol_hotpotqa,
            {"context_precision per-context AUROC": (0.78, 0.90), "context_precision Spearman": (None, 0.75),
             "context_recall Spearman": (None, 0.60)}),
    DataSet("begin", "begin_wow.dev.jsonl", ("faithfulness",), protocol_begin,
            {"faithfulness AUROC": (0.93, 0.93)}),
    DataSet("tqa-correct", "truthfulqa_correctness.dev.jsonl", ("answer_correctness",), protocol_correctness,
            {"answer_correctness AUROC": (0.67, 0.85)}),
    DataSet("tqa-inform", "truthfulqa_informativeness.dev.jsonl", ("answer_relevancy",), protocol_informativeness,
            {"answer_relevancy AUROC": (0.67, 0.80)}),
    DataSet("swap", "relevancy_swap.dev.jsonl", ("answer_relevancy",), protocol_swap,
            {"answer_relevancy AUROC": (0.85, 0.95)}),
    DataSet("alce", "alce_utility.dev.jsonl", ("answer_relevancy",), protocol_alce,
            {"answer_relevancy Spearman": (0.29, 0.35), "answer_relevancy pairwise gap>=2": (None, 0.70)}),
]


# --- running ------------------------------------------------------------------------------

@dataclass
class SetRun:
    figures: List[Figure]
    rows: int
    rows_per_s: float  # ragmeter column's rows per second
    jaccard_rows_per_s: float
    embedding_rows_per_s: Optional[float] = None
    usage: Dict[str, Dict[str, float]] = field(default_factory=dict)  # judge mode -> calls and tokens


def score_combined(rows: List[Row], judge: Any, workers: int) -> Scored:
    """Every row in one-call mode: one judge call returns all five metrics' verdicts."""
    samples = [to_sample(r) for r in rows]
    start = time.perf_counter()
    evaluator = RAGEvaluator(judge, metrics=list(METRICS), judge_mode=COMBINED, judge_health=None)
    report = evaluator.evaluate_dataset(samples, max_workers=max(1, workers))
    seconds = time.perf_counter() - start
    scores: Scores = {m: [r.scores.get(m) for r in report.results] for m in METRICS}
    rels = [_verdict_relevances(ms, len(s.contexts)) for ms, s in zip(scores["context_precision"], samples)]
    return Scored(scores, rels, seconds)


def _spent(judge: Any, before: Dict[str, Any], rows: int) -> Dict[str, float]:
    now = judge.usage()
    return {k: round((now.get(k, 0) - before.get(k, 0)) / max(1, rows), 1)
            for k in ("calls", "prompt_tokens", "completion_tokens")}


def run_set(ds: DataSet, data: Path, limit: Optional[int], heuristics: str, judge: Any, workers: int,
            embedding: bool = False, modes: Sequence[str] = (SEPARATE, COMBINED)) -> SetRun:
    rows = load_rows(data / ds.file, limit)
    usage: Dict[str, Dict[str, float]] = {}
    comb_values: List[Optional[float]] = []
    if judge is None:
        ours = score_offline(rows, ds.metrics, heuristics)
    else:
        before = judge.usage()
        ours = score_with_judge(rows, ds.metrics, judge, workers)
        usage[SEPARATE] = _spent(judge, before, len(rows))
        if COMBINED in modes:
            before = judge.usage()
            comb_values = [f[2] for f in ds.protocol(rows, score_combined(rows, judge, workers))]
            usage[COMBINED] = _spent(judge, before, len(rows))
    seed = score_offline(rows, ds.metrics, "jaccard")
    emb = score_offline(rows, ds.metrics, "embedding") if embedding else None
    emb_values = [f[2] for f in ds.protocol(rows, emb)] if emb else []
    figures = []
    for k, ((metric, name, value, n), (_, _, seed_value, _)) in enumerate(zip(ds.protocol(rows, ours),
                                                                              ds.protocol(rows, seed))):
        floor, good = ds.targets.get(f"{metric} {name}", (None, None))
        note = ""
        if ds.name == "begin" and name == "AUROC low-overlap":
            floor, good, note = begin_low_overlap_floor(rows), None, "floor measured here (unigram precision)"
        figures.append(Figure(ds.name, metric, name, n, value, seed_value, floor, good, note,
                              emb_values[k] if emb else None, comb_values[k] if comb_values else None))
    return SetRun(figures, len(rows), len(rows) / max(ours.seconds, 1e-9), len(rows) / max(seed.seconds, 1e-9),
                  len(rows) / max(emb.seconds, 1e-9) if emb else None, usage)


def _cell(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_table(runs: Dict[str, SetRun], label: str) -> str:
    with_emb = any(r.embedding_rows_per_s is not None for r in runs.values())
    with_comb = any(f.combined is not None for r in runs.values() for f in r.figures)
    emb_head = f" {'embedding':>9}" if with_emb else ""
    comb_head = f" {'combined':>9}" if with_comb else ""
    head = (f"{'set':<12} {'metric':<19} {'figure':<18} {'n':>5} {label:>9}{comb_head} {'jaccard':>8}{emb_head} "
            f"{'floor':>6} {'good':>6}  rows/s")
    lines = [head, "-" * len(head)]
    for name, run in runs.items():
        for k, f in enumerate(run.figures):
            speed = f"{run.rows_per_s:,.0f} (seed {run.jaccard_rows_per_s:,.0f}" if k == 0 else ""
            if k == 0:
                speed += f", embedding {run.embedding_rows_per_s:,.0f})" if with_emb else ")"
            mark = "*" if f.note else ""
            emb = f" {_cell(f.embedding):>9}" if with_emb else ""
            comb = f" {_cell(f.combined):>9}" if with_comb else ""
            lines.append(f"{f.set:<12} {f.metric:<19} {f.figure:<18} {f.n:>5} {_cell(f.ragmeter):>9}{comb} "
                         f"{_cell(f.jaccard):>8}{emb} {_cell(f.floor) + mark:>6} {_cell(f.good):>6}  {speed}")
        for mode, spent in run.usage.items():
            lines.append(f"{'':<12} judge per row, {mode}: {spent['calls']:g} calls, {spent['prompt_tokens']:g} prompt "
                         f"+ {spent['completion_tokens']:g} completion tokens")
    total_rows = sum(r.rows for r in runs.values())
    total_s = sum(r.rows / r.rows_per_s for r in runs.values())
    lines.append("-" * len(head))
    lines.append(f"all sets: {total_rows} rows, {total_rows / total_s:,.0f} rows/s ({label}, all five metrics "
                 "per row when offline)")
    if any(f.note for r in runs.values() for f in r.figures):
        lines.append("* floor measured on these rows with the README's lexical method (the README gives none)")
    return "\n".join(lines)


def make_judge(args: argparse.Namespace) -> Any:
    if not args.model:
        return None
    from evaluator.judges.openai import OpenAIJudge  # only when asked: needs the openai package

    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if not key and not args.base_url:
        raise SystemExit(f"No API key: set {args.api_key_env}, or pass --base-url for a local server that needs none.")
    # Local servers (llama.cpp, Ollama) accept any key; the openai client insists on one.
    return OpenAIJudge(args.model, base_url=args.base_url, api_key=key or "not-needed")


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Measure how ragmeter's scores agree with labelled data.")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of the labelled *.dev.jsonl sets")
    p.add_argument("--model", help="judge model name; scores with an OpenAI-compatible judge instead of offline")
    p.add_argument("--base-url", help="the judge's base URL, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--workers", type=int, default=4, help="concurrent judge calls (with --model)")
    p.add_argument("--heuristics", default="ragmeter", help="heuristic set for the ragmeter column")
    p.add_argument("--embedding", action="store_true",
                   help="add a column for the opt-in embedding heuristic set (needs the 'embeddings' extra)")
    p.add_argument("--limit", type=int, help="score only the first N rows of each set")
    p.add_argument("--sets", help="comma-separated subset of: " + ", ".join(d.name for d in SETS))
    p.add_argument("--json", type=Path, help="also write the table as JSON here")
    p.add_argument("--modes", default="separate,combined",
                   help="judge modes to compare with --model (default separate,combined; 'separate' alone skips "
                        "the one-call column)")
    return p.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if not args.data.is_dir():
        print(f"No data folder at {args.data}; pass --data pointing at the labelled *.dev.jsonl sets.",
              file=sys.stderr)
        return 2
    judge = make_judge(args)
    wanted = set(args.sets.split(",")) if args.sets else None
    if args.embedding and not embeddings_available():
        print(f"--embedding needs the 'embeddings' extra: {INSTALL_HINT}", file=sys.stderr)
        return 2
    runs = {}
    for ds in SETS:
        if (wanted and ds.name not in wanted) or not (args.data / ds.file).exists():
            continue
        runs[ds.name] = run_set(ds, args.data, args.limit, args.heuristics, judge, args.workers, args.embedding,
                                tuple(m.strip() for m in args.modes.split(",")))
    label = args.model[:9] if args.model else args.heuristics[:9]
    print(format_table(runs, label))
    if args.json:
        out = {"ragmeter": label, "sets": {n: {"rows": r.rows, "rows_per_s": round(r.rows_per_s, 1),
                                                "jaccard_rows_per_s": round(r.jaccard_rows_per_s, 1),
                                                "embedding_rows_per_s": r.embedding_rows_per_s and
                                                round(r.embedding_rows_per_s, 1),
                                                "judge_usage_per_row": r.usage,
                                                "figures": [asdict(f) for f in r.figures]} for n, r in runs.items()}}
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
