"""Alert rules on a project's live runs: parsed from text, evaluated over the scored rows in trace_end
order, fired once per breach and once on recovery, their state kept in the history.

Two kinds of rule (the metric may be any scored metric, or `overall`):

    faithfulness < 0.75 over 200                the mean of the last 200 scored rows is under 0.75
    faithfulness mean over the last 200 < 0.75  the same, as the issue wrote it
    faithfulness drop of 0.05 against 3f2a9c1d  the mean of the last N rows (`over N`, default 200)
                                                is 0.05 or more under that run's mean; `against
                                                baseline` is the newest run named "baseline"

A rule is judged once its window is full. It breaches when the window's mean crosses its limit and
recovers only once the mean is back past the limit by MARGIN (hysteresis: one sample moves a mean of
200 by at most 0.005, so a mean hovering at the limit cannot flap). Each rule's state and cursor (the
last row it read) live in the `alert_state` table, each breach and recovery in `alert_events`
(store/history.py m010): a restarted collector refills the window from the rows before its cursor,
goes on from there, and fires nothing it fired before. Events are written first and posted after
(collect/webhook.py), so a webhook that is down loses nothing: undelivered events are posted again
at the next poll, up to MAX_ATTEMPTS times.
"""
from __future__ import annotations

import json
import re
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Deque, Dict, List, Optional, Sequence, Tuple

from ..analysis import timeline as tl
from ..errors import RagmeterError
from ..store.history import RunStore

DEFAULT_WINDOW = 200
MARGIN = 0.02  # how far past its limit a breached mean must come back to count as recovered
MAX_ATTEMPTS = 5  # webhook posts per event before it is marked as given up
OPS = ("<=", ">=", "<", ">")
BASELINE = "baseline"
BREACH, RECOVERED, OK = "breach", "recovered", "ok"
EXAMPLES = "e.g. `faithfulness < 0.75 over 200` or `faithfulness drop of 0.05 against baseline`"

Cursor = Tuple[str, str, int]


class AlertRuleError(RagmeterError, ValueError):
    """An alert rule's text cannot be read, or its baseline run cannot be found."""


@dataclass(frozen=True)
class Rule:
    """One alert rule. `threshold` for a fixed limit; `drop` and `against` for a drop against a run."""

    metric: str
    op: str = "<"
    threshold: Optional[float] = None
    window: int = DEFAULT_WINDOW
    drop: Optional[float] = None
    against: Optional[str] = None  # a run id, or BASELINE

    @property
    def text(self) -> str:
        """The rule in its one canonical spelling (its key in the history)."""
        if self.drop is not None:
            return f"{self.metric} drop of {self.drop:g} against {self.against} over {self.window}"
        return f"{self.metric} {self.op} {self.threshold:g} over {self.window}"


# -- parsing --------------------------------------------------------------------------------------
def _fail(text: str, problem: str) -> AlertRuleError:
    return AlertRuleError(f"Alert rule {text!r}: {problem}. Write a rule as {EXAMPLES}.")


def _words(text: str) -> List[str]:
    spaced = re.sub(r"(<=|>=|<|>)", r" \1 ", text)  # `faithfulness<0.75` reads like `faithfulness < 0.75`
    return spaced.lower().split() if spaced.strip() else []


def _number(text: str, word: str, what: str) -> float:
    try:
        value = float(word)
    except ValueError:
        raise _fail(text, f"{word!r} is not a number ({what})") from None
    if not 0.0 <= value <= 1.0:
        raise _fail(text, f"{word} is outside 0-1 ({what}: scores run from 0 to 1)")
    return value


def _count(text: str, word: str) -> int:
    if not word.isdigit() or int(word) < 1:
        raise _fail(text, f"{word!r} is not a count of samples (the window after `over`, e.g. 200)")
    return int(word)


def _metric(text: str, word: str) -> str:
    try:
        return tl.check_metric(word)
    except ValueError:
        raise _fail(text, f"{word!r} is not a metric name (e.g. faithfulness, answer_relevancy, overall)") from None


def _expect(text: str, words: List[str], i: int, wanted: str) -> None:
    found = words[i] if i < len(words) else None
    if found != wanted:
        shown = f"found {found!r}" if found is not None else "the rule ends there"
        raise _fail(text, f"expected {wanted!r} as word {i + 1} ({shown})")


