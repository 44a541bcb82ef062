"""Reports: a scored run written out for people and tools. `export`: CSV, JSON and the HTML report
(from `templates/`), with every user string escaped and every spreadsheet formula neutralised; `files`: the
streamed CSV, JSON and Parquet writers; `downloads`: a run's files, each built when asked; `frames`: tables of
results for a screen (pandas), with the in-memory filters."""
