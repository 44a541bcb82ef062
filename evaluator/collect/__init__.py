"""Production traces scored as they arrive: `ragmeter collect`, an OTLP/HTTP receiver.

    otlp.py      request bodies (protobuf or JSON, gzip or not) -> spans; spans grouped into finished traces
    sampling.py  which finished traces are judged: a rate, attribute rules, a cap per hour
    live.py      sampled traces appended to a rolling run per project and day, and scored by workers
    server.py    the HTTP server: bearer token, size caps, traces-per-second limit, counters, GET /status
    alerts.py    alert rules on a project's live runs: parsed from text, a breach and a recovery each
                 fired once, their state and events in the history (m010)
    webhook.py   alert events posted as JSON (Slack's `text` plus fields), bounded and retried

The top layer (beside cli/): it uses the run path (runs/) and the history (store/).
"""
