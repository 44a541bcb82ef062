"""The `ragmeter` command: parsing (args) and the commands (command, generate, review, compare, ray for
`--engine ray`).

The top of the stack: it may import every other layer; nothing imports it.
"""
from .command import main

__all__ = ["main"]
