"""Generate: a test set from your documents, checked item by item, with what it covers."""
import streamlit as st

from pages import _errors as errors
from pages import _generate_steps as steps
from pages import _nav as nav
from pages import _state as state
from pages import _team as team

nav.page_setup()
team.require("evaluator")  # a generation calls the team's judge: evaluators only in team mode

st.title(":material/quiz: Generate a test set")
st.caption("Questions, reference answers and expected documents written from your documents by a model, each "
           "checked before it is kept; then what the test set covers and what it misses.")
chunks = steps.documents_step()
if chunks:
    sections = len({(c.title, c.section) for c in chunks})
    st.caption(f"{len({c.title for c in chunks})} documents, {sections} sections, {len(chunks)} chunks")
    settings, config = steps.settings_step()
    if st.button("Generate", type="primary", key="gen_start", icon=":material/auto_awesome:",
                 disabled=steps.busy(state.get(state.GEN))):
        with errors.guard("Starting the generation"):
            state.put(state.GEN_TARGET_N, settings.n)
            state.drop(state.GEN_ITEMS)
            state.put(state.GEN_CHUNKS, chunks)
            steps.start(chunks, settings, config, [])
    gen = state.get(state.GEN)
    if steps.busy(gen):
        steps.live_generation()  # reruns the page when the generation ends
        st.stop()
    if gen is not None:
        steps.collect(gen)
        steps.outcome(gen, state.get(state.GEN_CHUNKS, chunks), config)
if state.get(state.GEN_CHUNKS):
    steps.review(state.get(state.GEN_CHUNKS))
