"""The History page's parts: the runs table, open / delete / resume / re-score one run, a comparison.

Run names, dataset names and header names are the user's: labels and messages take them through
pages/_errors.py; the selectboxes show them as plain-text options.
"""
from functools import partial
from typing import Any, Dict, List, Sequence

import streamlit as st

from evaluator import service
from evaluator.service import RunInfo, RunStore

from pages import _errors as errors
from pages import _judge as judge_ui
from pages import _nav as nav
from pages import _runs as runs
from pages import _state as state
from pages import _team as team
from pages import _views as views

THREE = st.column_config.NumberColumn(format="%.3f")
SIGNED = st.column_config.NumberColumn(format="%+.3f")
DELTA_FORMAT = {"mean A": THREE, "mean B": THREE, "all A": THREE, "all B": THREE, "A": THREE, "B": THREE,
                "95% CI low": SIGNED, "95% CI high": SIGNED, "delta (B−A)": SIGNED, "delta": SIGNED}


def run_label(info: RunInfo) -> str:
    """A selectbox option (plain text, never Markdown): the run's name, who scored it (a default name already says),
    its status when not finished, and its id."""
    said = [info.label, *([info.scorer] if info.name else []),
            *([info.status] if info.status != "finished" else []), info.run_id]
    return " · ".join(said)


def named(info: RunInfo) -> str:
    """The run's name, with its scorer when the name does not already say it (a default name does)."""
    return f"{info.label} ({info.scorer})" if info.name else info.label


def runs_table(found: Sequence[RunInfo]) -> List[Dict[str, Any]]:
    return [{"name": r.label, "scorer": r.scorer, "project": r.project or "", "dataset": r.dataset_name, "created": r.created_at.replace("T", " ")[:19],
             "status": r.status, "scored": f"{r.n_done}/{r.n_samples}", "overall": r.overall_mean,
             "verdict": (r.verdict.label if r.verdict.ok else f"{r.verdict.label}: {r.verdict.counts.summary()}")
             if r.verdict else "",
             "data version": service.data_version(r.settings) or "",
             "time": views.format_duration(r.total_time) if r.total_time else "", "run id": r.run_id} for r in found]


def open_in_report(store: RunStore, info: RunInfo) -> None:
    runs.show_report(None, runs.stored_meta(info))  # the Report reads its summary and pages: never its rows
    st.switch_page(nav.REPORT_PAGE)


def confirm_delete(store: RunStore, info: RunInfo) -> None:
    """The second step of deleting a run."""
    errors.warning("Delete **{label}** and its {n} saved results? This cannot be undone.", label=info.label,
                   n=info.n_done)
    c1, c2, _ = st.columns([1, 1, 4])
    if c1.button("Yes, delete", key="btn_hist_delete_yes", type="primary"):
        with errors.guard("Deleting"):
            service.delete_run(store, info, access=team.access())  # a run in progress is stopped first
            state.drop(state.DELETE_PENDING, state.COMPARISON)
            st.rerun()
    if c2.button("Cancel", key="btn_hist_delete_no"):
        state.drop(state.DELETE_PENDING)
        st.rerun()


def in_progress_note(job: Any) -> None:
    """A queued or running run is stopped (or watched) under "Runs in progress" at the top of the page."""
    where = f"queued, {runs.ordinal(job.position or 1)} in line" if job.state == "queued" else "being scored"
    errors.info("This run is {where}: follow it, or stop it, under **Runs in progress** at the top of this page.",
                where=where, icon=":material/hourglass_top:")