def _window(text: str, words: List[str], i: int) -> int:
    """`over N` from word i on (optional), and nothing after it."""
    if i == len(words):
        return DEFAULT_WINDOW
    _expect(text, words, i, "over")
    if i + 1 == len(words):
        raise _fail(text, "`over` needs a count of samples after it (e.g. over 200)")
    if i + 2 < len(words):
        raise _fail(text, f"unexpected {' '.join(words[i + 2:])!r} after `over {words[i + 1]}`")
    return _count(text, words[i + 1])


def _drop_rule(text: str, metric: str, words: List[str], i: int) -> Rule:
    _expect(text, words, i, "drop")
    _expect(text, words, i + 1, "of")
    if i + 2 >= len(words):
        raise _fail(text, "`drop of` needs the size of the drop after it (e.g. drop of 0.05)")
    drop = _number(text, words[i + 2], "the size of the drop")
    _expect(text, words, i + 3, "against")
    if i + 4 >= len(words):
        raise _fail(text, "`against` needs a run id or `baseline` after it")
    against = words[i + 4]
    if not re.fullmatch(r"[0-9a-z_-]{1,64}", against):
        raise _fail(text, f"{against!r} is not a run id (copy one from the History page) or `baseline`")
    return Rule(metric=metric, op="<", drop=drop, against=against, window=_window(text, words, i + 5))


def parse_rule(text: str) -> Rule:
    """The Rule that `text` says; AlertRuleError naming the word that is wrong, with an example."""
    words = _words(text or "")
    if not words:
        raise _fail(text or "", "it is empty")
    if words[0] == "drop":  # no metric named: the overall score
        return _drop_rule(text, tl.OVERALL, words, 0)
    metric = _metric(text, words[0])
    if len(words) > 1 and words[1] == "drop":
        return _drop_rule(text, metric, words, 1)
    if words[1:4] == ["mean", "over", "the"] and len(words) >= 5 and words[4] == "last":  # the wording
        if len(words) != 8:
            raise _fail(text, "write `METRIC mean over the last N < VALUE`")
        window, op, value = _count(text, words[5]), words[6], words[7]
    else:
        if len(words) < 3:
            raise _fail(text, f"after {words[0]!r} comes a comparison (<, <=, >, >=) and a value, or `drop of`")
        op, value, window = words[1], words[2], _window(text, words, 3)
    if op not in OPS:
        raise _fail(text, f"{op!r} is not a comparison (use <, <=, > or >=)")
    return Rule(metric=metric, op=op, threshold=_number(text, value, "the threshold"), window=window)


def parse_rules(texts: Sequence[str]) -> List[Rule]:
    """Every rule of `texts` (one error names the first bad one); the same rule twice counts once."""
    rules: Dict[str, Rule] = {}
    for text in texts:
        rule = parse_rule(text)
        rules.setdefault(rule.text, rule)
    return list(rules.values())


# -- evaluating -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Transition:
    """A rule's breach or recovery, at the row whose score moved the window's mean across."""

    rule: Rule
    state: str  # BREACH or RECOVERED
    value: float  # the window's mean
    limit: float
    row: tl.ScoredRow


def _crossed(op: str, mean: float, limit: float) -> bool:
    return {"<": mean < limit, "<=": mean <= limit, ">": mean > limit, ">=": mean >= limit}[op]


def _back(op: str, mean: float, limit: float) -> bool:
    """Whether a breached mean has come back past the limit by MARGIN."""
    return mean >= limit + MARGIN if op in ("<", "<=") else mean <= limit - MARGIN


@dataclass
class Watch:
    """One rule's rolling window over the rows fed to it, in order; `feed` says when its state changes."""

    rule: Rule
    limit: float
    state: str = OK
    values: Deque[float] = field(default_factory=deque)
    total: float = 0.0

    def add(self, value: float) -> None:
        """Put a row's score in the window without judging (refilling it after a restart)."""
        self.values.append(value)
        self.total += value
        if len(self.values) > self.rule.window:
            self.total -= self.values.popleft()

    @property
    def mean(self) -> Optional[float]:
        return self.total / len(self.values) if len(self.values) == self.rule.window else None

    def feed(self, row: tl.ScoredRow) -> Optional[Transition]:
        """Add a row; a Transition when the full window's mean breaches or recovers."""
        self.add(row.value)
        mean = self.mean
        if mean is None:
            return None
        if self.state != BREACH and _crossed(self.rule.op, mean, self.limit):
            self.state = BREACH
        elif self.state == BREACH and _back(self.rule.op, mean, self.limit):
            self.state = RECOVERED
        else:
            return None
        return Transition(self.rule, self.state, round(mean, 4), round(self.limit, 4), row)


