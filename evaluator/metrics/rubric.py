"""Rubric metrics: a criterion in plain words, judged by the LLM (deepeval's GEval, ragas' AspectCritic).

In Python:

    RubricMetric("politeness", "The answer is polite and professional: no sarcasm, no blame.",
                 fields=("question", "answer"), scale="1-5", steps=("Read the tone", "Look for blame"))

In a TOML file (`--rubrics FILE.toml`, or import/export on the dashboard), one table per metric:

    [politeness]
    criteria = "The answer is polite and professional: no sarcasm, no blame."
    fields = ["question", "answer"]   # what the judge sees: question, answer, contexts, ground_truth
    scale = "1-5"                     # "0-1" (default), "1-5" or "pass-fail"
    steps = ["Read the answer's tone", "Look for blame or sarcasm"]   # optional

A rubric costs one judge call per sample (per repeat). It has no heuristic, so offline it is
skipped ("needs a judge") and a failed judge call leaves it unscored, never a made-up number.
Scores are normalised to 0-1: 1-5 -> (s-1)/4, pass -> 1, fail -> 0. On the 1-5 and pass-fail
scales the reply is a single score token, so a judge that returns token probabilities gets a
probability-weighted score (G-Eval).
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..errors import MetricError
from .builtin import BUILTINS
from .metric import Metric
from .parsing import SCALES
from .prompts import fence

RUBRIC_FIELDS = ("question", "answer", "contexts", "ground_truth")
DEFAULT_FIELDS = ("question", "answer")
_KEYS = ("criteria", "fields", "scale", "steps", "level")
LEVELS = ("turn", "conversation")  # for conversation datasets: score each assistant turn, or the whole chat
BUILTIN_NAMES = frozenset(m.name for m in BUILTINS)

# The rubric prompt. Reasoning comes before the score so the judge thinks first (G-Eval's
# chain of thought), and the score is the last value, one token, for logprob weighting.
RUBRIC_EN = """Judge the data below on one criterion.
CRITERION: {criteria}
{steps}{scale_rule}
{{guard}}
{{json_only}}
{{{{"reasoning": "<one sentence>", "score": {score_shape}}}}}

