"""`python -m evaluator ...` is the `ragmeter` command."""
import sys

from .cli import main

sys.exit(main())
