"""Scoring: the evaluator, one pass over samples, how a run ends, estimates and the Batch API.

    evaluation.py     RAGEvaluator: score one sample or a dataset, concurrently, in order
    run_config.py     RunConfig: a run's choices as plain data; builds the judge and the evaluator
    conversations.py  a conversation's row: each reply in context, then the whole (evaluation.py calls it)
    passes.py         the start and end every scoring pass shares (progress, usage, judge health)
    progress.py       the one progress reporter: a pass's count and callbacks, the console line (CLI too)
    verdict.py        how a run ended: one decision for every surface (the Verdict data is in model.py)
    summaries.py      a stored run's summary (analysis/summary.py): read, or built once and stored
    costs.py          judge calls, tokens and cost estimated before a run
    batching.py       scoring through the OpenAI Batch API
"""