{{data}}"""

_SCALE_RULES = {
    "0-1": ("Score from 0.0 (does not meet the criterion at all) to 1.0 (fully meets it).", "<0.0-1.0>"),
    "1-5": ("Score on a 1-5 scale: 1 = does not meet the criterion at all, 3 = partly, 5 = fully meets it.",
            "<1 | 2 | 3 | 4 | 5>"),
    "pass-fail": ("Score 1 if the criterion is met (pass), 0 if it is not (fail).", "<1 | 0>"),
}


def _literal(text: str) -> str:
    """User text placed in a template: braces escaped for str.format, data fence markers removed."""
    return fence(text).replace("{", "{{").replace("}", "}}")


def rubric_prompt(criteria: str, scale: str, steps: Sequence[str]) -> str:
    """The prompt template (with {guard}, {json_only}, {data} slots) for one rubric."""
    rule, shape = _SCALE_RULES[scale]
    listed = "".join(f"{i}. {_literal(s)}\n" for i, s in enumerate(steps, 1))
    return RUBRIC_EN.format(criteria=_literal(" ".join(criteria.split())),
                            steps=f"Evaluation steps:\n{listed}" if listed else "",
                            scale_rule=rule, score_shape=shape)


class RubricMetric(Metric):
    """A judged Metric built from a criterion in plain words; see the module docstring.

    `fields` are what the judge sees and what the metric needs: a sample with one of them empty
    is skipped with the reason.
    """

    criteria: str
    steps: Tuple[str, ...]
    level: str

    def __init__(self, name: str, criteria: str, fields: Sequence[str] = DEFAULT_FIELDS,
                 scale: str = "0-1", steps: Sequence[str] = (), level: str = "turn") -> None:
        fields, steps = tuple(fields), tuple(steps)
        _check(name, criteria, fields, scale, steps)
        if level not in LEVELS:
            raise MetricError(f"rubric {name!r}: level {level!r} is not one of {', '.join(LEVELS)}")
        super().__init__(name, needs=fields, prompts={"en": rubric_prompt(criteria, scale, steps)}, shows=fields,
                         scale=scale, logprobs=scale != "0-1",
                         advice=(f"Answers fall short of the rubric: {criteria}",
                                 ("Read the lowest-scoring samples' reasoning in the drill-down to see what the "
                                  "judge objects to.",
                                  "State the criterion in the system prompt of the application under test.")),
                         description=criteria)
        object.__setattr__(self, "criteria", criteria)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "level", level)

    def to_dict(self) -> Dict[str, Any]:
        """The TOML table of this rubric (also what run settings keep)."""
        table: Dict[str, Any] = {"criteria": self.criteria, "fields": list(self.shows), "scale": self.scale}
        if self.steps:
            table["steps"] = list(self.steps)
        if self.level != "turn":
            table["level"] = self.level
        return table


def _check(name: str, criteria: str, fields: Tuple[str, ...], scale: str, steps: Tuple[str, ...]) -> None:
    where = f"rubric {name!r}"
    if name in BUILTIN_NAMES:
        raise MetricError(f"{where}: that name is a built-in metric's; choose another name")
    if not isinstance(criteria, str) or not criteria.strip():
        raise MetricError(f"{where}: criteria is empty; say in plain words what a good answer does")
    if not fields:
        raise MetricError(f"{where}: fields is empty; choose from {', '.join(RUBRIC_FIELDS)}")
    unknown = [f for f in fields if f not in RUBRIC_FIELDS]
    if unknown:
        raise MetricError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; "
                         f"choose from {', '.join(RUBRIC_FIELDS)}")
    if len(set(fields)) != len(fields):
        raise MetricError(f"{where}: a field is listed twice in {list(fields)}")
    if scale not in SCALES:
        raise MetricError(f"{where}: scale {scale!r} is not one of {', '.join(SCALES)}")
    if not all(isinstance(s, str) and s.strip() for s in steps):
        raise MetricError(f"{where}: steps must be non-empty strings")


def rubric_from_table(name: str, table: Any, source: str = "rubrics") -> RubricMetric:
    """One rubric from its TOML table (or run-settings dict); errors name the source and the rubric."""
    if not isinstance(table, Mapping):
        raise MetricError(f"{source}: [{name}] must be a table with criteria = \"...\", not {type(table).__name__}")
    unknown = [k for k in table if k not in _KEYS]
    if unknown:
        raise MetricError(f"{source}: [{name}] has unknown key(s) {', '.join(unknown)}; "
                         f"a rubric has {', '.join(_KEYS)}")
    for key in ("fields", "steps"):
        if key in table and (isinstance(table[key], str) or not isinstance(table[key], list)):
            raise MetricError(f"{source}: [{name}] {key} must be a list of strings, e.g. {key} = [\"answer\"]")
    try:
        return RubricMetric(name, table.get("criteria", ""), table.get("fields", DEFAULT_FIELDS),
                            table.get("scale", "0-1"), table.get("steps", ()), table.get("level", "turn"))
    except ValueError as exc:
        raise MetricError(f"{source}: {exc}") from None


def rubrics_from_dict(data: Mapping[str, Any], source: str = "rubrics") -> List[RubricMetric]:
    """Rubrics from {name: table} (a parsed TOML file or saved run settings), in order."""
    return [rubric_from_table(name, table, source) for name, table in data.items()]


def parse_rubrics(text: str, source: str = "rubrics TOML") -> List[RubricMetric]:
    """Rubrics from TOML text; a syntax error names the line and column."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MetricError(f"{source}: not valid TOML: {exc}") from None
    if not data:
        raise MetricError(f"{source}: no rubrics; add a table like [politeness] with criteria = \"...\"")
    return rubrics_from_dict(data, source)


def load_rubrics(path: str | Path) -> List[RubricMetric]:
    """Rubrics from a TOML file (see the module docstring for its shape)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MetricError(f"rubrics file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MetricError(f"cannot read rubrics file {path}: {exc}") from None
    return parse_rubrics(text, str(path))


def _toml_value(value: Any) -> str:
    # A JSON string is a valid TOML basic string (same escapes); lists likewise.
    return json.dumps(value, ensure_ascii=False)


def rubrics_to_toml(rubrics: Iterable[RubricMetric]) -> str:
    """The TOML file that `parse_rubrics` reads back into the same rubrics."""
    blocks = []
    for rubric in rubrics:
        lines = [f"[{rubric.name}]"]  # a metric name is letters, digits and "_": a bare TOML key
        lines += [f"{key} = {_toml_value(value)}" for key, value in rubric.to_dict().items()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def rubrics_in_settings(settings: Optional[Mapping[str, Any]]) -> List[RubricMetric]:
    """The rubric metrics a run's stored settings keep (RunConfig.rubrics); none when they cannot be read."""
    try:
        return rubrics_from_dict(dict((settings or {}).get("rubrics") or {}), "run settings")
    except (MetricError, TypeError, ValueError):
        return []
