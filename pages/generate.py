"""Generate: a test set from your documents, checked item by item, with what it covers."""
import streamlit as st

from pages import _errors as errors
from pages import _generate_steps as steps
from pages import _generation as generation
from pages import _nav as nav
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
                 disabled=generation.following()):
        with errors.guard("Starting the generation"):
            generation.start(chunks, settings, config)
if generation.following():
    generation.live()  # a job on a worker: it outlives this page; reruns the page when it ends
    st.stop()
generation.others()  # every other generation in progress, whoever started it
info = generation.shown()
if info is not None:
    steps.outcome(info)
    steps.review(info)
generation.earlier()