def evaluate(rule: Rule, limit: float, rows: Sequence[tl.ScoredRow], state: str = OK) -> List[Transition]:
    """Every breach and recovery of `rule` over `rows` (in trace_end order), from `state`."""
    watch = Watch(rule, limit, state)
    return [t for t in (watch.feed(row) for row in rows) if t is not None]


def payload(event: "AlertEvent") -> Dict[str, object]:
    """The webhook's JSON: Slack's `text` line plus the structured fields a script reads."""
    return {"text": event.message, "rule": event.rule, "metric": event.metric, "value": event.value,
            "threshold": event.threshold, "run": event.run_id, "sample": event.idx, "project": event.project,
            "state": event.state, "at": event.at}


@dataclass(frozen=True)
class AlertEvent:
    """A breach or recovery as stored (alert_events) and shown on the Monitor page."""

    event_id: str
    project: str
    rule: str
    metric: str
    state: str
    value: float
    threshold: float
    at: str  # the trace_end of the row that moved the mean
    run_id: Optional[str]
    idx: Optional[int]
    created_at: str
    delivery: Optional[str] = None  # None: not posted yet (or no webhook); "delivered ..." or "gave up: ..."
    attempts: int = 0

    @property
    def message(self) -> str:
        """One line for people (Slack's text field): Slack's three control characters escaped."""
        verb = "breached" if self.state == BREACH else "recovered"
        line = (f"ragmeter: {self.project}: `{self.rule}` {verb}: {self.metric} mean {self.value:.3f} "
                f"(limit {self.threshold:.3f}) at {self.at}")
        return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_EVENT_COLUMNS = ("event_id, project, rule, metric, state, value, threshold, at, run_id, idx, created_at, "
                  "delivery, attempts")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def events(store: RunStore, project: str, *, limit: int = 200) -> List[AlertEvent]:
    """The project's breaches and recoveries, newest first (at most `limit`)."""
    rows = store.query(f"SELECT {_EVENT_COLUMNS} FROM alert_events WHERE project = ? ORDER BY at DESC, "
                       "created_at DESC LIMIT ?", (project, int(limit)))
    return [AlertEvent(*row) for row in rows]


def undelivered(store: RunStore, project: str) -> List[AlertEvent]:
    """The project's events not posted yet, oldest first."""
    rows = store.query(f"SELECT {_EVENT_COLUMNS} FROM alert_events WHERE project = ? AND delivery IS NULL "
                       "ORDER BY at, created_at", (project,))
    return [AlertEvent(*row) for row in rows]


def mark_delivery(store: RunStore, event: AlertEvent, ok: bool, detail: str) -> None:
    """Record one post of `event`: delivered, failed (tried again later), or given up after MAX_ATTEMPTS."""
    attempts = event.attempts + 1
    delivery = f"delivered {_now()}" if ok else (f"gave up: {detail}" if attempts >= MAX_ATTEMPTS else None)
    store.write("UPDATE alert_events SET delivery = ?, attempts = ? WHERE event_id = ?",
                (delivery, attempts, event.event_id))


def _load_state(store: RunStore, project: str, rule: Rule) -> Tuple[str, Optional[Cursor]]:
    rows = store.query("SELECT state, cursor FROM alert_state WHERE project = ? AND rule = ?", (project, rule.text))
    if not rows:
        return OK, None
    cursor = json.loads(rows[0][1]) if rows[0][1] else None
    return str(rows[0][0]), (str(cursor[0]), str(cursor[1]), int(cursor[2])) if cursor else None


def _event(project: str, t: Transition) -> AlertEvent:
    return AlertEvent(uuid.uuid4().hex, project, t.rule.text, t.rule.metric, t.state, t.value, t.limit,
                      t.row.trace_end, t.row.run_id, t.row.idx, _now())


