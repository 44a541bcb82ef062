"""Report: the story first (headline, share and downloads, metric cards, chart: one 1400×900 screen), then the
summary table, advice, judge usage, reviews and human labels, samples and drill-down."""
import streamlit as st

from pages import _chat_view as chat
from pages import _errors as errors
from pages import _nav as nav
from pages import _report_data as report_data
from pages import _report_samples as samples
from pages import _report_sections as sections
from pages import _reviewing as reviewing
from pages import _runs as runs
from pages import _state as state
from pages import _views as views

nav.page_setup()

st.title(":material/bar_chart: Report")
if state.live_run() is not None:
    errors.info("A run is in progress; the report opens when it ends.")
    runs.live_progress()  # reruns the page when the run ends
    st.stop()
shared_run = str(st.query_params.get("run") or "")
if shared_run and runs.watch(shared_run):  # someone's run, still going: its progress, live
    st.stop()
if not shared_run and state.run_meta() is None:
    runs.active_runs("report")  # what anyone is running now, while there is no report to show
    with errors.guard("Opening the latest run"):
        if runs.open_latest():  # a Report opened with no run chosen shows the newest finished one
            st.caption("The latest finished run; open another from History.")
sections.open_shared_run()
view = report_data.run_view(state.run_meta(), state.report())  # a stored run: its summary, never its rows
if view is None:
    sections.empty_report()
    st.stop()
meta, summary = view.meta, view.summary

sections.report_header(view)
charts = report_data.report_charts(meta.token, summary)
files = sections.run_files(view)
sections.downloads(view, charts, files)  # share and downloads on the first screen, not below the drill-down
sections.trust_notes(summary)
sections.verdict_box(summary)
sums = view.sums
sections.metric_cards(view, sums)
for tab, chart in zip(st.tabs(list(charts)), charts.values()):
    tab.altair_chart(chart, width="stretch")
views.band_legend()
sections.data_downloads(view, files)
sections.summary_table(sums)
sections.advice_view(summary, meta)
sections.notes_view(meta)
sections.noise_view(summary)
sections.usage_view(summary, meta)
sections.target_view(summary)
sections.agreement_view(summary)
reviewing.reviewers_view(meta.run_id)

st.subheader("Samples")
if view.paged:  # conversations too: a row per conversation, its turns in the drill-down
    st.caption("Filter and sort over the whole run, 50 rows a page; open one row below.")
    samples.samples(view)
elif summary.conversations:  # the history could not keep this run: the conversations held in memory
    assert view.report is not None
    frame = chat.results_frame(meta.token, view.report)
    shown = sections.filter_frame(frame)
    st.caption(f"{len(shown):,} of {len(frame):,} samples")
    sections.samples_table(shown, one_based=False)  # numbered as the conversation picker
    chat.turns_table(list(enumerate(view.report.results)))
    chat.drill_down(view.report, frame, shown)
else:  # the history could not keep this run's rows: the report held in memory
    assert view.report is not None
    st.caption("Click a column header to sort; filter to find weak answers, then open one below.")
    frame = report_data.results_frame(meta.token, view.report)
    shown = sections.filter_frame(frame)
    st.caption(f"{len(shown):,} of {len(frame):,} samples")
    sections.samples_table(shown)
    sections.drill_down(view.report, frame, shown)

