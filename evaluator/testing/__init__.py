"""ragmeter inside a user's own tests: `plugin` is the pytest plugin (the `rag_eval` fixture,
`--ragmeter-report`), loaded through the `pytest11` entry point once ragmeter is installed.

A user surface like the CLI, at the top of the stack; kept out of cli/ so that pytest, which loads
every installed plugin in every session, does not import the command line with it.
"""
