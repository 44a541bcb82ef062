"""Files in and out: `datasets` (CSV, JSONL, JSON and other tools' files -> EvalSample), `records`
(the lossless dict form of results), `export` (CSV, JSON and the HTML report), `redact` (secrets removed
before anything is stored or exported)."""
