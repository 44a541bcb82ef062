"""Who gives the scores: `registry` (the judge kinds a run can name: built-ins and `ragmeter.judges`
plugins), `base` (the Judge protocol and the optional parts ragmeter reads), `resilient` (retries,
Retry-After, rate limits, cache and usage for any judge), `offline` (heuristics only), `openai` (the
chat-completions protocol), `health` (early stop and circuit breaker when the judge fails), `batch`
(the OpenAI Batch API), `cache` (SQLite reply cache), `ratelimit` (AIMD concurrency)."""
