"""The `ragmeter` command, the second front door over evaluator.service: it parses flags (args) and prints
(command: evaluate; listing: runs; printing; jobs; generate, review, note, judge_check, ab, compare, charts,
collect, serve, config_cmd). What a command does is a service use case, the one a page calls for the same thing.

The top of the stack: it imports the service (and model, errors), few library modules beside; nothing imports
it. tests/test_structure.py caps how many library modules it may import.
"""
from .command import main

__all__ = ["main"]
