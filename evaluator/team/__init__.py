"""A shared dashboard's trust decisions (README "Team mode"), plain data in and a decision out:

    identity.py   who a request is: a trusted proxy's header or a verified OIDC claim, one spelling
                  per person, no look-alikes
    access.py     who may make each write (run, generate, review, resume, rescore, stop, rename, delete)
    startup.py    what a team server needs before it serves anyone (trust, upload limit, sign-in parts)
    resuming.py   which configured judge resumes a stored run (never the key variable the run names)
    settings.py   every setting (history, judge cache, user, judge, runs) resolved flag > environment >
                  this file > default, with its origin: what every program uses and `ragmeter config` prints

The operator's file itself is evaluator/config.py; pages/_team.py and pages/_sessions.py feed these
modules what Streamlit knows about a session.
"""
