"""Report: per-metric summary, charts, advice, judge usage, human agreement, samples and drill-down."""
from pathlib import Path
from typing import Any, Dict, Sequence

import streamlit as st

from evaluator.analysis import judging
from evaluator.analysis.advice import recommendations
from evaluator.analysis.bands import BAND_COLORS, band, band_ranges
from evaluator.analysis.noise import judge_noise
from evaluator.costs import price
from evaluator.metrics.rubric import rubrics_in_settings
from evaluator.model import METHOD_LABELS, EvalReport
from evaluator.verdict import RowCounts, verdict

from pages import _chat_view as chat
from pages import _reviewing as rv
from pages import _team as team
from pages import _ui as ui

ui.page_setup("Report")


def empty_report() -> None:
    """No report yet: say where to get one, and offer the one-click sample run."""
    meta = st.session_state.get(ui.RUN)
    if meta is not None and meta.error:
        st.error(f"The last run failed before scoring anything: {meta.error}", icon=":material/warning:")
    st.info("No report yet. Score a dataset on the **Evaluate** page, or try the bundled sample right now: "
            "offline, no API key, a few seconds.", icon=":material/waving_hand:")
    c1, c2, _ = st.columns([2, 2, 3])
    if c1.button("Run the sample data offline", key="btn_quick_run", type="primary", icon=":material/play_arrow:"):
        with ui.guard("Running the sample"):
            dataset = ui.load_sample()
            ui.watch(ui.start_run(dataset.samples, ui.RunConfig(), dataset_name=dataset.name))
            st.rerun()
    with c2:
        ui.button_link("Go to Evaluate", ui.EVALUATE_PAGE, key="btn_go_evaluate")


def report_caption(report: EvalReport, meta: ui.RunMeta) -> str:
    n = len(report.results)
    parts = [f"**{meta.dataset_name}**", f"{n:,} sample{'' if n == 1 else 's'}",
             f"judge: {judging.judge_status(report, meta.settings)}",
             ui.format_duration(report.total_time), f"status: {meta.status}"]
    return " · ".join(parts + ([f"run `{meta.run_id}`"] if meta.run_id else []))


def verdict_box(report: EvalReport) -> None:
    """The run's verdict when it is not ok (a judge that stopped the run is trust_notes' red box already)."""
    ending = verdict(report)
    if ending.ok or judging.stopped_reason(report):
        return
    box = st.error if ending.severity == "error" else st.warning
    box(f"**{ending.label.capitalize()}:** {ui.plain(ending.cause.replace('--max-fallback-rate', 'the allowed share'))}",
        icon=":material/error:")


def metric_cards(report: EvalReport, meta: ui.RunMeta, sums: Sequence[Any]) -> None:
    """One card per metric: mean, band, ±std, 95% CI, scored/total and fallbacks."""
    if meta.status == "stopped" and meta.total > len(report.results):
        st.warning(f"This run was stopped: {len(report.results):,} of {meta.total:,} samples are scored. "
                   "Resume it from the History page.")
    cards = [("overall", report.overall_mean(), None)] + [(s.name, s.mean, s) for s in sums]
    reviewed = rv.agreement(meta.run_id)  # judge agreement with your reviewers, beside each mean
    for start in range(0, len(cards), 4):
        for col, (name, mean, s) in zip(st.columns(4), cards[start:start + 4]):
            with col.container(border=True, height="stretch"):
                st.metric(name, "N/A" if mean is None else f"{mean:.3f}",
                          help="Per sample, the mean of its judged metrics (rule-based ones left out)" if s is None else
                          "Mean over the samples this metric could score.")
                st.markdown(ui.badge(mean, mean is None, show_score=False), unsafe_allow_html=True)
                st.caption(card_caption(s) if s is not None else RowCounts.of(report).summary())
                if s is not None and rv.card_line(reviewed.get(s.name)):
                    st.caption(rv.card_line(reviewed.get(s.name)))


def card_caption(s: Any) -> str:
    if s.mean is None:
        return f"not scored on any of {s.n_total} samples"
    text = f"± {s.std:.3f}" if s.std is not None else "± –"
    if s.ci_low is not None:
        text += f" · 95% CI {s.ci_low:.3f}–{s.ci_high:.3f}"
    text += f" · scored {s.n_scored}/{s.n_total}"
    return text + (f" · :material/warning: {s.n_fallback} fallback" if s.n_fallback else "")


