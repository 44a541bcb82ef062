"""What is scored and how: `metric` (one Metric definition per metric), `builtin` (the seven built-in
entries), `registry` (name -> Metric, register(), entry-point plugins), `rubric` (criteria in plain words,
from Python or TOML), `prompts` (judge prompts per metric and language), `parsing` (a reply becomes a
score, never an invented one), `judging` (one judge call per repeat), `geval` (probability-weighted
scores from token logprobs), `heuristics` (lexical scorers, the offline judge and the 30% stabiliser),
`sanity` (garbage caps), `rules` (keyword coverage, expected-doc recall), `embeddings` (the opt-in
embedding set), `scoring` (one metric of one sample: heuristic, judge calls, blend or visible fallback)."""
