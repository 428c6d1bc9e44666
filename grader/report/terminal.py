"""The summary a student reads in the terminal: score per check kind, then the failures.

By default it fits in MAX_LINES lines whatever the submission (an unfilled skeleton fails
hundreds of ways): the first failure of each check kind in full (as much of it as fits,
never less than its first line and its likely cause), then one line per other failure;
tests that never ran because the submission did not load are one line in all. `verbose`
shows every failure in full.

Student-side text arrives sanitised (grader/text.py); it is passed through
`visible_controls` again here so that the only escape sequences written are the grader's
own colours.
"""

from __future__ import annotations

import textwrap

from ..counterexample import Counterexample
from ..counterexample import shown as shown_examples
from ..results import GradeReport, TestResult
from ..text import visible_controls

MAX_LINES = 40
LOAD_NOTES_SHOWN = 5
ONE_LINE_CHARS = 110
VERBOSE_HINT = "--verbose shows everything"
MIN_BLOCK = 6  # a blank line, the title and 4 lines of output: less than that is a one-liner


def summary(report: GradeReport, show_hidden: bool = False, color: bool = False, verbose: bool = False) -> str:
    """The whole summary; the score line is always the last line."""

    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if color else text

    safe = visible_controls
    head = [f"abgrade · lab {safe(report.lab)} · {safe(report.submission)}"]
    for kind, (got, most) in report.subtotals().items():
        mark = paint("ok", "32") if got == most else paint("FAIL", "31")
        head.append(f"  {safe(kind):<10}{got:>6g} / {most:<6g}{mark}")

    failed = [t for t in report.tests if not t.passed and not t.not_run]
    shown = [t for t in failed if show_hidden or t.visibility == "visible"]
    hidden = [t for t in failed if not (show_hidden or t.visibility == "visible")]
    load_shown = any(t.kind == "load" for t in shown)

    tail: list[str] = []
    if report.load_notes and not load_shown:  # a failed load's output already lists them
        notes = report.load_notes if verbose else report.load_notes[:LOAD_NOTES_SHOWN]
        tail += ["", "While loading the submission:"] + [f"  - {safe(n)}" for n in notes]
        if len(notes) < len(report.load_notes):
            tail.append(f"  … {len(report.load_notes) - len(notes)} more ({VERBOSE_HINT})")
    if report.not_run:
        tail += ["", f"{len(report.not_run)} tests not run: the submission did not load."]
    if hidden:
        tail += ["", f"{len(hidden)} hidden test(s) failed; their details are shown after grades are published."]
    tail += _examples(shown_examples(report.tests, show_hidden), paint, verbose)
    tail += [f"note: {safe(note)}" for note in report.notes]
    tail.append("")
    total = f"Score: {report.score:g} / {report.max_score:g}"
    tail.append(paint(total, "1;32" if report.score == report.max_score else "1"))

    if verbose:
        body = [line for test in shown for line in _block(test, paint)]
    else:
        body = _short_body(shown, paint, MAX_LINES - len(head) - len(tail))
    return "\n".join(head + body + tail)


def _examples(examples: list[Counterexample], paint, verbose: bool) -> list[str]:
    """The smallest failing cases: `verbose`, each in full; else the first one's headline,
    where the searches part (its output's first line) and its likely cause, and how many
    more there are."""
    lines: list[str] = []
    for number, example in enumerate(examples):
        if number and not verbose:
            more = len(examples) - 1
            lines.append(f"… and {more} more smallest failing case{'s' if more > 1 else ''} ({VERBOSE_HINT})")
            break
        lines += ["", paint(visible_controls(example.headline), "1")]
        output = textwrap.indent(visible_controls(example.output), "    ").splitlines()
        if not verbose:
            cause = len(example.cause.splitlines()) if example.cause else 0
            kept = output[: 1 + min(cause, 1)]
            rest = len(output) - len(kept)
            output = kept + ([f"    … the case in full: {VERBOSE_HINT}, or the HTML report"] if rest else [])
        lines += output
    return lines


def _title(test: TestResult, paint) -> str:
    return paint(f"✗ {visible_controls(test.name)}", "1;31") + f"  (0/{test.max_score:g})"


