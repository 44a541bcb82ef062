"""The Report page's sections, top to bottom: header, metric cards, summary, advice, judge noise and
usage, target, agreement with people, the samples table with its filters, the drill-down, downloads.

Every section above the samples draws from the run's summary (service.run_summary), never from its
rows; the samples are pages (pages/_report_samples.py) unless the run is only held in memory."""
from functools import partial
from typing import Any, Callable, Dict, Sequence

import streamlit as st

from evaluator import service
from evaluator.model import METHOD_LABELS, EvalReport

from pages import _data as data
from pages import _errors as errors
from pages import _nav as nav
from pages import _report_data as report_data
from pages import _reviewing as rv
from pages import _runs as runs
from pages import _state as state
from pages import _team as team
from pages import _views as views
from pages._run_panel import verdict_box as run_verdict_box
from pages._judge import dashboard_hint
from pages._report_data import RunView
from pages._runs import RunMeta


def empty_report() -> None:
    """No report yet: say where to get one, and offer the one-click sample run."""
    meta = state.run_meta()
    if meta is not None and meta.error:
        errors.error("The last run failed before scoring anything: {problem}", problem=meta.error)
    errors.info("No report yet. Score a dataset on the **Evaluate** page, or try the bundled sample right now: "
            "offline, no API key, a few seconds.", icon=":material/waving_hand:")
    c1, c2, _ = st.columns([2, 2, 3])
    if team.may("run") and c1.button("Run the sample data offline", key="btn_quick_run", type="primary", icon=":material/play_arrow:"):
        with errors.guard("Running the sample"):
            dataset = data.load_sample()
            runs.start_run(dataset.samples, service.RunConfig(), dataset_name=dataset.name)
            st.rerun()  # the page follows the run, then shows its report
    with c2:
        nav.button_link("Go to Evaluate", nav.EVALUATE_PAGE, key="btn_go_evaluate")


def report_header(view: RunView) -> None:
    """The run's name, its project and when it was made, in one line above its details: what a reader must
    know before any figure."""
    meta = view.meta
    when = meta.created_at[:16].replace("T", " ") or "date not recorded"
    title = meta.title
    errors.markdown("**{title}** · project {project}" + ("" if when in title else " · {when}"), title=title,
                    project=meta.project or "none", when=when)
    st.caption(report_caption(view))


def report_caption(view: RunView) -> str:
    """Dataset, size, judge (its model name is the user's), time, status, data version and run id, as Markdown."""
    meta, n = view.meta, view.summary.n_rows
    parts = [errors.fmt("**{name}**", name=meta.dataset_name), f"{n:,} sample{'' if n == 1 else 's'}",
             errors.fmt("judge: {judge}", judge=view.summary.judge_status),
             views.format_duration(view.summary.total_time),
             errors.fmt("status: {status}", status=meta.status)]
    parts += [errors.fmt("{exam}", exam=line) for line in [service.judge_exam_line(runs.open_store(), meta.settings or {})] if line]  # its judge's exam
    version = service.data_version(meta.settings or {})  # which test set this run scored
    parts += [errors.fmt("data version {v}", v=errors.code_span(version))] if version else []
    return " · ".join(parts + ([errors.fmt("run {id}", id=errors.code_span(meta.run_id))] if meta.run_id else []))


def metric_cards(view: RunView, sums: Sequence[Any]) -> None:
    """One card per metric: mean, band, ±std, 95% CI, scored/total and fallbacks. The reviewers' agreement is in
    the review section below (reviewers_view), not on the cards."""
    meta, n = view.meta, view.summary.n_rows
    if meta.status == "stopped" and meta.total > n:
        errors.warning("This run was stopped: {n:,} of {total:,} samples are scored. Resume it from the History "
                       "page.", n=n, total=meta.total)
    cards = [("overall", view.summary.overall_mean, None)] + [(s.name, s.mean, s) for s in sums]
    ending = service.verdict_of(view.summary)
    rows_line = ending.counts.summary() if ending is not None else f"{n:,} rows"
    per_row = len(cards) if len(cards) <= 6 else 4  # the headline on one row: the chart stays on the first screen
    for start in range(0, len(cards), per_row):
        for col, (name, mean, s) in zip(st.columns(per_row), cards[start:start + per_row]):
            with col.container(border=True, height="stretch", key=f"card_{start}_{name}"):
                card(name, mean, card_caption(s) if s is not None else rows_line, overall=s is None)


