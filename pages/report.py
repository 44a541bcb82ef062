"""Report: per-metric summary, charts, advice, judge usage, human agreement, samples and drill-down."""
import streamlit as st

from pages import _chat_view as chat
from pages import _errors as errors
from pages import _nav as nav
from pages import _report_data as report_data
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
if not shared_run and state.report() is None:
    runs.active_runs("report")  # what anyone is running now, while there is no report to show
sections.open_shared_run()
report, meta = state.report(), state.run_meta()
if report is None or meta is None or not report.results:
    sections.empty_report()
    st.stop()

st.caption(sections.report_caption(report, meta))
sections.trust_notes(report)
sections.verdict_box(report)
sums = report_data.summaries(meta.token, report)
sections.metric_cards(report, meta, sums)
views.band_legend()
charts = report_data.report_charts(meta.token, report)
for tab, chart in zip(st.tabs(list(charts)), charts.values()):
    tab.altair_chart(chart, width="stretch")
sections.summary_table(sums)
sections.advice_view(sums, meta)
sections.noise_view(report)
sections.usage_view(report, meta)
sections.target_view(report)
sections.agreement_view(report, meta)
reviewing.reviewers_view(meta.run_id)

st.subheader("Samples")
st.caption("Click a column header to sort; filter to find weak answers, then open one below.")
conversations = chat.is_conversations(report)  # one row per conversation, its turns in the drill-down
frame = (chat.results_frame if conversations else report_data.results_frame)(meta.token, report)
shown = sections.filter_frame(frame)
st.caption(f"{len(shown):,} of {len(frame):,} samples")
sections.samples_table(shown)
if conversations:
    chat.turns_table(report)
    chat.drill_down(report, frame, shown)
else:
    sections.drill_down(report, frame, shown)

st.subheader("Share")
sections.copy_link(meta)
sections.downloads(report, meta, charts)
