"""The Generate page's steps: documents, settings, the live generation, its outcome, review and save.

The generation itself is a job (pages/_generation.py): these steps draw the forms before it and read
its outcome and items from the history after it.
"""
from typing import Any, List, Optional

import streamlit as st
from streamlit import config as st_config

from evaluator import service
from evaluator.service import Chunk, GenerationInfo, TestItem

from pages import _errors as errors
from pages import _generation as generation
from pages import _judge as judge_ui
from pages import _nav as nav
from pages import _state as state
from pages import _team as team
from pages._dataset_form import upload_limit_mb

ITEM_LANGUAGES = {"auto": "each document's own", "en": "English", "ar": "Arabic",
                  "mix": "English and Arabic, half each"}
UPLOADS, FOLDER = "Upload files", "A folder on this computer"
LOCAL = ("127.0.0.1", "localhost", "::1")


def is_local() -> bool:
    """A folder path is offered only when the dashboard serves this machine alone (a laptop). Team mode
    never offers it: behind an SSO proxy on the same host the server listens on 127.0.0.1 too."""
    return not team.config().team and str(st_config.get_option("server.address") or "127.0.0.1") in LOCAL


@st.cache_data(max_entries=4, show_spinner="Reading and chunking the documents…")
def chunks_of(token: str, _source: Any, chunk_chars: int) -> List[Chunk]:
    if not isinstance(_source, list):
        return service.folder_chunks(_source, chunk_chars)
    limit = upload_limit_mb() * 1_000_000  # a small Parquet table may not decode to more than the upload limit
    return service.upload_chunks(_source, chunk_chars, max_decoded=limit)


def documents_step() -> Optional[List[Chunk]]:
    st.subheader("1. Documents")
    sources = [UPLOADS, FOLDER] if is_local() else [UPLOADS]
    source = st.radio("Documents", sources, key="gen_source", horizontal=True, label_visibility="collapsed")
    size = int(st.number_input("Largest chunk (characters)", 200, 8000, 1200, step=100, key="gen_chunk_chars"))
    if source == FOLDER:
        folder = st.text_input("Folder", key="gen_folder", placeholder="/home/me/docs")
        if not folder.strip():
            return None
        with errors.guard("Reading the folder"):
            return chunks_of(f"folder:{folder.strip()}", folder.strip(), size)
        return None
    types = service.document_types()
    files = st.file_uploader("Documents (.md .txt .html .pdf, or a CSV/JSONL/Parquet table with title and body)",
                             type=types, accept_multiple_files=True, key="gen_uploads")
    if not files:
        return None
    total, limit = sum(f.size for f in files), upload_limit_mb()
    if total > limit * 1_000_000:  # the server's limit holds for all the files together, not each one
        errors.error("These {n} files hold {mb:,.1f} MB together; this server reads up to {limit} MB of documents "
                     "at once. Remove some files, or generate from them in parts.", n=len(files), mb=total / 1e6,
                     limit=limit, icon=":material/block:")
        return None
    token = "|".join(f"{f.name}:{service.digest(f.getvalue())}" for f in files)
    with errors.guard("Reading the documents"):
        return chunks_of(token, list(files), size)
    return None


def settings_step() -> tuple:
    st.subheader("2. Settings")
    c1, c2, c3 = st.columns(3)
    n = int(c1.number_input("Items to keep", 1, 1000, 20, key="gen_n"))
    kinds = c2.multiselect("Kinds", list(service.KINDS), default=list(service.DEFAULT_MIX), key="gen_kinds",
                           format_func=lambda k: f"{k} ({service.KINDS[k].label})")
    language: str = c3.selectbox("Language of the items", list(ITEM_LANGUAGES), key="gen_item_language",
                                 format_func=ITEM_LANGUAGES.__getitem__)
    config = judge_ui.judge_widgets("gen", run_options=False)
    if config.offline:
        errors.warning("No model: offline extractive mode. Each question is a sentence of a chunk with one word "
                       "blanked. Use such a set for retrieval checks (expected-document recall) only, not to judge "
                       "answers.", icon=":material/science:")
    mix = {k: service.DEFAULT_MIX[k] for k in kinds} or dict(service.DEFAULT_MIX)
    return service.GenerateSettings(n=n, mix=mix, language=language, workers=4), config