def summary_table(sums: Sequence[Any]) -> None:
    """The per-metric summary: mean, std, CI, counts, band and how the scores were made."""
    rows = [{"metric": s.name, "mean": s.mean, "std": s.std, "95% CI low": s.ci_low, "95% CI high": s.ci_high,
             "scored": s.n_scored, "total": s.n_total, "fallback": s.n_fallback, "skipped": s.n_skipped,
             "band": band(s.mean) if s.mean is not None else "N/A",
             "how": ", ".join(f"{METHOD_LABELS.get(m, m)}: {n}" for m, n in s.methods.items())} for s in sums]
    three = st.column_config.NumberColumn(format="%.3f")
    config = {c: three for c in ("mean", "std", "95% CI low", "95% CI high")}
    config["how"] = st.column_config.TextColumn("how", width="large")
    ui.records_table(rows, column_config=config)


def advice_view(sums: Sequence[Any], meta: ui.RunMeta) -> None:
    st.subheader("What to improve")
    advice = recommendations({s.name: s.mean for s in sums}, metrics=rubrics_in_settings(meta.settings))
    for item in advice:
        with st.container(border=True):
            st.markdown(f"**{item.metric}** {ui.badge(item.score)} — {item.diagnosis}", unsafe_allow_html=True)
            st.markdown("\n".join(f"- {action}" for action in item.actions))
    if not advice:
        st.success(f"Every metric is at least Good ({band_ranges()['Good']}). Nothing urgent to fix.")


def noise_view(report: EvalReport) -> None:
    """The judge's disagreement with itself, when each metric was asked more than once per sample."""
    noise = judge_noise(report)
    if not noise:
        return
    st.subheader("Judge noise")
    st.caption("Each judged metric was asked more than once per sample. Within-sample std: the mean spread of "
               "one sample's judge scores. Band flips: samples whose band differs between repeats.")
    ui.records_table([{"metric": n.metric, "repeats": n.repeats, "samples": n.samples,
                       "within-sample std": n.mean_std, "band flips": f"{n.band_flip_share:.0%}"} for n in noise],
                     column_config={"within-sample std": st.column_config.NumberColumn(format="%.3f")})


def usage_view(report: EvalReport, meta: ui.RunMeta) -> None:
    """Judge calls, cache hits, tokens, retries and cost."""
    st.subheader("Judge usage")
    if (meta.settings.get("judge") or "offline") == "offline":
        st.caption("Offline judge: 0 judge calls, no tokens, no cost.")
        return
    usage = report.usage or {}
    cost = price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0),
                 meta.settings.get("price_in"), meta.settings.get("price_out"))
    ok, asked = judging.judge_calls(usage)
    cells = [("Judge calls", "calls"), ("Failed calls", "failures"), ("Cache hits", "cache_hits"),
             ("Prompt tokens", "prompt_tokens"), ("Completion tokens", "completion_tokens"), ("Retries", "retries")]
    columns = st.columns(len(cells) + 1)
    for col, (label, key) in zip(columns, cells):
        col.metric(label, f"{usage.get(key, 0):,}")
    columns[-1].metric("Cost", "–" if cost is None else f"{cost:.4f}",
                       help="Give prices per million tokens in the judge settings to see the cost." if cost is None
                       else None)
    usable, _ = judging.usable_replies(usage)
    cached = usage.get("cached_prompt_tokens") or 0
    note = (f" {cached:,} of the prompt tokens were read from the server's prompt cache (billed at a discount "
            "by OpenAI; the cost shown counts them at the full price)." if cached else "")
    st.caption(f"{ok:,} of {asked:,} judge calls answered, {usable:,} of {asked:,} replies usable"
               + ("; no prices given, so no cost." if cost is None else ".") + note)


def target_view(report: EvalReport) -> None:
    """Latency and failures of the calls to the user's pipeline, when a target answered."""
    stats = report.target_stats()
    if not stats:
        return
    st.subheader("Target")
    fmt = lambda ms: "–" if ms is None else f"{ms:,.0f} ms"  # noqa: E731
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Target calls", f"{stats['calls']:,}")
    c2.metric("Failed calls", f"{stats['failures']:,}")
    c3.metric("Latency p50", fmt(stats["p50_ms"]))
    c4.metric("Latency p95", fmt(stats["p95_ms"]))
    if stats["failures"]:
        st.error(f"{stats['failures']} of {stats['calls']} target calls failed: their rows are kept with the "
                 "reason (column target_error) and their metrics are skipped.", icon=":material/error:")