def resume_controls(store: RunStore, info: RunInfo) -> None:
    """Resume a run with its stored settings; asks for the API key again (it was never stored)."""
    with st.container(border=True):
        st.markdown(f"**Resume** · {info.n_samples - info.n_done} of {info.n_samples} samples left, "
                    "same judge and settings.")
        if info.status == "interrupted":
            st.caption("Interrupted: the worker scoring it shut down or stopped answering. Every finished row "
                       "is kept; resuming scores only the rest.")
        elif info.status == "running":
            st.caption("Marked running, but no worker holds it: it probably crashed with the process that "
                       "scored it. Resuming scores only the rows it has no result for.")
        key, headers = "", []
        names = (info.settings.get("target") or {}).get("header_names") or []
        if names:
            headers = st.text_area(errors.fmt("Target headers ({names})", names=", ".join(names)),
                                   key="hist_resume_headers", height=68,
                                   help="Header values are never stored: give them again, one 'Name: value' a "
                                        "line (${VAR} reads the environment).").splitlines()
        judge = info.settings.get("judge") or "offline"
        if service.judge_needs_key(judge) and not team.config().team:
            key = st.text_input("API key for this run", type="password", key="hist_resume_key", live="0ms",
                                on_change="ignore",
                                help="Keys are never stored, so a resumed run needs it again "
                                     "(empty: OPENAI_API_KEY from the environment).")
        if st.button("Resume run", key="btn_hist_resume", icon=":material/play_arrow:"):
            with errors.guard("Resuming the run"):
                fallback = judge_ui.env_api_key(info.settings.get("base_url") or "") if judge == "openai" else ""
                runs.resume_run(info, api_key=key or fallback, config=team.resumed_config(info.settings),
                                target_headers=[h.strip() for h in headers if h.strip()])
                st.switch_page(nav.EVALUATE_PAGE)  # where the progress is drawn


def rescore_controls(store: RunStore, info: RunInfo) -> None:
    """Score this run's saved answers again with another judge: a new run, and the pipeline is not called."""
    with st.expander("Re-score with another judge"):
        st.caption("Scores the answers saved in this run again, as a new run; your pipeline is not called.")
        config = judge_ui.judge_widgets("hist_rescore")
        name = st.text_input("Name of the new run", key="hist_rescore_name", max_chars=service.MAX_NAME_CHARS,
                             placeholder=service.default_run_name(info.dataset_name, config),
                             help="How History, compare and the reports name the new run (empty: dataset · scorer "
                                  "· date), as `ragmeter evaluate --rescore RUN_ID --name NAME` does.")
        if st.button("Re-score", key="btn_hist_rescore", icon=":material/replay:"):
            with errors.guard("Re-scoring the run"):
                runs.rescore_run(info, config, api_key=judge_ui.api_key("hist_rescore"), name=name)
                st.switch_page(nav.EVALUATE_PAGE)  # where the progress is drawn


def comparison_view(cmp: service.Comparison) -> None:
    """"Not comparable" first when the runs were scored differently (then no verdict, no red box); per metric one
    decision in `ragmeter compare`'s words (better, worse, no clear change, not comparable), a footnote where the
    sequential test reads it differently; each run's own means, the rows lost, the movers."""
    scorers_first(cmp)
    errors.caption("Candidate B = **{b}** against A = **{a}** (the baseline): {n} samples paired by sample_id "
                   "({only_a} only in A, {only_b} only in B). A change is clear when the paired permutation test gives "
                   "p < 0.05; \"all A\"/\"all B\" are each run's mean over every row it scored.",
                   b=named(cmp.run_b), a=named(cmp.run_a), n=cmp.n_paired, only_a=cmp.only_a, only_b=cmp.only_b)
    for change in cmp.pipeline_changes:
        errors.caption("Changed: {what}", what=change.sentence())
    if cmp.versions_differ:
        errors.warning("{note}", note=cmp.version_note(), icon=":material/dataset:")
    else:
        errors.caption("{note}", note=cmp.version_note())
    if cmp.metrics_note():  # different metric choices: only the shared ones are compared
        errors.warning("{note}", note=cmp.metrics_note(), icon=":material/compare_arrows:")
    worse_boxes(cmp)
    if 0 < cmp.n_paired <= 5:  # 2 / 2**n: the smallest p a paired permutation test of n pairs can give
        errors.caption("With {n} paired samples no change can be clear: the smallest p the permutation test can "
                       "give is {p:.3f}. Score more samples.", n=cmp.n_paired, p=2 / 2 ** cmp.n_paired)
    views.records_table([delta_row(cmp, d) for d in cmp.metrics], column_config=DELTA_FORMAT)
    for d in cmp.metrics:
        note = service.disagreement(cmp, d)
        if note:
            errors.caption("\\* {s}", s=note)
    if cmp.sequential_note:
        errors.caption("{note}", note=cmp.sequential_note)
    chart = service.compare_chart(cmp)
    if chart is not None:
        st.altair_chart(chart, key="hist_compare_chart")
    st.download_button("Download comparison (HTML)", partial(service.comparison_file, cmp),
                       service.chart_file_name(cmp.run_b.dataset_name, cmp.run_b.run_id, "compare", "html"),
                       "text/html", key="dl_compare_html", icon=":material/download:", on_click="ignore")
    rows_and_movers(cmp)


