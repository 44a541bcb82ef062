"""Who gives the scores: `base` (the Judge protocol and the optional parts ragmeter reads), `offline`
(heuristics only), `openai` (any OpenAI-compatible endpoint: retries, rate limits, usage, logprobs),
`health` (early stop and circuit breaker when the judge fails), `batch` (the OpenAI Batch API),
`cache` (SQLite reply cache), `ratelimit` (AIMD concurrency)."""
