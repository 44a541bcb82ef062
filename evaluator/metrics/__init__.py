"""What is scored and how. A metric is one Metric (`metric.Metric`), registered by name:

- one module per built-in metric, holding all of it (what it needs, its English and Arabic prompts, its
  verdict reader, its heuristic in each heuristic set, the fields its sanity check reads, its claims
  view): `faithfulness`, `answer_relevancy`, `context_precision`, `context_recall`, `answer_correctness`;
  `rules` (keyword coverage, expected-document recall); `tools` (agents); `retrieval` (hit@k, recall@k,
  precision@k, mrr@k, ndcg@k by document id: made from the name, k included); `rubric` (metrics in
  plain words); `conversational` (whole-conversation metrics);
- `metric`, `registry`, `builtin`: the Metric dataclass, the registry (plus entry-point plugins), and
  the list of built-ins, which come in by the plugin door (adding one: its module and a line there);
- `prompts` (the prompt layout: guard, fenced data, shared prefix), `languages` (a row's language; one
  without prompts of its own is scored with the English ones, noted), `judging` (one judge call per
  repeat), `combined` (one call for every metric of a sample, opt-in), `parsing` (a reply becomes the
  judge's own score, never an invented one), `geval` (logprob weighting);
- `heuristics` (the lexical pieces the heuristics share), `offline` (a metric's score in the chosen
  heuristic set), `heuristic_sets` (the sets by name), `embeddings` (the opt-in embedding model),
  `sanity` (garbage caps), `units`: the offline scorers and their checks; `claim_spans` (a claim
  located in the text, for the metrics' claims views);
- `examples`: reviewers' few-shot examples (ExampleSet) and the prompts they make (built in review/);
- `scoring`: one metric of one sample — heuristic, judge call(s), blend, or a visible fallback.
"""
