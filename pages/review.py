"""Review: go through a run's samples in a chosen order, see the claims on the text, and record per
metric whether you agree with the judge, your own score and a note (pages/_reviewing.py does the work)."""
from typing import List, Optional

import streamlit as st

from evaluator import service

from pages import _clicks as clicks
from pages import _errors as errors
from pages import _nav as nav
from pages import _review_cursor as cursor
from pages import _reviewing as rv
from pages import _state as state
from pages import _team as team
from pages import _views as views

nav.page_setup()
st.title(":material/rate_review: Review")
st.caption("Check the judge: agree or disagree per metric, give the score you would give, add a note. "
           "Keys: **Ctrl+Enter** save and next, **A** agree with every metric and next, **J** next, **K** previous.")

store = rv.store()
runs = service.list_runs(store.runs)
if not runs:
    errors.info("No runs in the history yet: score a dataset on the Evaluate page first.")
    st.stop()
ids = [r.run_id for r in runs]
labels = {r.run_id: f"{r.label} · {r.run_id}" for r in runs}
current = state.run_meta()
if not state.has(state.REV_RUN):
    wanted = str(st.query_params.get("run") or (current.run_id if current is not None else "") or "")
    state.put(state.REV_RUN, wanted if wanted in ids else ids[0])
state.drop_stale(state.REV_RUN, ids)
run_id = st.selectbox("Run", ids, format_func=labels.__getitem__, key=state.REV_RUN, persist_state=state.KEEP)
info = service.run_info(store.runs, run_id)
metrics: List[str] = rv.reviewable_metrics(run_id)  # SQL over the narrow scores table: no row decoded
if not metrics:
    errors.info("This run has no scores to review yet.")
    st.stop()

name = rv.reviewer()
c1, c2, c3, c4, c5 = st.columns([2, 3, 1, 1, 1])
state.drop_stale(state.REV_METRIC, metrics)
metric = c1.selectbox("Queue by metric", metrics, key=state.REV_METRIC, persist_state=state.KEEP)
results = rv.queue_scores(run_id, metric, f"{info.n_done}:{info.finished_at}")  # every row's score on this metric, nothing else
order = c2.selectbox("Order", list(service.ORDERS), format_func=service.ORDERS.__getitem__, key="rev_order", persist_state=state.KEEP)
size = c3.number_input("N", min_value=1, value=min(30, len(results)), step=1, key="rev_n", persist_state=state.KEEP,
                       disabled=order != "random", help="How many samples the random draw takes")
drawn = order in ("random", "informative")  # the two orders whose reviews correct the judged mean
seed = c4.number_input("Seed", min_value=0, value=0, step=1, key="rev_seed", disabled=not drawn,
                       persist_state=state.KEEP)
target = c5.number_input("Target ±", min_value=0.005, max_value=0.5, value=service.TARGET_HALF_WIDTH, step=0.005,
                         format="%.3f", key="rev_target", disabled=not drawn, persist_state=state.KEEP,
                         help="The half-width of the corrected mean's 95% interval you want to reach")
reviews = service.run_reviews(store, run_id)
queue = service.review_queue(results, metric, order, n=int(size) if order == "random" else None, seed=int(seed),
                     reviewed=service.reviewed_indices(store, run_id, metric))
if not queue:
    errors.success("Nothing left in this queue." if order == "unreviewed" else "No sample has a score on this metric.",
                   icon=None)
    rv.agreement_table(rv.agreement(run_id))
    st.stop()
pos = cursor.drawn(run_id, metric, order == "unreviewed", tuple(queue))
index = queue[pos]
result = rv.sample_result(run_id, index)  # the one row shown, read on its own
if result is None:  # deleted or re-scored under the reviewer between two reads
    errors.warning("Sample #{index} is no longer in this run; reload the page.", index=index)
    st.stop()
scores = rv.reviewable(result)
done = sum(1 for r in reviews if r.metric == metric and r.index in set(queue))
st.progress((pos + 1) / len(queue), text=f"Sample {pos + 1} of {len(queue)} (#{index}, {result.sample_id}) · "
                                         f"{done} reviews of this queue's samples on {metric}")
if drawn:
    rv.target_status(rv.agreement(run_id).get(metric), float(target))

left, right = st.columns([3, 2])
with left:
    if result.sample is not None:
        views.text_block("Question", result.sample.question)
    rv.claims_view(result)
with right:
    if name:
        rv.fill_form(run_id, index, name, scores, reviews)
    for ms in scores:
        rv.metric_form(ms, rv.scale_of(ms.name, info))


def save(at: Optional[int] = None) -> None:
    """Store the form's reviews of sample `at`, or agree with every metric of the sample the cursor
    points at when `at` is None; then move past it. A callback: it reads the cursor, not this draw."""
    if not name:
        state.put(state.REV_FLASH, "Type your name first: every review records who gave it.")
        return
    sample = cursor.pointed(run_id) if at is None else at
    shown = None if sample is None else rv.sample_result(run_id, sample)
    if sample is None or shown is None:
        return
    with errors.guard("Saving the reviews"):
        entries = service.agree_with_all(shown) if at is None else rv.form_entries(rv.reviewable(shown))
        saved = service.save_reviews(store, info, sample, shown, name, service.queue_label(order, int(seed)), entries)
        state.put(state.REV_FLASH, f"Saved {saved} review{'' if saved == 1 else 's'} of sample #{sample}.")
        cursor.past(run_id, sample)
        state.drop(state.REV_SHOWN)


b1, b2, b3, b4 = st.columns(4)
b1.button("Previous", key="rev_prev", shortcut="K", icon=":material/arrow_back:", on_click=cursor.move, args=(run_id, -1))
b2.button("Next", key="rev_next", shortcut="J", icon=":material/arrow_forward:", on_click=cursor.move, args=(run_id, 1))
if team.may("review"):  # the store refuses a viewer's save anyway; the buttons are not drawn for one
    # Stable keys: a key per sample would leave the earlier draw's button beside the new one while
    # the page redraws. The callbacks walk the cursor, so a click queued behind a redraw still counts.
    b3.button("Agree with all and next", key="rev_agree_all", shortcut="A", icon=":material/done_all:",
              on_click=save)
    b4.button("Save and next", key="rev_save", shortcut="Ctrl+Enter", type="primary",
              icon=":material/save:", on_click=save, args=(index,))
    # Mouse clicks of "Agree with all and next" are counted in the browser (pages/_clicks.py), so quick
    # clicks that Streamlit would merge into one rerun each store a review, in queue order.
    with b3:
        quick = clicks.counted("rev_agree_all", run_id)
    for _ in range(quick):
        save()
    if quick:
        st.rerun()
else:
    errors.info("Your role lets you read reviews, not save them; ask this dashboard's admins.",
                icon=":material/lock:")
flash = state.take(state.REV_FLASH)
if flash:
    # The flash is this page's own sentence (counts and an index, no user text): it is the template.
    (errors.warning if flash.startswith("Type") else errors.success)(flash, icon=None)

st.subheader("Judge agreement with your reviewers")
table = rv.agreement(run_id)
if table:
    rv.agreement_table(table)
else:
    st.caption("No reviews of this run yet.")
