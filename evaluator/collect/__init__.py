"""Production traces scored as they arrive: `ragmeter collect`, an OTLP/HTTP receiver.

    alerts.py    alert rules on a project's live runs: parsed from text, a breach and a recovery each
                 fired once, their state and events in the history (m010)
    webhook.py   alert events posted as JSON (Slack's `text` plus fields), bounded and retried

The top layer (beside cli/): it uses the run path (runs/) and the history (store/).
"""
