"""What is scored and how. A metric is defined once (`metric.Metric`) and registered by name:

- `metric`, `registry`, `builtin`: the Metric dataclass, the registry (plus entry-point plugins), the
  built-in entries; `rubric` (metrics in plain words), `rules` (keyword / expected-doc), `tools` (agents),
  `retrieval` (hit@k, recall@k, precision@k, mrr@k, ndcg@k by document id: made from the name, k included);
- `prompts` (judge prompts per language, with fenced data), `languages` (a row's language; one without
  prompts of its own is scored with the English ones, noted), `judging` (one judge call per repeat),
  `parsing` (a reply becomes the judge's own score, never an invented one), `geval` (logprob weighting);
- `heuristics`, `heuristic_sets`, `embeddings`, `sanity`, `units`: the offline scorers and their checks;
- `examples`: reviewers' few-shot examples (ExampleSet) and the prompts they make (built in review/);
- `scoring`: one metric of one sample — heuristic, judge call(s), blend, or a visible fallback.
"""
