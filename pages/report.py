"""Report: per-metric summary, charts, advice, judge usage, human agreement, samples and drill-down."""
import streamlit as st

from evaluator.advice import recommendations

from pages import _ui as ui

ui.page_setup("Report")

st.title(":material/bar_chart: Report")
live = st.session_state.get(ui.LIVE)
if live is not None:
    st.info("A run is in progress; the report opens when it ends.")
    ui.watch(live)
    st.rerun()
report, meta = st.session_state.get(ui.REPORT), st.session_state.get(ui.RUN)
if report is None or not report.results:
    ui.empty_report()
    st.stop()

st.caption(ui.report_caption(report, meta))
sums = ui.summaries(meta.token, report)
ui.metric_cards(report, sums)
ui.band_legend()
charts = ui.report_charts(meta.token, report)
for tab, chart in zip(st.tabs(list(charts)), charts.values()):
    tab.altair_chart(chart, width="stretch")
st.dataframe(ui.summary_rows(sums), hide_index=True, width="stretch", column_config=ui.SUMMARY_FORMAT)

st.subheader("What to improve")
advice = recommendations({s.name: s.mean for s in sums})
for item in advice:
    with st.container(border=True):
        st.markdown(f"**{item.metric}** {ui.badge(item.score)} — {item.diagnosis}", unsafe_allow_html=True)
        st.markdown("\n".join(f"- {action}" for action in item.actions))
if not advice:
    st.success("Every metric is at least Good (0.7+). Nothing urgent to fix.")

ui.usage_view(report, meta)
ui.agreement_view(report, meta)

st.subheader("Samples")
st.caption("Click a column header to sort; filter to find weak answers, then open one below.")
frame = ui.results_frame(meta.token, report)
shown = ui.filter_frame(frame)
st.caption(f"{len(shown):,} of {len(frame):,} samples")
st.dataframe(ui.colour_scores(shown[ui.table_columns(shown)]), hide_index=True, width="stretch", height=360)

st.subheader("Drill-down")
options = shown["#"].tolist()[:1000]
if options:
    if len(shown) > len(options):
        st.caption("Listing the first 1,000 matches; narrow the filters to reach the others.")
    pick = st.selectbox("Sample", options, format_func=lambda i: ui.sample_label(frame, i), key="rep_sample")
    result = report.results[pick]
    left, right = st.columns([2, 3])
    with left:
        ui.sample_view(result.sample)
    with right:
        ui.result_view(result)
else:
    st.info("No sample matches the filters.")

st.subheader("Share")
ui.downloads(report, meta, charts)