def outcome(info: GenerationInfo) -> None:
    """How the generation ended, from the history: its error, its shortfall, the gate's rejections, Resume."""
    done = info.outcome
    if info.status == "failed":
        progress = generation.failure(info.gen_id)
        errors.error("The model failed, so generation stopped: {problem}", problem=done.get("error") or progress,
                     icon=":material/error:")
    elif info.status == "interrupted":
        errors.warning("The generation was interrupted (its worker stopped) with {n} of {target} items kept.",
                       n=info.n_items, target=info.target, icon=":material/warning:")
    if done.get("shortfall") and info.status != "interrupted":  # its worker stopped it, not a user
        errors.warning("{short}", short=done["shortfall"], icon=":material/warning:")
    rejected = done.get("rejected") or {}
    if rejected:
        st.caption("Rejected by the quality gate")
        st.dataframe([{"reason": r, "items": c, "what it means": service.GATE_REASONS.get(r, r)}
                      for r, c in rejected.items()],
                     hide_index=True)
    # not offered when it cannot succeed (an offline run fell short), nor to a user who may not resume it
    if service.can_resume(info) and team.may("resume", info.owner):
        if st.button(f"Resume ({info.target - info.n_items} more)", key="gen_resume", icon=":material/play_arrow:"):
            with errors.guard("Resuming"):
                generation.resume(info)
                st.rerun()


def review(info: GenerationInfo) -> None:
    chunks, items = generation.contents(info)
    if not items:
        return
    st.subheader("3. Review")
    coverage = service.compute_coverage(chunks, items)
    errors.caption("{summary}", summary=coverage.summary())  # names the documents: user text
    st.altair_chart(service.coverage_chart(coverage), width="stretch")
    gaps = coverage.uncovered()
    if gaps:
        with st.expander(f"{len(gaps)} sections no item touches"):
            st.dataframe([{"document": t, "section": s} for t, s in gaps], hide_index=True)
    rows = [{"keep": True, "id": i.id, "kind": i.kind, "language": i.language, "question": i.question,
             "reference answer": i.ground_truth, "expected docs": "; ".join(i.expected_docs),
             "keywords": "; ".join(i.expected_answer_keywords)} for i in items]
    edited = st.data_editor(rows, key=f"gen_editor_{info.gen_id}", hide_index=True,
                            disabled=["id", "kind", "language"])
    kept = service.apply_edits(items, edited.to_dict("records") if hasattr(edited, "to_dict") else list(edited))
    by_id = {c.chunk_id: c for c in chunks}
    pick = st.selectbox("Source of", [i.id for i in items], key="gen_pick")
    chosen = next(i for i in items if i.id == pick)
    st.text(chosen.question)
    for cid in chosen.chunk_ids:
        if cid in by_id:
            st.html(service.source_html(by_id[cid], chosen.ground_truth))
    save(kept)


def save(items: List[TestItem]) -> None:
    st.subheader("4. Save")
    st.caption(f"{len(items)} items. The file is a dataset: run it against your pipeline on the Evaluate page "
               "(answers: call my pipeline) or with `ragmeter evaluate testset.jsonl --target …`.")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Download JSONL", service.testset_bytes(items, ".jsonl"), "testset.jsonl", key="gen_dl_jsonl")
    c2.download_button("Download CSV", service.testset_bytes(items, ".csv"), "testset.csv", key="gen_dl_csv")
    if c3.button("Use on the Evaluate page", key="gen_use", type="primary", icon=":material/science:"):
        state.put(state.UPLOAD, ("generated-testset.jsonl", service.testset_bytes(items, ".jsonl")))
        state.drop(state.EVAL_SOURCE)  # the Evaluate page then opens on the upload
        st.switch_page(nav.EVALUATE_PAGE)
