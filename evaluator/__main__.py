"""`python -m evaluator ...` is the `ragmeter` command."""
import sys

from .cli.command import main

sys.exit(main())