def agreement_view(report: EvalReport, meta: ui.RunMeta) -> None:
    """Agreement with human labels (human_<metric> columns), when the data has any."""
    table = ui.agreement(meta.token, report)
    if not table:
        return
    from evaluator.charts import calibration_chart

    st.subheader("Agreement with human labels")
    st.caption("AUROC for 0/1 labels (0.5 = chance, 1 = perfect ranking); Spearman/Kendall for graded labels; "
               "MAE against labels scaled to 0–1. Trust a metric's chart only as far as it agrees with people.")
    three = st.column_config.NumberColumn(format="%.3f")
    ui.records_table([{"metric": a.metric, "rows": a.n, "labels": a.kind, "AUROC": a.auroc, "Spearman": a.spearman,
                       "Kendall": a.kendall, "MAE": a.mae} for a in table.values()],
                     column_config={c: three for c in ("AUROC", "Spearman", "Kendall", "MAE")})
    chart = calibration_chart(table)
    if chart is not None:
        st.altair_chart(chart, width="stretch")


def filter_frame(frame: Any) -> Any:
    """Filter widgets (text, category, metric threshold, method) and the rows they keep."""
    cols = ui.score_columns(frame)
    categories = sorted(frame["category"].dropna().unique()) if "category" in frame else []
    ui.drop_stale("rep_categories", categories)  # kept from a report with other categories
    ui.drop_stale("rep_metric", ["(any)"] + cols)
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    text = c1.text_input("Search question / answer / id", key="rep_search")
    chosen = c2.multiselect("Category", categories, key="rep_categories") if categories else []
    metric = c3.selectbox("Metric", ["(any)"] + cols, key="rep_metric")
    at_most = c4.slider("at most", 0.0, 1.0, 1.0, 0.05, key="rep_max", disabled=metric == "(any)")
    methods = st.multiselect("Scored by (any metric)", list(METHOD_LABELS), format_func=METHOD_LABELS.get,
                             key="rep_methods")
    return ui.select_rows(frame, text=text, categories=chosen, metric=None if metric == "(any)" else metric,
                          at_most=at_most, methods=methods)


def samples_table(frame: Any, limit: int = 2_000) -> None:
    """Scores before the long texts, to 3 decimals, tinted by band (up to `limit` rows: styling is slow)."""
    cols = ui.score_columns(frame)
    head = [c for c in ("#", "sample_id", "category", "turns", "worst turn") if c in frame.columns]
    texts = [c for c in ("question", "answer", "ground_truth") if c in frame.columns]
    data = frame[head + ["overall"] + [c for c in cols if c != "overall"] + texts]
    config = {c: st.column_config.NumberColumn(format="%.3f") for c in cols}
    if len(data) <= limit:
        ui.records_table(data.style.map(band_tint, subset=cols), column_config=config, height=360)
    else:  # sent in chunks as the user scrolls or sorts: 10,000 rows at once slow the page down
        ui.records_table(data, column_config=config, height=360, lazy=True)


def band_tint(value: Any) -> str:
    if value is None or value != value:  # None or NaN: skipped
        return ""
    return f"background-color: {BAND_COLORS[band(float(value))]}40"  # the band's colour, light


def drill_down(report: EvalReport, frame: Any, shown: Any) -> None:
    st.subheader("Drill-down")
    options = shown["#"].tolist()[:1000]
    if not options:
        st.info("No sample matches the filters.")
        return
    if len(shown) > len(options):
        st.caption("Listing the first 1,000 matches; narrow the filters to reach the others.")
    ui.drop_stale("rep_sample", options)  # kept from a bigger report, or filtered out
    pick = st.selectbox("Sample", options, format_func=lambda i: sample_label(frame, i), key="rep_sample")
    with st.expander("Claims on the text", expanded=True):
        rv.claims_view(report.results[pick])
    ui.result_view(report.results[pick])


def sample_label(frame: Any, i: int) -> str:
    row = frame.loc[frame["#"] == i].iloc[0]
    question = str(row.get("question") or "")
    question = question if len(question) <= 70 else question[:67] + "…"
    overall = row["overall"]
    return f"#{i} · {row.get('sample_id')} · {question} (overall {ui.format_score(None if overall != overall else overall)})"