def card(name: str, mean: Any, caption: str, *, overall: bool) -> None:
    """One metric's card, short enough for a 720-pixel screen: its plain title in full (it wraps, never cut), the
    mean, its band as a pill that wraps inside the card, and how many rows it scored."""
    title = "Overall" if overall else service.metric_title(name)
    errors.markdown("**:small[{title}]**", title=title)
    st.metric(errors.md(name), "N/A" if mean is None else f"{mean:.3f}", label_visibility="collapsed")  # the title shows
    st.markdown(views.badge(mean, mean is None, show_score=False, wrap=True), unsafe_allow_html=True)
    st.caption(caption)  # the technical name is the summary table's and the chart's


def card_caption(s: Any) -> str:
    """Scored out of all, and fallbacks: the spread and the interval are in the summary table below."""
    if s.mean is None:
        return f"scored 0/{s.n_total}"  # one line, as every card's: the pill says N/A
    text = f"scored {s.n_scored}/{s.n_total}"
    return text + (f" · :material/warning: {s.n_fallback} fallback" if s.n_fallback else "")


def summary_table(sums: Sequence[Any]) -> None:
    """The per-metric summary: mean, std, CI, counts, band and how the scores were made."""
    rows = [{"metric": s.name, "mean": s.mean, "std": s.std, "95% CI low": s.ci_low, "95% CI high": s.ci_high,
             "scored": s.n_scored, "total": s.n_total, "fallback": s.n_fallback, "skipped": s.n_skipped,
             "band": service.band(s.mean) if s.mean is not None else "N/A",
             "how": ", ".join(f"{METHOD_LABELS.get(m, m)}: {n}" for m, n in s.methods.items())} for s in sums]
    three = st.column_config.NumberColumn(format="%.3f")
    config = {c: three for c in ("mean", "std", "95% CI low", "95% CI high")}
    config["how"] = st.column_config.TextColumn("how", width="large")
    views.records_table(rows, column_config=config)


def advice_view(summary: service.RunSummary, meta: RunMeta) -> None:
    st.subheader("What to improve")
    advice = service.advice(summary, meta.settings)
    for item in advice:
        with st.container(border=True):
            st.markdown(errors.fmt("**{metric}** {badge} — {diagnosis}", metric=item.metric,
                                   badge=errors.Markdown(views.badge(item.score)), diagnosis=item.diagnosis),
                        unsafe_allow_html=True)
            st.markdown("\n".join(f"- {errors.md(action)}" for action in item.actions))
    if not advice:
        errors.success("Every metric is at least Good ({good}). Nothing urgent to fix.", good=service.band_ranges()["Good"],
                       icon=None)


def noise_view(summary: service.RunSummary) -> None:
    """The judge's disagreement with itself, when each metric was asked more than once per sample."""
    noise = service.judge_noise(summary)
    if not noise:
        return
    st.subheader("Judge noise")
    st.caption("Each judged metric was asked more than once per sample. Within-sample std: the mean spread of "
               "one sample's judge scores. Band flips: samples whose band differs between repeats.")
    views.records_table([{"metric": n.metric, "repeats": n.repeats, "samples": n.samples,
                       "within-sample std": n.mean_std, "band flips": f"{n.band_flip_share:.0%}"} for n in noise],
                     column_config={"within-sample std": st.column_config.NumberColumn(format="%.3f")})


def usage_view(summary: service.RunSummary, meta: RunMeta) -> None:
    """Judge calls, cache hits, tokens, retries and cost."""
    st.subheader("Judge usage")
    if (meta.settings.get("judge") or "offline") == "offline":
        st.caption("Offline judge: 0 judge calls, no tokens, no cost.")
        errors.info("{notice}", notice=service.OFFLINE_NOTICE, icon=":material/info:")
        return
    usage = summary.usage
    cost = service.judge_cost(usage, meta.settings)
    ok, asked = service.judge_calls(usage)
    cells = [("Judge calls", "calls"), ("Failed calls", "failures"), ("Cache hits", "cache_hits"),
             ("Prompt tokens", "prompt_tokens"), ("Completion tokens", "completion_tokens"), ("Retries", "retries")]
    columns = st.columns(len(cells) + 1)
    for col, (label, key) in zip(columns, cells):
        col.metric(label, f"{usage.get(key, 0):,}")
    columns[-1].metric("Cost", "–" if cost is None else f"{cost:.4f}",
                       help="Give prices per million tokens in the judge settings to see the cost." if cost is None
                       else None)
    usable, _ = service.usable_replies(usage)
    cached = usage.get("cached_prompt_tokens") or 0
    note = (f" {cached:,} of the prompt tokens were read from the server's prompt cache (billed at a discount "
            "by OpenAI; the cost shown counts them at the full price)." if cached else "")
    st.caption(f"{ok:,} of {asked:,} judge calls answered, {usable:,} of {asked:,} replies usable"
               + ("; no prices given, so no cost." if cost is None else ".") + note)


