"""`python -m grader` is the same as `abgrade`."""

import sys

from .cli import main

sys.exit(main())