def scorers_first(cmp: service.Comparison) -> None:
    """Runs scored differently: "Not comparable" (no verdict follows), or, allowed, that verdicts cross scorers."""
    differ = cmp.scorer_differences
    if not differ:
        return
    judged = cmp.comparability
    what = "; ".join(d.sentence() for d in differ)
    if not judged.comparable and not judged.allowed:
        errors.error("Not comparable: {why}. No verdict is given: a change below may be the scorer's, not the "
                     "pipeline's ({what}). Tick \"Compare across scorers\" to see verdicts anyway.",
                     why=judged.reason, what=what, icon=":material/rule:")
    elif not judged.comparable:
        errors.warning("Compared across scorers: {why}. Each verdict is marked \"(scorers differ)\" and may be the "
                       "scorer's change, not the pipeline's ({what}).", why=judged.reason, what=what,
                       icon=":material/rule:")
    else:
        errors.caption("Scored the same way; {what}.", what=what)


def worse_boxes(cmp: service.Comparison) -> None:
    """A red box per metric decided worse (none between runs not comparable) and for rows B lost."""
    for d in cmp.metrics:  # the same decision as the table and `ragmeter compare`: one per metric
        if service.compare_verdict(cmp, d) == "worse":
            errors.error("Worse: {m} {a:.3f} → {b:.3f} ({delta:+.3f}, p = {p}){across}", m=d.metric, a=d.mean_a,
                         b=d.mean_b, delta=d.delta, p=d.p_value,
                         across="" if cmp.comparability.comparable else " (scorers differ)",
                         icon=":material/trending_down:")
    if cmp.lost:
        errors.error("Rows lost: {n} of {total} rows scored in A are missing or unscored in B", n=len(cmp.lost),
                     total=cmp.total_a, icon=":material/trending_down:")


def delta_row(cmp: service.Comparison, d: Any) -> Dict[str, Any]:
    """One metric of the table: both means, the difference with its CI and p, and its one decision."""
    star = " *" if service.disagreement(cmp, d) else ""
    return {"metric": d.metric, "mean A": d.mean_a, "mean B": d.mean_b, "delta (B−A)": d.delta,
            "95% CI low": d.ci_low, "95% CI high": d.ci_high, "p": d.p_value, "pairs": d.n_pairs,
            "decision": cmp.decision_shown(d, 0.05) + star, "all A": d.all_a, "all B": d.all_b,
            "scored A": f"{d.scored_a}/{cmp.total_a}", "scored B": f"{d.scored_b}/{cmp.total_b}"}


def rows_and_movers(cmp: service.Comparison) -> None:
    changed = [*cmp.lost, *cmp.gained]
    if changed:
        st.markdown("**Rows scored in one run, missing or unscored in the other**")
        views.records_table([{"sample": c.sample_id, "A": c.a, "B": c.b, "question": c.question} for c in changed])
    if cmp.movers:
        st.markdown("**Samples that moved most**")
        views.records_table([{"sample": m.sample_id, "metric": m.metric, "A": m.a, "B": m.b, "delta": m.delta,
                              "question": m.question} for m in cmp.movers], column_config=DELTA_FORMAT)
    elif not changed:
        errors.caption("No sample's score changed on the {n} metrics both runs have.", n=len(cmp.shared))


def manage(store: RunStore, info: RunInfo) -> None:
    """Open, rename, delete (with confirmation), resume and re-score the chosen run."""
    c1, c2, c3, c4 = st.columns([2, 4, 1, 2], vertical_alignment="bottom")
    if c1.button("Open in report", key="btn_hist_open", type="primary", icon=":material/bar_chart:"):
        with errors.guard("Opening the run"):
            open_in_report(store, info)
    if team.may("rename"):  # team mode: only admins rename or delete (any run)
        new_name = c2.text_input("Name", value=info.name or "", key=f"hist_name_{info.run_id}",
                                 placeholder="New name for this run")
        if c3.button("Rename", key="btn_hist_rename"):
            with errors.guard("Renaming"):
                service.rename_run(store, info, new_name, access=team.access())
                st.rerun()
        if c4.button("Delete run", key="btn_hist_delete", icon=":material/delete:"):
            state.put(state.DELETE_PENDING, info.run_id)
        if state.get(state.DELETE_PENDING) == info.run_id:
            confirm_delete(store, info)
    job = runs.job(info.run_id)
    if runs.active(job):
        in_progress_note(job)
    elif service.resumable(info, job) and team.may("resume", info.owner):  # team mode: the run's owner and admins
        resume_controls(store, info)
    if info.n_done and team.may("rescore", info.owner):
        rescore_controls(store, info)


