"""Reports: a scored run written out for people and tools. `export`: CSV, JSON and the HTML report
(from `templates/`), with every user string escaped and every spreadsheet formula neutralised."""
