"""What a run may be made of, as a picker offers it: the registered judges, the metrics, rubric metrics written
in plain words (checked, imported from and exported to the TOML file the CLI's --rubrics reads)."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Tuple

from ..errors import MetricError, RagmeterError
from ..judges.base import key_variable
from ..judges.registry import JudgeEntry, get_judge, judge_kinds
from ..metrics import retrieval
from ..metrics.registry import known_metrics
from ..metrics.rubric import parse_rubrics, rubric_from_table, rubrics_to_toml
from ..team import settings
from ..environment import secret

RETRIEVAL_METRICS = retrieval.CHOICES  # hit@k, recall@k ...: scored from a retrieval_ids column, no judge


def judge_entries() -> List[JudgeEntry]:
    """Every registered judge, built-ins first: its label, and what it asks for (a model, a key)."""
    return [get_judge(kind) for kind in judge_kinds()]


def judge_needs_key(kind: str) -> bool:
    """Whether a stored run's judge takes an API key (an unknown kind: no; resuming it says why)."""
    try:
        return get_judge(kind).needs_key
    except RagmeterError:
        return False


def judge_cache_file() -> str:
    """The judge cache's file, resolved as for the CLI ($RAGMETER_JUDGE_CACHE or the default)."""
    return str(settings.judge_cache().value)


def key_variable_for(base_url: str) -> str:
    """The variable whose key a judge at `base_url` may send ("" = none): OPENAI_API_KEY for OpenAI's own URL
    or $OPENAI_BASE_URL's only, so a base URL typed in a page never receives the server's key."""
    return key_variable(base_url.strip())


def environment_key(variable: str) -> str:
    """That variable's value in the server's environment ("" when unset)."""
    return secret(variable) or ""


def key_hint() -> str:
    """The library's advice about a missing or refused API key (a page may say it in its own words)."""
    from ..judges.openai import KEY_HINT  # loads the OpenAI client: only when a message needs it

    return KEY_HINT


def metric_choices(rubric_names: List[str]) -> List[str]:
    """The metrics a run may score: registered ones, retrieval metrics by document id, then these rubrics."""
    known = known_metrics()
    return [*known, *RETRIEVAL_METRICS, *(n for n in rubric_names if n not in known)]


def new_rubric(name: str, table: Mapping[str, Any]) -> Tuple[str, Dict[str, Any]]:
    """A rubric typed in a form, checked: its name and its table as run settings keep it. MetricError saying
    what is wrong (a name a metric has already included)."""
    if name in known_metrics():
        raise MetricError(f"rubric {name!r}: a metric has that name already; choose another name")
    rubric = rubric_from_table(name or "(no name)", table, "rubric form")
    return rubric.name, rubric.to_dict()


def import_rubrics(text: str, filename: str) -> Dict[str, Dict[str, Any]]:
    """The rubrics of a TOML file, name -> table; MetricError when one is wrong or takes a metric's name."""
    found = parse_rubrics(text, filename)
    clash = [r.name for r in found if r.name in known_metrics()]
    if clash:
        raise MetricError(f"{filename}: {', '.join(clash)} is already a metric's name; rename the rubric")
    return {r.name: r.to_dict() for r in found}


def rubrics_file(tables: Mapping[str, Mapping[str, Any]]) -> str:
    """The TOML file of these rubrics (name -> table)."""
    return rubrics_to_toml([rubric_from_table(name, table) for name, table in tables.items()])
