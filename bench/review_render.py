"""Review-page render time for one sample with 10 contexts of 500 words each (issue 21).

Times, in the library, the claim alignment (judge verdicts: 8 faithfulness claims, 10 context
verdicts, 6 recall statements; and the offline heuristic's evidence) and the HTML build; then
the Review page rendered by AppTest over a history holding that sample. Prints median and max
over `--rounds` rounds.

    python bench/review_render.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluator.analysis import claims as claims_module  # noqa: E402
from evaluator.analysis.claims import claim_views  # noqa: E402
from evaluator.analysis.highlight import sample_html  # noqa: E402
from evaluator.model import EvalResult, EvalSample, MetricScore  # noqa: E402

WORDS = ("card system transit fare station payment city network launch year smart contactless bus ferry "
         "retail shop reader balance deposit refund museum harbour tram route ticket").split()


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + f" in {rng.randint(1900, 2030)}."


def context(rng: random.Random, words: int = 500) -> str:
    return " ".join(sentence(rng) for _ in range(words // 14))


def sample_and_result() -> EvalResult:
    rng = random.Random(21)
    contexts = [context(rng) for _ in range(10)]
    answer = " ".join(sentence(rng) for _ in range(8))
    reference = " ".join(sentence(rng) for _ in range(6))
    sample = EvalSample("What does the card do?", answer, contexts, ground_truth=reference, sample_id="big")
    claims = [{"claim": s, "verdict": rng.choice(["supported", "unsupported"])} for s in answer.split(". ")]
    scores = {
        "faithfulness": MetricScore("faithfulness", 0.5, verdicts=claims, method="llm_blend"),
        "context_precision": MetricScore("context_precision", 0.5, method="llm_blend", verdicts=[
            {"index": i, "verdict": rng.choice(["useful", "not useful"]), "reason": "r"} for i in range(1, 11)]),
        "context_recall": MetricScore("context_recall", 0.5, method="llm_blend", verdicts=[
            {"statement": s, "attributed": rng.random() < 0.5} for s in reference.split(". ")]),
    }
    return EvalResult("big", sample=sample, scores=scores)


def library_times(result: EvalResult, rounds: int) -> dict:
    out = {"judge claims": [], "offline evidence": [], "HTML": []}
    offline = {m: MetricScore(m, 0.5, method="offline") for m in result.scores}
    for _ in range(rounds):
        claims_module.clear_caches()  # every round aligns from scratch
        t0 = time.perf_counter()
        views = claim_views(result.sample, result.scores)
        t1 = time.perf_counter()
        claims_module.clear_caches()
        claim_views(result.sample, offline)
        t2 = time.perf_counter()
        sample_html(result.sample, views)
        t3 = time.perf_counter()
        out["judge claims"].append(t1 - t0)
        out["offline evidence"].append(t2 - t1)
        out["HTML"].append(t3 - t2)
    return out


def apptest_times(result: EvalResult, rounds: int) -> list:
    from streamlit.testing.v1 import AppTest

    from evaluator.store.history import RunStore

    folder = tempfile.mkdtemp()
    os.environ["RAGMETER_HISTORY"] = str(Path(folder) / "history.sqlite3")
    os.environ["RAGMETER_JUDGE_CACHE"] = str(Path(folder) / "cache.sqlite3")
    runs = RunStore()
    run_id = runs.create_run(dataset_name="bench", samples=[result.sample], settings={})
    runs.record_result(run_id, 0, result)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("pages/review.py").run()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        at.run()  # a rerun: what each keypress or click costs
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return times


def show(name: str, values: list) -> None:
    print(f"  {name:<22} median {statistics.median(values) * 1000:8.1f} ms   max {max(values) * 1000:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    result = sample_and_result()
    words = sum(len(c.split()) for c in result.sample.contexts)
    print(f"sample: 10 contexts, {words:,} context words; {len(result.scores['faithfulness'].verdicts)} claims")
    for name, values in library_times(result, args.rounds).items():
        show(name, values)
    show("Review page (AppTest)", apptest_times(result, args.rounds))


if __name__ == "__main__":
    main()
