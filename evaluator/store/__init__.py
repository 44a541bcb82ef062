"""The run history: runs, samples, results and reviews in SQLite or PostgreSQL.

    history.py  RunStore: create, record, read back, list, delete runs
    naming.py   a run's name (checked, its default) and its scorer's label ("MODEL at HOST", "offline heuristics (SET)")
    db.py       the two databases (SQLite file, PostgreSQL URL) behind one SQL text
    pages.py    a run read the way pages need it: SQL aggregates, 50-row pages, one row
    reviews.py  people's reviews of a run's scores
    jobs.py     the queue workers claim runs and generations from
    generations.py  test-set generations run as jobs (settings, chunks, items kept, outcome)
"""
