"""What is scored and how: `prompts` (judge prompts per metric and language), `parsing` (a reply
becomes a score, never an invented one), `heuristics` (lexical scorers, the offline judge and the 30%
stabiliser), `embeddings` (the opt-in embedding set), `scoring` (one metric of one sample: heuristic,
judge call, blend or visible fallback)."""
