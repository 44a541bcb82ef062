"""Who gives the scores: `base` (the Judge protocol and the optional parts ragmeter reads), `offline`
(heuristics only), `openai` (any OpenAI-compatible endpoint: retries, rate limits, usage), `cache`
(SQLite reply cache), `ratelimit` (AIMD concurrency)."""
