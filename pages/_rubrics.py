"""The Evaluate page's metric choice: which metrics, rubric metrics in plain words, judge repeats.

Rubrics live in session state (`_state.RUBRICS`: name -> TOML table) so they survive page switches,
and go into the run's settings (RunConfig.rubrics) so a stored run re-runs with them. They import
from and export to the same TOML file the CLI's --rubrics reads.
"""
from typing import Any, Dict, List

import streamlit as st

from evaluator import service

from pages import _errors as errors
from pages import _state as state

CHOSEN = state.CHOSEN_METRICS


_MODE_LABELS = {"auto": "auto", "separate": "one per metric", "grouped": "grouped by contexts",
                "combined": "one per sample"}


def rubrics() -> Dict[str, Dict[str, Any]]:
    if not state.has(state.RUBRICS):
        state.put(state.RUBRICS, {})
    return state.get(state.RUBRICS)


def _choose(names: List[str]) -> None:
    """Add `names` to the chosen metrics (a new rubric is meant to be scored)."""
    chosen = list(state.get(CHOSEN) or [*service.DEFAULT_METRICS, *rubrics()])
    state.put(CHOSEN, chosen + [n for n in names if n not in chosen])


def add_rubric() -> None:
    """The form's submit callback: check the rubric, keep it, choose it."""
    name = str(state.get(state.RUBRIC_NAME) or "").strip()
    steps = [s.strip() for s in str(state.get(state.RUBRIC_STEPS) or "").splitlines() if s.strip()]
    table = {"criteria": str(state.get(state.RUBRIC_CRITERIA) or "").strip(),
             "fields": list(state.get(state.RUBRIC_FIELDS) or []),
             "scale": state.get(state.RUBRIC_SCALE) or "0-1", "steps": steps}
    try:
        name, checked = service.new_rubric(name, table)
    except service.MetricError as exc:
        state.put(state.RUBRIC_PROBLEM, str(exc))
        return
    rubrics()[name] = checked
    _choose([name])


def remove_rubric(name: str) -> None:
    rubrics().pop(name, None)
    state.put(CHOSEN, [n for n in state.get(CHOSEN) or [] if n != name])


def import_rubrics() -> None:
    """The TOML uploader's callback: add (or replace) every rubric in the file."""
    upload = state.get(state.RUBRIC_UPLOAD)
    if upload is None:
        return
    try:
        found = service.import_rubrics(upload.getvalue().decode("utf-8"), upload.name)
    except (service.MetricError, UnicodeDecodeError) as exc:
        state.put(state.RUBRIC_PROBLEM, str(exc))
        return
    rubrics().update(found)
    _choose(list(found))


def rubric_form() -> None:
    with st.form("rubric_form", clear_on_submit=True, border=True):
        st.markdown("**New rubric metric** — a criterion in plain words, judged by the LLM")
        c1, c2 = st.columns([2, 1])
        c1.text_input("Name", key=state.RUBRIC_NAME, placeholder="politeness",
                      help="Letters, digits and underscores; the metric's name in reports and exports.")
        c2.selectbox("Scale", service.SCALES, key=state.RUBRIC_SCALE,
                     help="0-1, 1-5 (normalised as (s-1)/4) or pass-fail (1/0). 1-5 and pass-fail use the "
                          "judge's token probabilities when the server gives them (G-Eval).")
        st.text_area("Criteria", key=state.RUBRIC_CRITERIA, height=80,
                     placeholder="The answer is polite and professional: no sarcasm, no blame.")
        st.multiselect("The judge sees", service.RUBRIC_FIELDS, default=list(service.DEFAULT_FIELDS),
                       key=state.RUBRIC_FIELDS)
        st.text_area("Evaluation steps (optional, one per line)", key=state.RUBRIC_STEPS, height=68)
        st.form_submit_button("Add rubric", on_click=add_rubric, icon=":material/add:", key="btn_rubric_add")


def rubric_list() -> None:
    for name, table in list(rubrics().items()):
        c1, c2 = st.columns([6, 1], vertical_alignment="center")
        c1.markdown(errors.fmt("**{name}** · {scale} · sees {fields} — {criteria}", name=name, scale=table["scale"],
                               fields=", ".join(table["fields"]), criteria=table["criteria"]))
        c2.button("Remove", key=f"btn_rubric_remove_{name}", on_click=remove_rubric, args=(name,))


def metric_widgets(offline: bool) -> Dict[str, Any]:
    """The metrics, rubrics, repeats, temperature and judge mode of the run (RunConfig fields)."""
    options = service.metric_choices(list(rubrics()))
    state.drop_stale(CHOSEN, options)
    if not state.has(CHOSEN):  # set here, not as default=, so callbacks may change it
        state.put(CHOSEN, [*service.DEFAULT_METRICS, *rubrics()])
    chosen = st.multiselect("Metrics", options, key=CHOSEN, persist_state=state.KEEP,
                            help="Each judged metric costs one judge call per sample (per repeat); rule-based "
                                 "ones (keyword coverage, expected-doc recall) cost none, nor do the retrieval "
                                 "metrics by document id (hit@k, recall@k, precision@k, mrr@k, ndcg@k), which need "
                                 "a retrieval_ids column.")
    with st.expander(f"Rubric metrics ({len(rubrics())})", expanded=bool(state.get(state.RUBRIC_PROBLEM))):
        problem = state.take(state.RUBRIC_PROBLEM)
        if problem:
            errors.error("Rubric not added: {problem}", problem=problem)
        rubric_list()
        rubric_form()
        c1, c2 = st.columns(2)
        c1.file_uploader("Import rubrics (TOML)", type=["toml"], key=state.RUBRIC_UPLOAD, on_change=import_rubrics)
        if rubrics():
            c2.download_button("Export rubrics (TOML)", service.rubrics_file(rubrics()), "rubrics.toml",
                               mime="application/toml", key="btn_rubrics_export", icon=":material/download:")
    c1, c2 = st.columns(2)
    repeats = c1.number_input("Judge repeats", 1, 10, 1, key="eval_repeats", disabled=offline,
                              persist_state=state.KEEP,
                              help="Ask the judge K times per judged metric; the score is the mean and the report "
                                   "shows the judge's own noise.")
    temperature = c2.number_input("Judge temperature", 0.0, 2.0, 0.0, 0.1, key="eval_temperature", disabled=offline,
                                  persist_state=state.KEEP,
                                  help="Above 0 the judge samples, so repeats can differ; 0 is the usual setting.")
    mode = st.radio("Judge calls", service.JUDGE_MODES, key="eval_judge_mode", horizontal=True, disabled=offline,
                    format_func=lambda m: _MODE_LABELS[m],
                    help="Auto (default): one call per metric where the judge's server reuses a cached prompt prefix "
                         "(llama.cpp, vLLM, Ollama, LM Studio), else grouped. Per metric: the calls of a sample "
                         "share one prompt prefix. Grouped: the metrics that read the contexts in one call, so the "
                         "contexts are sent and billed once. One per sample: a single call returns every judged "
                         "metric's verdicts. In one call, a metric missing from the reply falls back on its own.")
    if offline and any(n in rubrics() for n in chosen):
        st.caption("Offline: rubric metrics need a judge, so they will be skipped (\"needs a judge\").")
    if offline:
        return {"metrics": tuple(chosen), "rubrics": dict(rubrics())}
    return {"metrics": tuple(chosen), "rubrics": dict(rubrics()), "repeats": int(repeats),
            "temperature": float(temperature), "judge_mode": str(mode)}
