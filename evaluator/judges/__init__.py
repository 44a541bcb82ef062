"""Who gives the scores: `base` (the Judge protocol and the optional parts ragmeter reads), `offline`
(heuristics only), `openai` (any OpenAI-compatible endpoint: retries, rate limits, usage), `cache`
(SQLite reply cache), `ratelimit` (AIMD concurrency), `batch` (the OpenAI Batch API: requests files,
batches, and the judges that collect prompts and replay the replies)."""
