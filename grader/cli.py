"""The `abgrade` command (also `python -m grader`). Each sub-command lives in
`grader/commands/`. Exit codes: 0 when every visible test passes, 1 when one fails,
2 on a usage or spec error, 3 when the machine could not start a student process (after
retries; not the submission's fault)."""

from __future__ import annotations

import argparse
import sys

from .commands import register_all
from .commands.common import EXIT_MACHINE, EXIT_OK, EXIT_USAGE, MACHINE_ERRORS, UsageError
from .spec import SpecError
from .text import clean_line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="abgrade", description="Grade alpha-beta pruning labs exactly.")
    words = sys.argv[1:] if argv is None else argv
    register_all(parser.add_subparsers(metavar="COMMAND"), only=words[0] if words else None)
    args = parser.parse_args(argv)
    args.argv = tuple(sys.argv[1:] if argv is None else argv)  # as typed, for advice that repeats it
    if not getattr(args, "run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.run(args)
    except (SpecError, UsageError) as exc:
        print(f"abgrade: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("abgrade: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if type(exc).__name__ not in MACHINE_ERRORS:
            raise
        print(
            f"abgrade: this machine could not start the student's process (not the submission's fault; "
            f"try again, or see README, Security): {clean_line(' '.join(str(exc).split()), 500)}",
            file=sys.stderr,
        )
        return EXIT_MACHINE
    except BrokenPipeError:  # `abgrade grade ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return EXIT_OK
