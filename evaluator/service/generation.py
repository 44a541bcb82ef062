"""Test-set generation from a view: documents read and chunked, a generation queued as a job (a worker writes
it, so it outlives the page), stopped, resumed, and read back with what its items cover."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Set, Tuple

from ..generate.chunking import Chunk, chunk_documents
from ..generate.coverage import compute_coverage
from ..generate.documents import load_documents
from ..generate.gate import REASONS
from ..generate.items import TestItem, read_testset, write_testset
from ..generate.kinds import DEFAULT_MIX, parse_mix
from ..generate.plan import Section
from ..generate.runner import GenerateSettings, Generation
from ..generate.sources import generation_name
from ..runs import generation as gen_jobs
from ..runs.run import RunConfig
from ..store.generations import GenerationInfo, Generations
from ..store.history import RunStore
from ..store.jobs import Limits
from ..team.access import Access
from .history import job
from .workers import queue_limits


def submit_generation(store: RunStore, chunks: Sequence[Chunk], settings: GenerateSettings, config: RunConfig, *,
                      access: Access, owner: Optional[str] = None, api_key: str = "",
                      limits: Limits = Limits()) -> str:
    """Queue a generation of `settings.n` items over `chunks`, named after their documents; its id. NotAllowed
    for a viewer, before anything is stored: a viewer never reaches the team's judge."""
    access.check("generate")
    return gen_jobs.submit_generation(store, chunks, settings, config, name=generation_name(chunks), owner=owner,
                                      generator=config.model, api_key=api_key, limits=limits)


def resume_generation(store: RunStore, info: GenerationInfo, *, access: Access, api_key: str = "",
                      limits: Limits = Limits()) -> str:
    """Queue the rest of a stopped, short or interrupted generation (its items kept)."""
    access.check("resume", info.owner)
    return gen_jobs.resume_generation(store, info.gen_id, api_key=api_key, limits=limits)


def stop_generation(store: RunStore, gen_id: str, *, access: Access) -> None:
    """Ask its worker to stop it; only its owner and admins."""
    found = job(store, gen_id)
    access.check("stop", found.owner if found is not None else generation(store, gen_id).owner)
    gen_jobs.stop_generation(store, gen_id)


def generation_is_offline(info: GenerationInfo) -> bool:
    """Whether the generation writes with no model (offline extractive items: no key to pass)."""
    return gen_jobs.judge_config(info).offline


def generation(store: RunStore, gen_id: str) -> GenerationInfo:
    """One stored generation; HistoryError when unknown."""
    return Generations(store).get(gen_id)


def generations(store: RunStore, limit: int = 30) -> List[GenerationInfo]:
    """The history's latest generations, anyone's."""
    return Generations(store).list(limit=limit)


def generation_failure(store: RunStore, gen_id: str) -> str:
    """Why a generation failed before it could start (its worker stored it in the job's progress)."""
    found = job(store, gen_id)
    progress = found.progress if found is not None else None
    return (progress.error if progress is not None else None) or "the generation could not start"


def generation_contents(store: RunStore, gen_id: str) -> Tuple[List[Chunk], List[TestItem]]:
    """The chunks a generation was written from and the items it kept."""
    return gen_jobs.stored_chunks(store, gen_id), gen_jobs.stored_items(store, gen_id)


# --- a generation driven by the command line (`ragmeter generate`) -----------------------------------------
def read_chunks(docs: str, query: Optional[str], chunk_chars: int) -> Tuple[int, List[Chunk]]:
    """How many documents `docs` holds (a folder, a table, a PostgreSQL query) and their chunks."""
    found = load_documents(docs, query=query)
    return len(found), chunk_documents(found, chunk_chars)


def coverage_table(chunks: Sequence[Chunk], items: Sequence[TestItem], index: Any = None) -> str:
    """Which sections of the documents the items ask about, as a table."""
    return compute_coverage(list(chunks), list(items), index).table()


def uncovered(chunks: Sequence[Chunk], items: Sequence[TestItem]) -> Set[Section]:
    """The sections no item asks about (what --fill-gaps writes for)."""
    return set(compute_coverage(list(chunks), list(items)).uncovered())


def queue_pinned(store: RunStore, chunks: Sequence[Chunk], settings: GenerateSettings, config: RunConfig, *,
                 name: str, existing: Sequence[TestItem], only: Optional[Set[Section]], generator: str,
                 judge: Any) -> str:
    """Queue a generation for this process's own worker (the command line drives it here); its id."""
    return gen_jobs.submit_generation(store, list(chunks), settings, config, name=name, existing=list(existing),
                                      only=only, generator=generator, judge=judge, pin=True, limits=queue_limits())


GenerationTask = gen_jobs.GenerationTask

__all__ = [
    "Chunk", "Section",
    "DEFAULT_MIX", "Generation", "GenerationTask", "GenerateSettings", "REASONS", "TestItem", "coverage_table",
    "generation", "generation_contents", "generation_failure", "generation_is_offline", "generations",
    "parse_mix", "queue_pinned", "read_chunks", "read_testset", "resume_generation", "stop_generation",
    "submit_generation", "uncovered", "write_testset",
]