def compare_controls(store: RunStore, by_id: Dict[str, RunInfo]) -> None:
    """Pick a baseline and a compared run; the last comparison stays shown."""
    ids = list(by_id)
    shared = [i for i in str(st.query_params.get("compare") or "").split(",") if i in by_id]
    c1, c2 = st.columns(2)
    run_a = c1.selectbox("Baseline (A)", ids, index=ids.index(shared[0]) if len(shared) == 2 else 1,
                         format_func=lambda i: run_label(by_id[i]), key="hist_cmp_a")
    run_b = c2.selectbox("Candidate (B)", ids, index=ids.index(shared[1]) if len(shared) == 2 else 0,
                         format_func=lambda i: run_label(by_id[i]), key="hist_cmp_b")
    across = st.checkbox("Compare across scorers", key="hist_cmp_across",
                         help="Runs scored differently (another judge, model, endpoint or heuristic set) are not "
                              "comparable and get no verdict; tick to see verdicts anyway, each marked as such.")
    if st.button("Compare runs", key="btn_hist_compare", type="primary") or (
            len(shared) == 2 and state.get(state.COMPARE_SHARED) != shared):
        state.put(state.COMPARE_SHARED, shared)  # a share link compares once, then the page is the user's
        with errors.guard("Comparing"):
            state.put(state.COMPARISON, service.compare(store, run_a, run_b, allow_different_scorers=across))
            st.query_params["compare"] = f"{run_a},{run_b}"
    comparison = state.get(state.COMPARISON)
    if comparison is not None:
        comparison_view(comparison)


TREND_RUNS = 200  # runs the trend draws unless asked for all


def trend_view(store: RunStore, found: Sequence[RunInfo]) -> None:
    """A project's finished runs over time, per metric, with 95% bands; a dashed rule marks each run whose judge,
    model, heuristics or dataset version changed (a step there may be the scorer's, not the pipeline's)."""
    projects = list(dict.fromkeys(r.project for r in found if r.project))
    if not projects:
        return
    st.subheader("A project over time")
    project = st.selectbox("Project to chart", projects, key="hist_trend_project",
                           help="The newest run's project first. Every finished run of it is drawn.")
    finished = sum(1 for r in found if r.project == project and r.status == "finished")
    everything = finished <= TREND_RUNS or st.checkbox(
        errors.fmt("All {n:,} runs", n=finished), key="hist_trend_all",
        help=f"The chart shows the newest {TREND_RUNS} runs unless you ask for all (a long history draws slower).")
    with errors.guard("Charting the project"):
        trend = service.project_trend(store, project, None if everything else TREND_RUNS, listed=found)
        chart = service.trend_chart(trend)
        if chart is None:
            errors.caption("No finished run of {p} has scores yet.", p=project)
            return
        st.altair_chart(chart, key="hist_trend_chart")
        for change in trend.changes[-5:]:  # the latest five: the chart's tooltips have all of them
            errors.caption("Changed at run {run}: {what}", run=change["run"], what=change["what"])


def list_runs(store: RunStore) -> List[RunInfo]:
    """Where the runs are kept (as text: a path is not Markdown), the owner and project filters, the runs."""
    st.caption("Runs are saved as they are scored in:")
    st.text(store.shown)  # team mode: a label, never the database URL
    owners, projects = service.owners_and_projects(store)
    f1, f2 = st.columns(2)
    owner = f1.selectbox("Owner", ["Everyone", *owners], key="hist_owner")
    project = f2.selectbox("Project", ["All projects", *projects], key="hist_project")
    return service.list_runs(store, owner=None if owner == "Everyone" else owner,
                             project=None if project == "All projects" else project)
