"""Reading the scores: `stats` (means, std, bootstrap CIs), `bands` (score bands and their colours),
`advice` (what to do about a low metric), `agreement` (with human labels), `compare` (run B against
run A; `compare_text` says it as a table or a pull-request comment), `judging` (how the judge fared: offline
notice, failures, fallbacks), `noise` (the judge's disagreement with itself over repeats), `inference` (every
inferential statistic: corrected means from human labels, active-sampling weights, the A/B confidence
sequence), `summary` (a run's figures computed once when it ends and stored with it, so pages
never hold its rows), `charts` (the report's charts) and `render` (the one door to the chart and PDF renderer:
text made drawable, drawn in a capped child process, `render_child`)."""