def target_view(summary: service.RunSummary) -> None:
    """Latency and failures of the calls to the user's pipeline, when a target answered."""
    stats = summary.target
    if stats is None:
        return
    st.subheader("Target")
    fmt = lambda ms: "–" if ms is None else f"{ms:,.0f} ms"  # noqa: E731
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Target calls", f"{stats.calls:,}")
    c2.metric("Failed calls", f"{stats.failures:,}")
    c3.metric("Latency p50", fmt(stats.p50_ms))
    c4.metric("Latency p95", fmt(stats.p95_ms))
    if stats.failures:
        errors.error("{failures} of {calls} target calls failed: their rows are kept with the reason (column "
                     "target_error) and their metrics are skipped.", failures=stats.failures, calls=stats.calls,
                     icon=":material/error:")


def agreement_view(summary: service.RunSummary) -> None:
    """Agreement with human labels (human_<metric> columns) and other tools' grades (external_<tool>_<metric>)."""
    table = service.labels_agreement(summary)
    if not table:
        return
    st.subheader("Agreement with human labels" if all(" vs " not in m for m in table)
                 else "Agreement with human labels and other tools' grades")
    st.caption("AUROC for 0/1 labels (0.5 = chance, 1 = perfect ranking); Spearman/Kendall for graded labels; "
               "MAE against labels scaled to 0–1. Trust a metric's chart only as far as it agrees with people.")
    three = st.column_config.NumberColumn(format="%.3f")
    views.records_table([{"metric": a.metric, "rows": a.n, "labels": a.kind, "AUROC": a.auroc, "Spearman": a.spearman,
                       "Kendall": a.kendall, "MAE": a.mae} for a in table.values()],
                     column_config={c: three for c in ("AUROC", "Spearman", "Kendall", "MAE")})
    chart = service.calibration_chart(table)
    if chart is not None:
        st.altair_chart(chart, width="stretch")


def filter_frame(frame: Any) -> Any:
    """Filter widgets (text, category, metric threshold, method) and the rows of a report held in memory they keep."""
    categories = sorted(frame["category"].dropna().unique()) if "category" in frame else []
    f = filter_widgets(service.score_columns(frame), categories)
    return service.select_rows(frame, text=f.text, categories=f.categories, metric=f.metric, at_most=f.at_most,
                                   methods=f.methods)


def filter_widgets(cols: Sequence[str], categories: Sequence[str]) -> service.Filters:
    """Filter widgets (text, category, metric threshold, method): what the Samples table keeps."""
    state.drop_stale(state.REP_CATEGORIES, categories)  # kept from a report with other categories
    state.drop_stale(state.REP_METRIC, ["(any)"] + list(cols))
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    text = c1.text_input("Search question / answer / id", key="rep_search", persist_state=state.KEEP)
    chosen = c2.multiselect("Category", categories, key=state.REP_CATEGORIES,
                            persist_state=state.KEEP) if categories else []
    metric = c3.selectbox("Metric", ["(any)"] + list(cols), key=state.REP_METRIC, persist_state=state.KEEP)
    at_most = c4.slider("at most", 0.0, 1.0, 1.0, 0.05, key="rep_max", disabled=metric == "(any)",
                        persist_state=state.KEEP)
    methods = st.multiselect("Scored by (any metric)", list(METHOD_LABELS), format_func=METHOD_LABELS.__getitem__,
                             key="rep_methods", persist_state=state.KEEP)
    return service.Filters(text=text, categories=tuple(chosen), metric=None if metric == "(any)" else metric,
                   at_most=at_most, methods=tuple(methods))


ROW_PX, HEADER_PX, TABLE_PX = 35, 38, 360


