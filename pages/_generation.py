"""The Generate page's generation as a job (service.submit_generation): submit it, follow it live, stop it,
resume it, open any generation the history holds.

A worker runs it (this process's `local_worker` on a laptop, `ragmeter worker`s when the team config says
`[runs] workers = "external"`), so it outlives the page and the process that started it, other tabs and
replicas see and stop it, and the team's run caps hold. Session state holds only its id: `GEN` the
generation shown, `GEN_LIVE` while this session follows one in progress. `live` is an st.fragment that
reads the job row (a few hundred bytes) every POLL seconds, as pages/_runs.py does for a run.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import streamlit as st

from evaluator import service
from evaluator.service import Chunk, GenerateSettings, GenerationInfo, JobInfo, Progress, TestItem

from pages import _errors as errors
from pages import _judge as judge_ui
from pages import _runs as runs
from pages import _state as state
from pages import _team as team
from pages._views import format_duration

def _key(offline: bool) -> str:
    """A typed key goes to this process's worker only: external workers read their own environment."""
    return "" if runs.external_workers() or offline else judge_ui.api_key("gen")


# --- submitting, stopping, resuming ------------------------------------------------------------------
def start(chunks: List[Chunk], settings: GenerateSettings, config: Any) -> str:
    """Queue a generation of `settings.n` items over `chunks`; the session follows it. NotAllowed for a viewer."""
    gen_id = service.submit_generation(runs.open_store(), chunks, settings, config, access=team.access(),
                                       owner=team.owner(), api_key=_key(config.offline), limits=runs.limits())
    runs.ensure_worker()
    return follow(gen_id)


def resume(info: GenerationInfo) -> str:
    """Queue the rest of a stopped, short or interrupted generation (its items kept); the session follows it."""
    gen_id = service.resume_generation(runs.open_store(), info, access=team.access(),
                                       api_key=_key(service.generation_is_offline(info)), limits=runs.limits())
    runs.ensure_worker()
    return follow(gen_id)


def stop(gen_id: str) -> None:
    """Ask its worker to stop it; only its owner and admins (checked by the service, at the write)."""
    service.stop_generation(runs.open_store(), gen_id, access=team.access())


def follow(gen_id: str) -> str:
    state.put(state.GEN, gen_id)
    state.put(state.GEN_LIVE, gen_id)
    return gen_id


def following() -> bool:
    """Whether this session follows a generation that has not been seen to end."""
    return state.get(state.GEN_LIVE) is not None


# --- following -------------------------------------------------------------------------------------
@st.fragment(run_every=runs.POLL)
def live() -> None:
    """This session's generation: where it stands and Stop; reruns the page when it has ended."""
    gen_id = state.get(state.GEN_LIVE)
    if gen_id is None:
        return  # a late tick after the page has shown the outcome
    job = runs.wait_ended(gen_id, runs.WAIT_NO_BROWSER) if runs.no_browser() else runs.job(gen_id)
    if not runs.active(job):
        state.drop(state.GEN_LIVE)
        st.rerun()  # the whole page: it reads the outcome and the items from the history
    assert job is not None
    job_view(job, key="live")


def job_view(job: JobInfo, *, key: str) -> None:
    slot = st.empty()
    if not job.stop_requested and team.may("stop", job.owner):
        if slot.button("Stop", key=f"gen_stop_{key}_{job.run_id}", icon=":material/stop:",
                       help="Finish the items in flight, keep every item kept so far."):
            with errors.guard("Stopping the generation"):
                stop(job.run_id)
                slot.empty()
                job = runs.job(job.run_id) or job
    if job.stop_requested:
        st.caption("Stopping: finishing the items in flight. Every kept item is saved.")
    if job.state == "queued":
        again = " It was interrupted and will carry on where it stopped." if job.attempts else ""
        errors.info("Queued: {place} in line, waiting for a free worker.{again}",
                    place=runs.ordinal(job.position or 1), again=again, icon=":material/schedule:")
        return
    progress_view(job.progress or Progress(done=0, total=0))


def progress_view(p: Progress) -> None:
    frac = min(p.done / p.total, 1.0) if p.total else 0.0
    st.progress(frac, text=f"{p.done}/{p.total} items kept, {p.attempts} attempts, {p.rejected} rejected, "
                f"{p.calls} judge calls, {p.tokens:,} tokens · {format_duration(p.elapsed)}")


@st.fragment(run_every=runs.LIST_POLL)
def others() -> None:
    """Every other queued or running generation of the history, live (any tab, any replica, any user)."""
    found = runs.in_progress(generations=True, besides=state.get(state.GEN_LIVE))
    if not found:
        return
    st.subheader("Generations in progress")
    for job in found:
        with st.container(border=True):
            errors.markdown("**{name}** · started by {owner} · {gen_id}", name=job.dataset_name, owner=job.owner,
                            gen_id=errors.code_span(job.run_id))
            if st.button("Follow", key=f"gen_follow_{job.run_id}", icon=":material/visibility:"):
                follow(job.run_id)
                st.rerun()
            job_view(job, key="list")


# --- an ended generation, read from the history ----------------------------------------------------------
def shown() -> Optional[GenerationInfo]:
    """The generation this session shows (None when none, or the history lost it)."""
    gen_id = state.get(state.GEN)
    if gen_id is None:
        return None
    with errors.guard("Reading the generation"):
        return service.generation(runs.open_store(), gen_id)
    return None


def failure(gen_id: str) -> str:
    """Why a generation failed before it could start (its worker stored it in the job's progress)."""
    return service.generation_failure(runs.open_store(), gen_id)


def contents(info: GenerationInfo) -> Tuple[List[Chunk], List[TestItem]]:
    """Its chunks and items, read once per state of the generation (cached for every session)."""
    return _contents(runs.history_path(), info.gen_id, f"{info.status}:{info.finished_at}:{info.n_items}")


@st.cache_resource(show_spinner=False, max_entries=4)
def _contents(location: str, gen_id: str, token: str) -> Tuple[List[Chunk], List[TestItem]]:
    return service.generation_contents(runs.open_store(), gen_id)


def earlier() -> None:
    """Open a generation the history holds (yours or a colleague's), e.g. one that ended in another tab."""
    try:
        found = service.generations(runs.open_store(), limit=30)
    except Exception as exc:
        errors.warning("Earlier generations cannot be read now: {problem}", problem=exc)
        return
    if not found:
        return
    by_id = {g.gen_id: g for g in found}
    with st.expander(f"Earlier generations ({len(found)})"):
        pick = st.selectbox("Generation", list(by_id), key="gen_open_pick",
                            format_func=lambda i: f"{by_id[i].label} · {by_id[i].status} · {by_id[i].owner}")
        if st.button("Open", key="gen_open", icon=":material/folder_open:"):
            state.put(state.GEN, pick)
            if by_id[pick].status in ("queued", "running"):
                state.put(state.GEN_LIVE, pick)
            st.rerun()