def _block(test: TestResult, paint, cap: int | None = None) -> list[str]:
    """A failure in full: a blank line, its title and its output, cut to `cap` lines (never
    above its likely cause)."""
    output = textwrap.indent(visible_controls(test.output), "    ").splitlines() or [""]
    lines = ["", _title(test, paint), *output]
    if cap is not None and len(lines) > cap:
        kept = lines[: max(cap, _lead(test) + 1) - 1]
        lines = kept + [f"    … {len(lines) - len(kept)} more lines ({VERBOSE_HINT})"]
    return lines


def _lead(test: TestResult) -> int:
    """Lines a cut block keeps whatever its share: the blank line, the title, the output's
    first line and the likely cause under it (checks/cause.py); 0 without a cause."""
    return 3 + len(test.cause.splitlines()) if test.cause else 0


def _least(test: TestResult, size: int) -> int:
    """The fewest lines a block of `size` lines is cut to."""
    return min(size, max(MIN_BLOCK, _lead(test) + 1))


def _one_line(test: TestResult, paint) -> str:
    first = next((line.strip() for line in visible_controls(test.output).splitlines() if line.strip()), "")
    return f"{_title(test, paint)}: {_cut(first)}" if first else _title(test, paint)


def _cut(text: str) -> str:
    return text if len(text) <= ONE_LINE_CHARS else text[: ONE_LINE_CHARS - 1] + "…"


def _lines_of(test: TestResult, paint, with_cause: bool) -> list[str]:
    """A failure on one line, and (`with_cause`) its likely cause's first line under it."""
    cause = visible_controls(test.cause).splitlines()[:1] if with_cause else []
    return [_one_line(test, paint), *(f"    {_cut(line.strip())}" for line in cause)]


def _short_body(shown: list[TestResult], paint, budget: int) -> list[str]:
    """The first failure of each kind as fully as `budget` allows (else on one line with its
    likely cause under it), then one line each for the others."""
    firsts: dict[str, TestResult] = {}
    for test in shown:
        firsts.setdefault(test.kind, test)
    full = list(firsts.values())
    demoted: list[TestResult] = []  # first failures with no room for a block
    others = [t for t in shown if firsts.get(t.kind) is not t]

    def demoted_lines() -> list[list[str]]:
        """Each demoted first failure on its line, with its cause unless a block above or an
        earlier line already says the same."""
        said = {t.cause for t in full}
        groups = []
        for test in demoted:
            groups.append(_lines_of(test, paint, test.cause not in said))
            said.add(test.cause)
        return groups

    def for_lists() -> int:
        """Room for the one-line lists: at most a third of the room (or what they need), more
        only when the demoted first failures need it, each with its cause."""
        needed = sum(len(lines) for lines in demoted_lines())
        if not others and not demoted:
            return 0
        with_more = needed + (1 if others else 0)  # "… and N more failing tests"
        return min(budget, 1 + max(with_more, min(needed + len(others) + 1, budget // 3)))

    # full blocks get the rest, in the order of the check kinds, each at least MIN_BLOCK
    # lines and its likely cause (or all of it when shorter)
    sizes = [len(_block(t, paint)) for t in full]
    least = [_least(t, size) for t, size in zip(full, sizes)]
    while full and sum(least) > budget - for_lists():
        sizes.pop()
        least.pop()
        demoted.insert(0, full.pop())  # no room for it in full: its line comes first, so every kind shows
    caps = _share(sizes, least, budget - for_lists())
    body = [line for test, cap in zip(full, caps) for line in _block(test, paint, cap)]
    listed = demoted_lines() + [_lines_of(t, paint, False) for t in others]
    room = budget - len(body)
    if listed and room >= 2:
        body.append("")
        kept: list[list[str]] = []
        for number, lines in enumerate(listed):
            last = number == len(listed) - 1
            if sum(map(len, kept)) + len(lines) > room - (1 if last else 2):
                break
            kept.append(lines)
        body += [line for lines in kept for line in lines]
        if len(kept) < len(listed):
            body.append(f"… and {len(listed) - len(kept)} more failing tests ({VERBOSE_HINT})")
    elif listed:
        body.append(f"… and {len(listed)} more failing tests ({VERBOSE_HINT})")
    return body


def _share(sizes: list[int], least: list[int], budget: int) -> list[int]:
    """Lines for each block: small blocks keep all of theirs, the rest share what is left
    evenly (never fewer than the block's `least`)."""
    caps = [0] * len(sizes)
    left = budget
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for done, i in enumerate(order):
        caps[i] = max(least[i], min(sizes[i], left // (len(sizes) - done)))
        left -= caps[i]
    return caps
