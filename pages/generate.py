"""Generate: a test set from your documents, checked item by item, with what it covers."""
import html
from typing import Any, List, Optional

import streamlit as st
from streamlit import config as st_config

from evaluator.generate.chart import coverage_chart
from evaluator.generate.chunking import Chunk, chunk_documents
from evaluator.generate.coverage import compute_coverage
from evaluator.generate.documents import TABLE_FILES, TEXT_FILES, load_documents, load_uploads
from evaluator.generate.gate import REASONS
from evaluator.generate.items import TestItem, apply_edits, testset_bytes
from evaluator.generate.kinds import DEFAULT_MIX, KINDS
from evaluator.generate.runner import GenerateSettings, Generation
from evaluator.judges.offline import OfflineJudge
from evaluator.text import content_words, sentences

from pages import _team as team
from pages import _ui as ui

ui.page_setup("Generate")
team.require("evaluator")  # a generation calls the team's judge: evaluators only in team mode

GEN = "gen_live"  # the Generation running or last run
ITEMS = "gen_items"  # the kept items so far (TestItem list), edited and saved from here
TARGET_N = "gen_target_n"  # how many items the user asked for (resume aims at it)
CHUNKS = "gen_chunks"  # the chunks the items were written from (kept when the upload widget is gone)
UPLOADS, FOLDER = "Upload files", "A folder on this computer"
LOCAL = ("127.0.0.1", "localhost", "::1")


def is_local() -> bool:
    """A folder path is offered only when the dashboard serves this machine alone (a laptop). Team mode
    never offers it: behind an SSO proxy on the same host the server listens on 127.0.0.1 too."""
    return not team.config().team and str(st_config.get_option("server.address") or "127.0.0.1") in LOCAL


@st.cache_data(max_entries=4, show_spinner="Reading and chunking the documents…")
def chunks_of(token: str, _source: Any, chunk_chars: int) -> List[Chunk]:
    docs = load_uploads(_source) if isinstance(_source, list) else load_documents(_source)
    return chunk_documents(docs, chunk_chars)


def documents_step() -> Optional[List[Chunk]]:
    st.subheader("1. Documents")
    sources = [UPLOADS, FOLDER] if is_local() else [UPLOADS]
    source = st.radio("Documents", sources, key="gen_source", horizontal=True, label_visibility="collapsed")
    size = int(st.number_input("Largest chunk (characters)", 200, 8000, 1200, step=100, key="gen_chunk_chars"))
    if source == FOLDER:
        folder = st.text_input("Folder", key="gen_folder", placeholder="/home/me/docs")
        if not folder.strip():
            return None
        with ui.guard("Reading the folder"):
            return chunks_of(f"folder:{folder.strip()}", folder.strip(), size)
        return None
    types = [t.lstrip(".") for t in TEXT_FILES + TABLE_FILES]
    files = st.file_uploader("Documents (.md .txt .html .pdf, or a CSV/JSONL/Parquet table with title and body)",
                             type=types, accept_multiple_files=True, key="gen_uploads")
    if not files:
        return None
    token = "|".join(f"{f.name}:{ui.digest(f.getvalue())}" for f in files)
    with ui.guard("Reading the documents"):
        return chunks_of(token, list(files), size)
    return None


def settings_step() -> tuple:
    st.subheader("2. Settings")
    c1, c2, c3 = st.columns(3)
    n = int(c1.number_input("Items to keep", 1, 1000, 20, key="gen_n"))
    kinds = c2.multiselect("Kinds", list(KINDS), default=list(DEFAULT_MIX), key="gen_kinds",
                           format_func=lambda k: f"{k} ({KINDS[k].label})")
    language = c3.selectbox("Language of the items", ["auto", "en", "ar", "mix"], key="gen_item_language",
                            format_func={"auto": "each document's own", "en": "English", "ar": "Arabic",
                                         "mix": "English and Arabic, half each"}.get)
    config = ui.judge_widgets("gen", run_options=False)
    if config.offline:
        st.warning("No model: offline extractive mode. Each question is a sentence of a chunk with one word "
                   "blanked. Use such a set for retrieval checks (expected-document recall) only, not to judge "
                   "answers.", icon=":material/science:")
    mix = {k: DEFAULT_MIX[k] for k in kinds} or dict(DEFAULT_MIX)
    return GenerateSettings(n=n, mix=mix, language=language, workers=4), config


def start(chunks: List[Chunk], settings: GenerateSettings, config: Any, existing: List[TestItem]) -> None:
    judge = OfflineJudge() if config.offline else config.build_judge(ui.api_key("gen"))
    gen = Generation(judge, chunks, settings, existing=existing, generator=config.model)
    st.session_state[GEN] = gen.start()


def progress(gen: Generation) -> None:
    total = gen.settings.n
    st.progress(min(len(gen.items) / total, 1.0), text=f"{len(gen.items)}/{total} items kept, "
                f"{gen.attempts} attempts, {sum(gen.rejected.values())} rejected, {gen.calls} judge calls")


def watch(gen: Generation) -> None:
    if st.button("Stop", key="gen_stop", icon=":material/stop:"):
        gen.stop()
    box = st.empty()
    while gen.running or gen.status == "ready":
        with box.container():
            progress(gen)
        gen.join(ui.UI_INTERVAL)
    box.empty()
    collect(gen)


