"""What the Review page and the Report share: the claims view, the review store, the reviewer's
name, one sample's review form, and the agreement with reviewers.

Session keys (pages/_state.py): the Review page's widgets keep their values across pages
(persist_state); REV_SHOWN is the (run, sample, reviewer) whose stored reviews the form was last
filled from, so moving to another sample refills it.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import streamlit as st

from evaluator import service
from evaluator.model import EvalResult, MetricScore

from pages import _errors as errors
from pages import _report_data as report_data
from pages import _runs as runs
from pages import _state as state
from pages import _team as team
from pages import _views as views

REV_SHOWN, REVIEWER = state.REV_SHOWN, state.REVIEWER


def claims_view(result: EvalResult) -> bool:
    """The sample's text with each metric's claims marked (escaped HTML; Arabic right-to-left);
    False when there is nothing to mark (nothing drawn)."""
    marked = service.claims_html(result)
    if marked:
        st.html(marked)
    return bool(marked)


def store() -> service.ReviewStore:
    """The review store, writing as this session's user: a viewer's save is refused by the store itself."""
    return service.review_store(report_data.history(), team.access() if team.config().team else None)


def reviewer() -> Optional[str]:
    """The team-mode user, or the name typed on this laptop (the login name until changed)."""
    if team.config().team:
        name = team.user()
        errors.caption("Reviewing as **{name}** (signed in)", name=name or "?")
        return name
    if not state.has(REVIEWER):
        state.put(REVIEWER, service.default_owner())
    name = st.text_input("Your name", key=REVIEWER, help="Stored with each review; typed once per session",
                         persist_state=state.KEEP)
    return name.strip() or None


def scale_of(metric: str, info: service.RunInfo) -> str:
    """The scale a metric asks the judge for (rubrics keep theirs in the run's settings)."""
    return service.scale_of(metric, info.settings)


def reviewable_metrics(run_id: str) -> List[str]:
    """The run's metrics with a score a person can review (judged, not rule-based), in the run's order."""
    return service.reviewable_metrics(report_data.history(), run_id)


@st.cache_resource(max_entries=4, show_spinner=False)
def _queue_scores(location: str, run_id: str, metric: str, stamp: str) -> List[Tuple[int, EvalResult]]:
    return service.queue_scores(report_data.history(), run_id, metric)


def queue_scores(run_id: str, metric: str, stamp: str) -> List[Tuple[int, EvalResult]]:
    """Every row's score on `metric` (what review_queue orders), kept while the run's `stamp` (rows scored, end
    time) holds: a quick click's rerun reuses it instead of reading the run again (and merging with the next click)."""
    return _queue_scores(runs.history_path(), run_id, metric, stamp)


def sample_result(run_id: str, index: int) -> Optional[EvalResult]:
    """One row with its sample (the one the Review page shows or saves)."""
    return service.run_row(report_data.history(), run_id, index)


def reviewable(result: EvalResult) -> List[MetricScore]:
    return service.reviewable(result)


def fill_form(run_id: str, index: int, name: str, scores: List[MetricScore], reviews: List[service.Review]) -> None:
    """Set the form's widgets from this reviewer's stored reviews when the sample shown changed."""
    shown = (run_id, index, name)
    if state.get(REV_SHOWN) == shown:
        return
    mine = {r.metric: r for r in reviews if r.index == index and r.reviewer == name}
    for ms in scores:
        r = mine.get(ms.name)
        state.put(state.review_field("v", ms.name), r.verdict if r else None)
        state.put(state.review_field("c", ms.name), service.shown_corrected(r))
        state.put(state.review_field("n", ms.name), r.note if r else "")
    state.put(REV_SHOWN, shown)


def corrected_widget(ms: MetricScore, scale: str) -> Any:
    key = state.review_field("c", ms.name)
    if scale == "pass-fail":
        return st.radio("Corrected", list(service.PASS_FAIL), index=None, horizontal=True, key=key, persist_state=state.KEEP)
    if scale == "1-5":
        return st.number_input("Corrected (1-5)", min_value=1.0, max_value=5.0, step=1.0, value=None, key=key,
                               persist_state=state.KEEP)
    return st.number_input("Corrected (0-1)", min_value=0.0, max_value=1.0, step=0.05, value=None, key=key,
                           persist_state=state.KEEP)


def metric_form(ms: MetricScore, scale: str) -> None:
    """One metric's verdict, corrected score and note."""
    with st.container(border=True):
        st.markdown(f"**{errors.md(ms.name)}** &nbsp; {views.badge(ms.score)}", unsafe_allow_html=True)
        if ms.reasoning:
            errors.caption("{reasoning}", reasoning=ms.reasoning[:300])  # the judge's text: shown as text
        st.radio("Verdict", [service.AGREE, service.DISAGREE], index=None, horizontal=True, key=state.review_field("v", ms.name),
                 persist_state=state.KEEP)
        corrected_widget(ms, scale)
        st.text_input("Note", key=state.review_field("n", ms.name), persist_state=state.KEEP)


def form_entries(scores: List[MetricScore]) -> List[service.ReviewEntry]:
    """What the form holds now for each metric: verdict, corrected score and note."""
    return [service.ReviewEntry(ms.name, state.get(state.review_field("v", ms.name)),
                                state.get(state.review_field("c", ms.name)),
                                str(state.get(state.review_field("n", ms.name)) or "")) for ms in scores]


# --- agreement with reviewers, for the Review page and the Report --------------------------------

def agreement(run_id: Optional[str]) -> Dict[str, service.ReviewAgreement]:
    """Judge agreement with the run's reviewers; {} without reviews. Reads the reviewed metrics' score rows,
    never the run's records."""
    return service.agreement(store(), run_id) if run_id else {}


def target_status(a: Optional[service.ReviewAgreement], half_width: float) -> None:
    """Under the random or informative queue: the corrected mean so far, and whether the target
    half-width is reached (or how many more reviews it needs)."""
    c = a.correction if a is not None else None
    if c is None or c.estimate is None:
        errors.caption("Review in this order: once a few samples are reviewed here, the judged mean is corrected "
                       "by your reviews, with its interval.")
        return
    more = c.more_labels(half_width)
    # The line is built from numbers and fixed words only: it is the template.
    if more == 0:
        errors.success(f"Target ±{half_width:.3f} reached: {c.line(half_width)}")
    else:
        errors.info(c.line(half_width), icon=None)


def _ci(ci: Optional[Tuple[float, float]], n: int) -> str:
    """The interval's words; none from fewer than FEW_REVIEWS labels (it would say more than they do)."""
    if n < service.FEW_REVIEWS:
        return " (too few reviews for an interval)"
    return "" if ci is None else f" (95% CI {ci[0]:.2f}–{ci[1]:.2f})"


def card_line(a: Optional[service.ReviewAgreement]) -> str:
    """A metric's line in the Report's review section: judge agreement with your reviewers."""
    if a is None or a.agree_rate is None:
        return ""
    line = f"reviewers agree {a.agree_rate:.0%}{_ci(a.agree_ci, a.n_reviews)}, n={a.n_reviews}"
    corrected = service.corrected_line(a)
    return line + (f" · {corrected}" if corrected else "")


def agreement_table(table: Dict[str, service.ReviewAgreement]) -> None:
    """Per metric: agree rate, Spearman/AUROC, bias, reviewers' alpha, human-corrected mean."""
    three = st.column_config.NumberColumn(format="%.3f")
    rows = [{"metric": m, "reviews": a.n_reviews, "reviewers": a.n_reviewers, "agree rate": a.agree_rate,
             "agree 95% CI": _ci(a.agree_ci, a.n_reviews).strip(" ()"), "Spearman": a.spearman, "AUROC": a.auroc,
             "bias (judge - human)": a.bias, "bias 95% CI": _ci(a.bias_ci, a.n_reviews).strip(" ()"),
             "reviewers' alpha": a.alpha, "corrected mean": service.corrected_line(a)} for m, a in table.items()]
    views.records_table(rows, column_config={c: three for c in ("agree rate", "Spearman", "AUROC",
                                                             "bias (judge - human)", "reviewers' alpha")})


def reviewers_view(run_id: Optional[str]) -> None:
    """The Report's section: judge agreement with your reviewers, and the largest disagreements."""
    with errors.guard("Reading the reviews"):
        table = agreement(run_id)
        if not table:
            return
        st.subheader("Judge agreement with your reviewers")
        st.caption("From the reviews given on the Review page. Bias > 0: the judge scores higher than people. "
                   "Reviewers' alpha: how far reviewers agree with each other, the most a judge can be held to. "
                   "The corrected mean uses only samples drawn by the random-sample queue.")
        agreement_table(table)
        for name, a in table.items():  # the lines the headline cards carried before they moved here
            line = card_line(a)
            if line:
                st.text(name)
                st.caption(line)
        gaps = sorted(((j - h, m, i, j, h) for m, a in table.items() for i, j, h in a.disagreements),
                      key=lambda g: -abs(g[0]))[:10]
        worst = [{"metric": m, "sample #": i, "judge": j, "reviewers": h, "gap": gap} for gap, m, i, j, h in gaps]
        if worst:
            st.caption("Where they disagree most")
            views.records_table(worst,
                             column_config={c: st.column_config.NumberColumn(format="%.3f")
                                            for c in ("judge", "reviewers", "gap")})
