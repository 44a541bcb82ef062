"""Issue 31's figures: corrected-mean coverage and width, active vs random review, sequential A/B.

Reads the labelled development sets in ../shared/data/ (see its README), scores every row with the
offline judge (the predictions) and treats the human labels as truth. Sets that label the same
metric are pooled, as one run would mix them (a pool must be larger than the biggest draw):

    faithfulness      halueval_qa (faithful) + begin_wow (faithful)                     ~600 rows
    answer_relevancy  truthfulqa_informativeness (informative) + relevancy_swap
                      (relevant) + alce_utility ((utility - 1) / 4)                     ~900 rows
    answer_correctness truthfulqa_correctness (correct)                                  300 rows
    context_recall    hotpotqa_context (context_recall_gold)                             240 rows

1. Coverage: per pool and n in {30, 100, 300} (n < rows), `--draws` uniform label draws; the share
   of 95% PPI++ intervals covering the pool's full label mean, and the mean width of the PPI++
   interval over the labels-only t interval, both with the finite-population correction (the
   ratio: < 1 is narrower).
2. Active vs random: the labels the informative queue (priority sampling weighted by the judge's
   uncertainty) needs to reach the real error (RMSE over draws) random PPI++ has at n=100 (both
   measured at n=100, active's variance scaled as (1/n - 1/N)); the ratio < 1 means fewer labels. Also both mean half-widths at n=100 and active's coverage. Three
   weightings: the offline judge as the informative queue weighs it (flat: a lexical score carries
   no uncertainty signal), the offline judge weighted by closeness to 0.5 (what that would cost),
   and a simulated calibrated judge (labels drawn as pass with probability = the score), where
   closeness to 0.5 is the true uncertainty: the case the informative order is for.
3. Sequential A/B: pass/fail pairs simulated from a pool's judge scores (p_i = 0.05 + 0.9 s_i per
   row, rows drawn with replacement, a dataset of 4,000 questions); identical pipelines (the
   false-winner rate over `--draws` runs at alpha 0.05) and B worse by 0.05 (mean samples to a
   decision, against the fixed-size paired z-test of the same power, and of power 0.8).

Seeded; pure Python; about 2-4 minutes on one core (`--draws 200` for a quick look):

    python bench/inference.py [--data ../shared/data] [--draws 1000] [--json inference.json]

Data licences: HaluEval (MIT; knowledge from HotpotQA, CC BY-SA 4.0), HotpotQA (CC BY-SA 4.0),
BEGIN/Wizard of Wikipedia (CC BY 4.0), TruthfulQA (Apache-2.0), ALCE human evaluation (MIT).
"""
from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from evaluator import OfflineJudge, RAGEvaluator  # noqa: E402
from evaluator.analysis.inference import (  # noqa: E402
    A, UNDECIDED, ConfidenceSequence, corrected_mean, decide, fixed_sample_size, labels_only_mean, priorities,
    priority_sample, sampling_weights, uncertainty, weighted_corrected_mean,
)
from evaluator.model import EvalSample  # noqa: E402

POOLS = {
    "faithfulness": [("halueval_qa", "faithful", None), ("begin_wow", "faithful", None)],
    "answer_relevancy": [("truthfulqa_informativeness", "informative", None), ("relevancy_swap", "relevant", None),
                         ("alce_utility", "utility", lambda u: (u - 1) / 4)],
    "answer_correctness": [("truthfulqa_correctness", "correct", None)],
    "context_recall": [("hotpotqa_context", "context_recall_gold", None)],
}
SIZES = (30, 100, 300)
AB_PAIRS = 4000  # the simulated A/B dataset's size (the cap, and the horizon its bets are tuned for)
Pool = Tuple[List[float], List[float]]  # (judge scores, labels), aligned


def load_pool(data: Path, metric: str) -> Pool:
    scores: List[float] = []
    labels: List[float] = []
    for name, key, transform in POOLS[metric]:
        rows = [json.loads(line) for line in (data / f"{name}.dev.jsonl").open(encoding="utf-8") if line.strip()]
        samples = [EvalSample(r["question"], r["answer"] or "", list(r["contexts"] or []), r.get("ground_truth"),
                              r["sample_id"]) for r in rows]
        report = RAGEvaluator(OfflineJudge(), metrics=[metric]).evaluate_dataset(samples)
        for row, result in zip(rows, report.results):
            ms = result.scores.get(metric)
            label = row["labels"].get(key)
            if ms is None or ms.skipped or label is None:
                continue
            scores.append(ms.score)
            labels.append(float(transform(label) if transform else label))
    return scores, labels