def _save(store: RunStore, project: str, watch: Watch, cursor: Cursor, new: List[AlertEvent]) -> None:
    """The rule's state, cursor and new events. Events first: a crash between the two writes replays the rows
    after the old cursor, and an event already stored for the same rule, state and row is not stored twice."""
    for e in new:
        if not store.query("SELECT 1 FROM alert_events WHERE project = ? AND rule = ? AND state = ? AND at = ? "
                           "AND run_id = ? AND idx = ?", (project, e.rule, e.state, e.at, e.run_id, e.idx)):
            store.write(f"INSERT INTO alert_events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (e.event_id, e.project, e.rule, e.metric, e.state, e.value, e.threshold, e.at, e.run_id,
                         e.idx, e.created_at, e.delivery, e.attempts))
    state = BREACH if watch.state == BREACH else OK
    store.write("INSERT INTO alert_state (project, rule, state, value, cursor, changed_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (project, rule) DO UPDATE SET state = excluded.state, value = excluded.value, "
                "cursor = excluded.cursor, changed_at = excluded.changed_at",
                (project, watch.rule.text, state, watch.mean, json.dumps(list(cursor)), _now()))


class AlertMonitor:
    """A project's rules over its live runs: `poll()` reads the rows scored since the last poll (or
    restart), stores each breach and recovery, and returns them; the caller posts them (deliver)."""

    def __init__(self, store: RunStore, project: str, rules: Sequence[Rule], *, since: Optional[str] = None) -> None:
        """A rule read for the first time starts with the rows from `since` (default: the last
        timeline.WINDOW_DAYS days), never with months of history."""
        self.store, self.project, self.rules = store, project, list(rules)
        self.since = tl.window_start() if since is None else since
        self._watches: Dict[str, Tuple[Watch, Optional[Cursor]]] = {}
        for rule in self.rules:  # a baseline that cannot be found is said at start, not at every poll
            self.limit(rule)

    def limit(self, rule: Rule) -> float:
        """The mean a rule's window is held against: its threshold, or its run's mean less the drop."""
        if rule.drop is None:
            assert rule.threshold is not None
            return rule.threshold
        run_id = self._baseline_run() if rule.against == BASELINE else str(rule.against)
        mean = tl.run_mean(self.store, run_id, rule.metric)
        if mean is None:
            raise AlertRuleError(f"Alert rule {rule.text!r}: run {run_id} has no {rule.metric} scores to compare "
                                 "against; name a run that scored that metric.")
        return mean - rule.drop

    def _baseline_run(self) -> str:
        rows = self.store.query("SELECT run_id FROM runs WHERE name = ? ORDER BY (project = ?) DESC, created_at DESC "
                                "LIMIT 1", (BASELINE, self.project))
        if not rows:
            raise AlertRuleError(f"No run named {BASELINE!r} in the history: rename the run to compare against "
                                 "'baseline' on the History page, or name its id (`drop of 0.05 against RUN_ID`).")
        return str(rows[0][0])

    def _watch(self, rule: Rule) -> Tuple[Watch, Optional[Cursor]]:
        """The rule's window: kept between polls; after a restart, its state and cursor from the history and
        its window refilled from the rows up to the cursor."""
        if rule.text not in self._watches:
            state, cursor = _load_state(self.store, self.project, rule)
            watch = Watch(rule, self.limit(rule), state)
            if cursor is not None:
                for row in tl.last_rows(self.store, self.project, rule.metric, upto=cursor, n=rule.window):
                    watch.add(row.value)
            self._watches[rule.text] = (watch, cursor)
        return self._watches[rule.text]

    def poll(self) -> List[AlertEvent]:
        """Feed every rule the rows scored since its cursor; the breaches and recoveries, stored."""
        found: List[AlertEvent] = []
        for rule in self.rules:
            watch, cursor = self._watch(rule)
            new, last = [], cursor
            for row in tl.scored_rows(self.store, self.project, rule.metric, after=cursor, since=self.since):
                change = watch.feed(row)
                if change is not None:
                    new.append(_event(self.project, change))
                last = row.key
            if last is not None and last != cursor:
                _save(self.store, self.project, watch, last, new)
                self._watches[rule.text] = (watch, last)
            found.extend(new)
        return found


__all__ = ["AlertEvent", "AlertMonitor", "AlertRuleError", "BREACH", "DEFAULT_WINDOW", "MARGIN", "OK", "RECOVERED",
           "Rule", "Transition", "Watch", "evaluate", "events", "mark_delivery", "parse_rule", "parse_rules", "payload",
           "undelivered"]