def collect(gen: Generation) -> None:
    """Add an ended generation's items to the page's items, once."""
    if getattr(gen, "collected", False):
        return
    gen.collected = True  # type: ignore[attr-defined]
    st.session_state[ITEMS] = list(gen.existing) + list(gen.items)


def outcome(gen: Generation, chunks: List[Chunk], config: Any) -> None:
    if gen.status == "failed":
        st.error(f"The model failed, so generation stopped: {gen.error}", icon=":material/error:")
    short = gen.shortfall()
    if short:
        st.warning(short, icon=":material/warning:")
    reasons = [{"reason": r, "items": c, "what it means": REASONS.get(r, r)} for r, c in gen.rejected.most_common()]
    if reasons:
        st.caption("Rejected by the quality gate")
        st.dataframe(reasons, hide_index=True)
    kept = st.session_state.get(ITEMS, [])
    wanted = st.session_state.get(TARGET_N, gen.settings.n)
    if gen.status in ("stopped", "short") and len(kept) < wanted:
        if st.button(f"Resume ({wanted - len(kept)} more)", key="gen_resume", icon=":material/play_arrow:"):
            with ui.guard("Resuming"):
                start(chunks, GenerateSettings(**{**gen.settings.__dict__, "n": wanted - len(kept)}), config, kept)
                st.rerun()


def highlighted(chunk: Chunk, reference: str) -> str:
    """The chunk as escaped HTML, the sentences that share most of the reference's words marked."""
    ref = set(content_words(reference))
    parts = []
    for sent in sentences(chunk.text):
        words = set(content_words(sent))
        text = html.escape(sent)
        parts.append(f"<mark>{text}</mark>" if ref and len(words & ref) >= 0.5 * min(len(ref), len(words) or 1)
                     else text)
    head = html.escape(f"{chunk.title} · {chunk.section} · {chunk.chunk_id}")
    return f"<div dir='auto'><b>{head}</b><br>{' '.join(parts)}</div>"


def review(chunks: List[Chunk]) -> None:
    items: List[TestItem] = st.session_state.get(ITEMS, [])
    if not items:
        return
    st.subheader("3. Review")
    coverage = compute_coverage(chunks, items)
    st.caption(coverage.summary())
    st.altair_chart(coverage_chart(coverage), use_container_width=True)
    gaps = coverage.uncovered()
    if gaps:
        with st.expander(f"{len(gaps)} sections no item touches"):
            st.dataframe([{"document": t, "section": s} for t, s in gaps], hide_index=True)
    rows = [{"keep": True, "id": i.id, "kind": i.kind, "language": i.language, "question": i.question,
             "reference answer": i.ground_truth, "expected docs": "; ".join(i.expected_docs),
             "keywords": "; ".join(i.expected_answer_keywords)} for i in items]
    edited = st.data_editor(rows, key="gen_editor", hide_index=True, disabled=["id", "kind", "language"])
    kept = apply_edits(items, edited.to_dict("records") if hasattr(edited, "to_dict") else list(edited))
    by_id = {c.chunk_id: c for c in chunks}
    pick = st.selectbox("Source of", [i.id for i in items], key="gen_pick")
    chosen = next(i for i in items if i.id == pick)
    st.text(chosen.question)
    for cid in chosen.chunk_ids:
        if cid in by_id:
            st.html(highlighted(by_id[cid], chosen.ground_truth))
    save(kept)


def save(items: List[TestItem]) -> None:
    st.subheader("4. Save")
    st.caption(f"{len(items)} items. The file is a dataset: run it against your pipeline on the Evaluate page "
               "(answers: call my pipeline) or with `ragmeter evaluate testset.jsonl --target …`.")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Download JSONL", testset_bytes(items, ".jsonl"), "testset.jsonl", key="gen_dl_jsonl")
    c2.download_button("Download CSV", testset_bytes(items, ".csv"), "testset.csv", key="gen_dl_csv")
    if c3.button("Use on the Evaluate page", key="gen_use", type="primary", icon=":material/science:"):
        st.session_state[ui.UPLOAD] = ("generated-testset.jsonl", testset_bytes(items, ".jsonl"))
        st.session_state.pop("eval_source", None)  # the Evaluate page then opens on the upload
        st.switch_page(ui.EVALUATE_PAGE)


st.title(":material/quiz: Generate a test set")
st.caption("Questions, reference answers and expected documents written from your documents by a model, each "
           "checked before it is kept; then what the test set covers and what it misses.")
chunks = documents_step()
if chunks:
    sections = len({(c.title, c.section) for c in chunks})
    st.caption(f"{len({c.title for c in chunks})} documents, {sections} sections, {len(chunks)} chunks")
    settings, config = settings_step()
    gen: Optional[Generation] = st.session_state.get(GEN)
    busy = gen is not None and (gen.running or gen.status == "ready")
    if st.button("Generate", type="primary", key="gen_start", icon=":material/auto_awesome:", disabled=busy):
        with ui.guard("Starting the generation"):
            st.session_state[TARGET_N] = settings.n
            st.session_state.pop(ITEMS, None)
            st.session_state[CHUNKS] = chunks
            start(chunks, settings, config, [])
            gen = st.session_state[GEN]
    if gen is not None:
        if gen.running or gen.status == "ready":
            watch(gen)
        collect(gen)
        outcome(gen, st.session_state.get(CHUNKS, chunks), config)
if st.session_state.get(CHUNKS):
    review(st.session_state[CHUNKS])