def table_height(rows: int) -> int:
    """Tall enough for `rows` and no more (no empty padding rows), at most TABLE_PX (then it scrolls)."""
    return min(TABLE_PX, HEADER_PX + ROW_PX * max(1, rows) + 2)


def samples_table(frame: Any, limit: int = 2_000, one_based: bool = True) -> None:
    """Scores before the long texts, to 3 decimals, tinted by band (up to `limit` rows: styling is slow). Rows are
    numbered from 1 as people count (`one_based`; the drill-down's "#n" is the same number)."""
    cols = service.score_columns(frame)
    head = [c for c in ("#", "sample_id", "category", "turns", "worst turn") if c in frame.columns]
    texts = [c for c in ("question", "answer", "ground_truth") if c in frame.columns]
    grades = service.external_columns(frame)  # other tools' grades, beside ours, never tinted as ours
    table = frame[head + ["overall"] + [c for c in cols if c != "overall"] + grades + texts]
    if one_based and "#" in table.columns:
        table = table.assign(**{"#": table["#"] + 1})
    config = {c: st.column_config.NumberColumn(format="%.3f") for c in cols + grades}
    height = table_height(len(table))
    if len(table) <= limit:
        views.records_table(table.style.map(band_tint, subset=cols), column_config=config, height=height)
    else:  # sent in chunks as the user scrolls or sorts: 10,000 rows at once slow the page down
        views.records_table(table, column_config=config, height=height, lazy=True)


def band_tint(value: Any) -> str:
    if value is None or value != value:  # None or NaN: skipped
        return ""
    return f"background-color: {service.BAND_COLORS[service.band(float(value))]}40"  # the band's colour, light


def drill_down(report: EvalReport, frame: Any, shown: Any) -> None:
    st.subheader("Drill-down")
    options = shown["#"].tolist()[:1000]
    if not options:
        errors.info("No sample matches the filters.")
        return
    if len(shown) > len(options):
        st.caption("Listing the first 1,000 matches; narrow the filters to reach the others.")
    state.drop_stale(state.REP_SAMPLE, options)  # kept from a bigger report, or filtered out
    pick = st.selectbox("Sample", options, format_func=lambda i: sample_label(frame, i), key=state.REP_SAMPLE,
                        persist_state=state.KEEP)  # options are plain text: the question is shown as typed
    result_view(report.results[pick])


def result_view(result: Any) -> None:
    """One sample: its claims marked on the text when it has any, then its scores and reasoning."""
    marked = service.claims_html(result)
    if marked:  # the answer, reference and contexts with their claims marked: shown here, not again below
        with st.expander("Claims on the text", expanded=True):
            st.html(marked)
    views.result_view(result, bool(marked))


def sample_label(frame: Any, i: int) -> str:
    row = frame.loc[frame["#"] == i].iloc[0]
    question = str(row.get("question") or "")
    question = question if len(question) <= 70 else question[:67] + "…"
    overall = row["overall"]
    shown = views.format_score(None if overall != overall else overall)  # NaN: nothing scored
    return f"#{i + 1} · {row.get('sample_id')} · {question} (overall {shown})"


CHART_SLUGS = {"Means ± 1 std": "means", "Distributions": "distributions", "By category": "by-category"}
CHART_TYPES = (("PNG", "png", "image/png"), ("SVG", "svg", "image/svg+xml"), ("PDF", "pdf", "application/pdf"))


def run_files(view: RunView) -> Any:
    """The run's files, each built only when its button is clicked (a stored run's rows are read then)."""
    meta = view.meta
    store = runs.open_store() if view.report is None else None  # opened now: a click runs outside the script
    return service.run_files(meta.dataset_name, view.summary, meta.settings, report=view.report, store=store,
                             run_id=meta.run_id, date=meta.created_at, title=meta.title,
                             reviewed=lambda: {m: service.reviewed_line(a) for m, a in rv.agreement(meta.run_id).items()})


def failed_downloads() -> Dict[str, str]:
    """Where a download's builder writes why its file could not be made (one dict per session: the builder runs
    on Streamlit's worker thread, after the script, so it writes into this object, never into st.session_state)."""
    if not state.has(state.REP_DOWNLOAD_FAILED):
        state.put(state.REP_DOWNLOAD_FAILED, {})
    return state.get(state.REP_DOWNLOAD_FAILED)