def downloads(report: EvalReport, meta: ui.RunMeta, charts: Dict[str, Any]) -> None:
    """CSV, JSON, HTML report, Parquet and each chart as PNG and SVG (generated only when clicked)."""
    from evaluator import charts as chart_io
    from evaluator.io import export

    stem = f"ragmeter-{Path(meta.dataset_name).stem or 'report'}"
    # A download needs no rerun; one would also replace the other buttons' deferred files while a
    # second click is on its way ("Deferred file not found", and that download never starts).
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("Download CSV", lambda: export.results_csv(report), f"{stem}.csv", "text/csv", key="dl_csv",
                       icon=":material/table:", on_click="ignore")
    c2.download_button("Download JSON", lambda: export.results_json(report, settings=meta.settings),
                       f"{stem}.json", "application/json", key="dl_json", icon=":material/data_object:",
                       on_click="ignore")
    c3.download_button("Download HTML report", lambda: export.html_report(
        report, title=f"ragmeter report: {meta.dataset_name}", dataset_name=meta.dataset_name,
        settings=meta.settings, labels_agreement=ui.agreement(meta.token, report) or None), f"{stem}.html",
        "text/html", key="dl_html", type="primary", icon=":material/download:", on_click="ignore")
    c4.download_button("Download Parquet", lambda: export.results_parquet(report), f"{stem}.parquet",
                       "application/vnd.apache.parquet", key="dl_parquet", icon=":material/dataset:",
                       on_click="ignore")
    for i, (name, chart) in enumerate(charts.items()):
        slug = name.split()[0].lower()
        c1, c2, _ = st.columns(3)
        c1.download_button(f"{name} chart (PNG)", lambda c=chart: chart_io.chart_png(c), f"{stem}-{slug}.png",
                           "image/png", key=f"dl_png_{i}", on_click="ignore")
        c2.download_button(f"{name} chart (SVG)", lambda c=chart: chart_io.chart_svg(c), f"{stem}-{slug}.svg",
                           "image/svg+xml", key=f"dl_svg_{i}", on_click="ignore")


st.title(":material/bar_chart: Report")
live = st.session_state.get(ui.LIVE)
if live is not None:
    st.info("A run is in progress; the report opens when it ends.")
    ui.watch(live)
    st.rerun()
shared = str(st.query_params.get("run") or "")
meta = st.session_state.get(ui.RUN)
# A share link (/report?run=<run_id>) opens its run, unless the id is the one this page put there itself.
if shared and shared != st.session_state.get(ui.LINKED) and (meta is None or meta.run_id != shared):
    with ui.guard("Opening the shared run"):
        ui.open_run(shared)
report, meta = st.session_state.get(ui.REPORT), st.session_state.get(ui.RUN)
if meta is not None and meta.run_id:
    st.query_params["run"] = st.session_state[ui.LINKED] = meta.run_id  # the address bar is the share link
if report is None or not report.results:
    empty_report()
    st.stop()

st.caption(report_caption(report, meta))
ui.trust_notes(report)
verdict_box(report)
sums = ui.summaries(meta.token, report)
metric_cards(report, meta, sums)
ui.band_legend()
charts = ui.report_charts(meta.token, report)
for tab, chart in zip(st.tabs(list(charts)), charts.values()):
    tab.altair_chart(chart, width="stretch")
summary_table(sums)
advice_view(sums, meta)
noise_view(report)
usage_view(report, meta)
target_view(report)
agreement_view(report, meta)
rv.reviewers_view(meta.run_id)

st.subheader("Samples")
st.caption("Click a column header to sort; filter to find weak answers, then open one below.")
conversations = chat.is_conversations(report)  # one row per conversation, its turns in the drill-down
frame = (chat.results_frame if conversations else ui.results_frame)(meta.token, report)
shown = filter_frame(frame)
st.caption(f"{len(shown):,} of {len(frame):,} samples")
samples_table(shown)
if conversations:
    chat.turns_table(report)
    chat.drill_down(report, frame, shown)
else:
    drill_down(report, frame, shown)

st.subheader("Share")
if meta.run_id:
    with st.popover("Copy link", icon=":material/link:"):
        st.caption("Anyone allowed to view this dashboard opens this run with:")
        st.code(ui.share_url(team.share_link("report", run=meta.run_id)), language=None)  # has a copy button
downloads(report, meta, charts)
