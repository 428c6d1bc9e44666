"""The `abgrade` command (also `python -m grader`). Each sub-command lives in
`grader/commands/`. Exit codes: 0 when every visible test passes, 1 when one fails,
2 on a usage or spec error, 3 when the machine could not start a student process (after
retries; not the submission's fault).

This module imports almost nothing at its top: `main` first gives a plain `grade` of a
`.py` its student's worker (commands/grade_early.py), then imports argparse and the
commands, so that the worker's start-up overlaps them."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (on the way to the first spawn)

if TYPE_CHECKING:
    import argparse

# what a shell reports for a writer killed by SIGPIPE (`yes | head`): the reader left early
EXIT_CLOSED_PIPE = 128 + 13


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command and its options, with examples in each `--help`; only the command
    `only` when the command line names one (importing every command costs a grade's start)."""
    import argparse

    from .commands import register_all
    from .commands.examples import add_examples

    parser = argparse.ArgumentParser(prog="abgrade", description="Grade alpha-beta pruning labs exactly.")
    parser.add_argument(
        "--version", action=_show_version(), dest=argparse.SUPPRESS, nargs=0, help="show abgrade's version and exit"
    )
    register_all(parser.add_subparsers(metavar="COMMAND"), only=only)
    add_examples(parser)
    return parser


def _show_version() -> type[argparse.Action]:
    """`--version`'s action: the version is looked up only when asked for (not on every
    start); a class made here, as argparse is imported only once a parser is built."""
    import argparse

    class ShowVersion(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
            from .version import abgrade_version

            parser._print_message(f"abgrade {abgrade_version()}\n", sys.stdout)
            parser.exit()

    return ShowVersion


def main(argv: list[str] | None = None) -> int:
    """The command line's entry point: a running `abgrade serve` of this installation
    runs the command when it can (grader/serve/client.py, with almost nothing imported:
    no server, or any doubt, and it runs here as before); `run` otherwise. Only a real
    command line (`argv` None) is handed over; `ABGRADE_SERVER=0` never is."""
    if argv is None:
        from .serve.client import served

        code = served(sys.argv)
        if code is not None:
            return code
    return run(argv)


def run(argv: list[str] | None = None) -> int:
    """Run one command here; a reader that closes our output early (`abgrade ... | head`)
    ends it quietly, without a traceback, whatever the command was doing. A plain grade of
    a `.py` spawns its student's worker before anything else is imported (grade_early.py);
    one that no grade took is closed here, however the command ends. (A server's child
    calls this for the client's command: grader/serve/handover.py.)"""
    from .commands import grade_early

    try:
        grade_early.start(sys.argv[1:] if argv is None else list(argv))
        code = _run(argv)
        sys.stdout.flush()  # a pipe closed early shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_closed_streams()
        return EXIT_CLOSED_PIPE
    finally:
        grade_early.discard()


def _run(argv: list[str] | None) -> int:
    from .commands.common import EXIT_MACHINE, EXIT_USAGE, MACHINE_ERRORS, UsageError
    from .spec import SpecError
    from .text import clean_line

    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(only=words[0] if words else None)
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
    except BrokenPipeError:
        raise  # main's: the reader left, nothing to report
    except Exception as exc:
        if type(exc).__name__ not in MACHINE_ERRORS:
            raise
        print(
            f"abgrade: this machine could not start the student's process (not the submission's fault; "
            f"try again, or see README, Security): {clean_line(' '.join(str(exc).split()), 500)}",
            file=sys.stderr,
        )
        return EXIT_MACHINE


def _silence_closed_streams() -> None:
    """Point stdout and stderr at /dev/null, so that the interpreter's last flush of what is
    still buffered for the closed pipe can't print "Exception ignored ... BrokenPipeError"."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):  # replaced or closed already (tests capture them)
            pass
    os.close(devnull)