def guarded(build: Callable[[], bytes], what: str) -> Callable[[], bytes]:
    """`build`, which when its file cannot be made (the renderer crashed or ran out of time: a RenderError)
    fails this download only: the button shows Streamlit's "Failed to generate file", and the reason is kept for
    the red box the page draws on its next run (a deferred download cannot draw)."""
    failures = failed_downloads()

    def build_now() -> bytes:
        try:
            return build()
        except Exception as exc:
            failures[what] = errors.friendly(exc)
            raise
    return build_now


def download_failures() -> None:
    """A red box per download that failed since the page last ran: which file, and why."""
    failures = failed_downloads()
    for what, why in list(failures.items()):
        errors.error("The {what} could not be made: {why}. Every other download still works; try again, or "
                     "download the CSV or JSON.", what=what, why=why)
        failures.pop(what, None)


def download(column: Any, label: str, files: Any, ext: str, meta: RunMeta, **options: Any) -> None:
    """One download button: the file `ext` of the run, built on click by the use case `ragmeter export` calls."""
    kind = service.EXPORT_TYPES[ext]
    column.download_button(label, guarded(partial(service.export_bytes, files, ext), kind.what),
                           service.export_file_name(meta.dataset_name, meta.run_id, ext), kind.mime, on_click="ignore",
                           **options)


def downloads(view: RunView, charts: Dict[str, Any], files: Any) -> None:
    """Share and download, at the top of the Report (the first screen): the link, the HTML report, the PDF summary
    and the charts' files, each chart with the run's provenance caption under it."""
    # A download needs no rerun; one would also replace the other buttons' deferred files while a
    # second click is on its way ("Deferred file not found", and that download never starts).
    download_failures()
    c0, c3, c6, c7, c8 = st.columns([2, 3, 3.2, 2.1, 2], vertical_alignment="center")
    with c0:
        copy_link(view.meta)
    with c8:
        notes_popover(view.meta)
    download(c3, "Download HTML report", files, "html", view.meta, key="dl_html", type="primary",
             icon=":material/download:")
    download(c6, "Download PDF summary", files, "pdf", view.meta, key="dl_pdf", icon=":material/picture_as_pdf:",
             help="One page to attach to an e-mail: headline, chart, what to improve, the five worst samples, "
                  "provenance.")
    with c7.popover("Chart files", icon=":material/image:"):
        chart_downloads(view, charts)


def data_downloads(view: RunView, files: Any) -> None:
    """The rows as CSV, Excel, JSON and Parquet (right under the chart)."""
    c1, c5, c2, c4 = st.columns(4)
    download(c1, "Download CSV", files, "csv", view.meta, key="dl_csv", icon=":material/table:")
    download(c5, "Download Excel", files, "xlsx", view.meta, key="dl_xlsx", icon=":material/grid_on:")
    download(c2, "Download JSON", files, "json", view.meta, key="dl_json", icon=":material/data_object:")
    download(c4, "Download Parquet", files, "parquet", view.meta, key="dl_parquet", icon=":material/dataset:")


def chart_downloads(view: RunView, charts: Dict[str, Any]) -> None:
    """Each chart as PNG, SVG and PDF, its provenance under it, named ragmeter-<dataset>-<run>-<chart>.<ext>."""
    meta = view.meta
    provenance = service.run_provenance(meta.dataset_name, meta.settings, view.summary, run_id=meta.run_id,
                                        date=meta.created_at, store=runs.open_store())
    st.caption("Each file says under the chart which data, rows, judge, date and run it shows.")
    for i, (name, chart) in enumerate(charts.items()):
        slug = CHART_SLUGS.get(name, name.split()[0].lower())
        for column, (label, ext, mime) in zip(st.columns(3), CHART_TYPES):
            what = f"{name} chart ({label})"
            column.download_button(what, guarded(partial(service.chart_file, chart, provenance, ext), what),
                                   service.chart_file_name(meta.dataset_name, meta.run_id, slug, ext), mime,
                                   key=f"dl_{ext}_{i}", on_click="ignore")


