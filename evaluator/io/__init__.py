"""Files in and out. `filetypes`: every file type read or written, by purpose, and the one CSV writer with its
formula guard. Reading: `datasets` (load_dataset, inspect_dataset; a conversation file's rows from
`conversations`) over `rows` (a source's records, any format), `sources`, `encodings`, `csv_rows`,
`json_rows`, `arrow_rows` (Parquet, Hugging Face save_to_disk), `dialects` (other tools' column names and
cell forms; DETECTORS lists every other tool's format, in one place), `cells`, `plans`, `surfaces` (advice
worded for library, CLI or dashboard), `paths` and `fields` (dotted paths into a record: `--target-field`,
dataset columns), `shapes` (a reply's answer, contexts and tool calls, whether a file or a target gave it),
`doc_ids` and `context_ids` (ranked retrieval ids, graded relevance, ids in context objects), `versions`
(a test set's content hash, recorded with each run), `uploads` (a file's bytes as the dashboard received them:
a preview, the samples under a mapping, conversations), `typed` (a sample typed into a form).
Other tools' files, one module each: `traces` (OpenInference / OTLP spans), `experiments` (LangSmith,
Langfuse items, MLflow, promptfoo), `deepeval_runs`, `inspect_logs` (.eval archives and .json logs),
`langfuse_traces`; `grades` (their scores as external_<tool>_<metric>).
Writing: `records` (the lossless dict form of results), `frames` (tables and Parquet), `redact` (secrets
removed before anything is stored). Reports for people (CSV, JSON, HTML) are in report/, a layer up."""