def coverage(pool: Pool, n: int, draws: int, seed: int) -> Dict[str, float]:
    scores, labels = pool
    truth = statistics.fmean(labels)
    rng = random.Random(seed)
    covered = plain_covered = 0
    ratios, plain_ratios = [], []
    for _ in range(draws):
        drawn = rng.sample(range(len(scores)), n)
        given = {i: labels[i] for i in drawn}
        c = corrected_mean(scores, given)
        p = corrected_mean(scores, given, tuned=False)
        low, high = labels_only_mean(list(given.values()), n_rows=len(scores))
        covered += c.low <= truth <= c.high
        plain_covered += p.low <= truth <= p.high
        if high > low:
            ratios.append((c.high - c.low) / (high - low))
            plain_ratios.append((p.high - p.low) / (high - low))
    return {"n": n, "coverage": covered / draws, "width_ratio": statistics.fmean(ratios),
            "ppi_coverage": plain_covered / draws, "ppi_width_ratio": statistics.fmean(plain_ratios)}


def active_draw(pool: Pool, weights: Sequence[float], n: int, seed: int):
    scores, labels = pool
    prios = priorities(weights, seed)
    top = sorted(range(len(scores)), key=lambda i: -prios[i])[:n]
    sample = priority_sample(weights, prios, top)
    return weighted_corrected_mean(scores, {i: labels[i] for i in top}, sample.probabilities)


def active_vs_random(pool: Pool, draws: int, seed: int, mix: float, uncertainties: Sequence[float]) -> Dict[str, float]:
    """Labels the informative queue needs for the real error random PPI++ has at n=100: both errors
    measured over `draws` draws at n=100, then active's variance scaled as (1/n - 1/N), as a sample's
    variance shrinks, to the n where it matches random's."""
    scores, labels = pool
    big_n = len(scores)
    truth = statistics.fmean(labels)
    weights = sampling_weights(uncertainties, mix)
    rng = random.Random(seed)
    randoms = [corrected_mean(scores, {i: labels[i] for i in rng.sample(range(big_n), 100)}) for _ in range(draws)]
    actives = [active_draw(pool, weights, 100, seed + 7919 * d) for d in range(draws)]
    mse = lambda cs: statistics.fmean((c.mean - truth) ** 2 for c in cs)  # noqa: E731
    var_r, var_a = mse(randoms), mse(actives)
    needed = 1 / (var_r / var_a * (1 / 100 - 1 / big_n) + 1 / big_n)
    return {"random_rmse": math.sqrt(var_r), "active_rmse": math.sqrt(var_a), "active_labels": round(needed),
            "labels_ratio": needed / 100,
            "random_half_width": statistics.fmean(c.half_width for c in randoms),
            "active_half_width": statistics.fmean(c.half_width for c in actives),
            "random_coverage": statistics.fmean(c.low <= truth <= c.high for c in randoms),
            "active_coverage": statistics.fmean(c.low <= truth <= c.high for c in actives)}