def notes_view(meta: RunMeta) -> None:
    """The run's notes (author, time, what they are on), each shown as text; a form to add one when allowed."""
    if not meta.run_id:
        return
    st.subheader("Notes")
    with errors.guard("Reading the notes"):
        found = service.run_notes(runs.open_store(), meta.run_id)
        for note in found:
            with st.container(border=True):
                errors.caption("{who} · {when} · on {on}", who=note.author, when=note.created_at[:16].replace("T", " "),
                               on=note.on)
                st.text(note.text)  # as typed: never Markdown or HTML
        if not found:
            st.caption("No notes yet. A note is shown here, in the HTML and PDF exports and to anyone opening the "
                       "share link.")
    if not service.may_note(team.access()):
        st.caption("Your role may not write notes on this team server.")
        return
    with st.form("rep_note_form", clear_on_submit=True, border=False):
        text = st.text_area("Add a note", key="rep_note_text", max_chars=service.MAX_NOTE_CHARS, height=90,
                            placeholder="What you found, what to try, a question for the team…")
        sample = st.text_input("On one sample (optional)", key="rep_note_sample",
                               placeholder="its sample_id, or #n for its row")
        if st.form_submit_button("Save note", icon=":material/comment:"):
            with errors.guard("Saving the note"):
                service.save_note(runs.open_store(), meta.run_id, text, access=team.access(), sample=sample.strip())
                st.rerun()


def trust_notes(summary: service.RunSummary) -> None:
    """At the top of a report: a judge failure in red, fallbacks in amber, the offline caveat in blue."""
    trust = summary.trust
    stopped = trust.stopped
    fallback, judged = trust.fallback, trust.judged
    if stopped:
        errors.error("**The run stopped: the judge failed.** {hint}", hint=dashboard_hint(stopped),
                     icon=":material/error:")
    if fallback:
        errors.warning("{fallback:,} of {judged:,} judged scores fell back to the heuristic after a judge failure "
                       "({cause}): those scores are lexical estimates.", fallback=fallback, judged=judged,
                       cause=trust.main_cause or "see each score", icon=":material/warning:")
    if trust.offline:  # one line, so the cards and the chart stay on the first screen; the rest under Judge usage
        errors.info("**Offline estimate:** words matched, not judged by a model (why: **Judge usage** below).",
                    icon=":material/info:")
    language = trust.language_note
    if language:  # rows in a language without prompts of its own were scored with the English ones
        errors.info("{note}", note=language.strip().capitalize(), icon=":material/translate:")


def verdict_box(summary: service.RunSummary) -> None:
    """The run's verdict when it is not ok (a judge that stopped the run is trust_notes' red box already)."""
    ending = service.verdict_of(summary)
    if ending is not None and not ending.ok and not summary.trust.stopped:
        run_verdict_box(ending)


def open_shared_run() -> None:
    """A share link (/report?run=<run_id>) opens its run, unless the id is the one this page put there itself;
    then the address bar names the run shown, so it is the share link."""
    shared = str(st.query_params.get("run") or "")
    meta = state.run_meta()
    if shared and shared != state.get(state.LINKED) and (meta is None or meta.run_id != shared):
        with errors.guard("Opening the shared run"):
            runs.open_run(shared)
    meta = state.run_meta()
    if meta is not None and meta.run_id:
        st.query_params["run"] = meta.run_id
        state.put(state.LINKED, meta.run_id)


def copy_link(meta: RunMeta) -> None:
    if meta.run_id:
        with st.popover("Copy link", icon=":material/link:"):
            url = runs.share_url(team.share_link("report", run=meta.run_id))
            st.caption("Anyone allowed to view this dashboard opens this run with:")
            st.code(url, language=None)  # has a copy button
            if runs.is_loopback(url):
                errors.warning("This link works only on this machine: the dashboard listens on a local address. "
                               "To share it, start the dashboard where others can reach it (`ragmeter serve "
                               "--address 0.0.0.0`, or behind your team's proxy) and copy the link there; or send "
                               "the PDF summary or the HTML report instead.", icon=":material/lan:")


def notes_popover(meta: RunMeta) -> None:
    """The run's notes from the first screen: how many, and each one's text (the form is at the page's foot)."""
    if not meta.run_id:
        return
    with errors.guard("Reading the notes"):
        found = service.run_notes(runs.open_store(), meta.run_id)
        with st.popover(f"Notes ({len(found)})", icon=":material/comment:"):
            for note in found[-5:]:
                errors.caption("{who} · {when} · on {on}", who=note.author,
                               when=note.created_at[:16].replace("T", " "), on=note.on)
                st.text(note.text)  # as typed: never Markdown or HTML
            st.caption("Add a note in **Notes** at the foot of this page." if found else
                       "No notes yet. Add one in **Notes** at the foot of this page.")