def ab_runs(probs: Sequence[float], delta: float, runs: int, max_samples: int, seed: int,
            tie: float = 0.02) -> Dict[str, float]:
    rng = random.Random(seed)
    decisions: Dict[str, int] = {}
    used: List[int] = []
    diffs: List[float] = []
    for _ in range(runs):
        cs = ConfidenceSequence(alpha=0.05, horizon=max_samples)  # as `ragmeter ab` on a dataset of that size
        decision, t = UNDECIDED, 0
        while t < max_samples and decision == UNDECIDED:
            p = rng.choice(probs)
            d = float(rng.random() < p) - float(rng.random() < p - delta)
            diffs.append(d)
            decision = decide(cs.add(d), tie)
            t += 1
        decisions[decision] = decisions.get(decision, 0) + 1
        used.append(t)
    return {"runs": runs, "decisions": decisions, "mean_samples": statistics.fmean(used),
            "median_samples": statistics.median(used), "sd": statistics.pstdev(diffs)}


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--mix", type=float, default=0.5, help="uniform share of the active weights")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--json", default=None)
    parser.add_argument("--parts", default="1,2,3", help="which figures to compute, e.g. 3 (default all)")
    args = parser.parse_args(list(argv) or None)
    start = time.perf_counter()
    parts = set(args.parts.split(","))
    pools = {m: load_pool(Path(args.data), m) for m in POOLS}
    out: Dict[str, object] = {"draws": args.draws}
    print(f"1. corrected mean (PPI++; plain PPI in brackets), {args.draws} draws, 95% intervals")
    print(f"{'pool':<19}{'rows':>5}{'n':>5}  {'coverage':>16}  {'width / labels-only':>22}")
    cover: List[Dict[str, float]] = []
    for metric, pool in pools.items() if "1" in parts else ():
        for n in (n for n in SIZES if n < len(pool[0])):
            c = coverage(pool, n, args.draws, args.seed)
            cover.append({"pool": metric, **c})
            print(f"{metric:<19}{len(pool[0]):>5}{n:>5}  {c['coverage']:>7.3f} [{c['ppi_coverage']:.3f}]"
                  f"  {c['width_ratio']:>12.2f} [{c['ppi_width_ratio']:.2f}]")
    out["coverage"] = cover
    print(f"\n2. informative (active) vs random review: labels for the error random PPI++ has at n=100 "
          f"(RMSE over draws; weights mix {args.mix} with uniform)")
    print(f"{'pool':<19}{'weighting':<29}{'rmse rand':>10}{'active n':>9}{'ratio':>7}{'rmse act@100':>13}"
          f"{'hw rand':>8}{'hw act':>8}{'act cover':>10}")
    active: Dict[str, Dict[str, float]] = {}
    for metric, pool in pools.items() if "2" in parts else ():
        rng = random.Random(args.seed)
        calibrated = (pool[0], [float(rng.random() < s) for s in pool[0]])  # a judge whose score is P(pass)
        binomial = [uncertainty(s) for s in pool[0]]
        for name, p, u in (("offline: flat (as shipped)", pool, [0.5] * len(pool[0])),
                           ("offline: closeness to 0.5", pool, binomial),
                           ("calibrated judge (simulated)", calibrated, binomial)):
            a = active_vs_random(p, args.draws, args.seed, args.mix, u)
            active[f"{metric} / {name}"] = a
            ratio = "n/a" if a["labels_ratio"] is None else f"{a['labels_ratio']:.2f}"
            print(f"{metric:<19}{name:<29}{a['random_rmse']:>10.4f}{str(a['active_labels'] or '>200'):>9}"
                  f"{ratio:>7}{a['active_rmse']:>13.4f}{a['random_half_width']:>8.3f}{a['active_half_width']:>8.3f}"
                  f"{a['active_coverage']:>10.3f}")
    out["active"] = active
    probs = [0.05 + 0.9 * s for s in pools["answer_relevancy"][0]]
    null = ab_runs(probs, 0.0, args.draws, AB_PAIRS, args.seed)
    alt = ab_runs(probs, 0.05, args.draws, AB_PAIRS, args.seed + 1)
    power = alt["decisions"].get(A, 0) / args.draws
    # the fixed test of the same power (a power of 1 in the runs is read as 0.999: a fixed test can't reach 1)
    fixed_same = fixed_sample_size(0.05, alt["sd"], 0.05, min(power, 0.999)) if power > 0.5 else None
    fixed_80 = fixed_sample_size(0.05, alt["sd"], 0.05, 0.8)
    false = (null["decisions"].get("A", 0) + null["decisions"].get("B", 0)) / args.draws
    print(f"\n3. sequential A/B (pass/fail scores, alpha 0.05, tie ±0.02), {args.draws} runs each")
    print(f"identical pipelines: false winner {false:.3%} (decisions {null['decisions']}, a dataset of {AB_PAIRS})")
    print(f"A better by 0.05 (sd of a pair {alt['sd']:.2f}): power {power:.3f} within {AB_PAIRS}; mean samples "
          f"{alt['mean_samples']:.0f} (median {alt['median_samples']:.0f}); fixed test of the same power "
          f"{fixed_same} -> ratio {alt['mean_samples'] / fixed_same if fixed_same else float('nan'):.2f}; "
          f"fixed test at power 0.8: {fixed_80}")
    out["ab"] = {"null": null, "alternative": alt, "false_winner": false, "power": power,
                 "fixed_same_power": fixed_same, "fixed_power_80": fixed_80}
    print(f"\n({time.perf_counter() - start:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
