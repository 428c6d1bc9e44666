"""The class insights keep who a bug or a failed case names on disk, not in memory (issue
26, goal 3: nothing per student held by a batch process): the lists read back are the
sorted names the in-memory sets gave, and the memory the builder holds does not grow with
the class. Real SQLite (the spool), real pickling; the grades are plain stand-ins of the
fields the builder reads."""

from __future__ import annotations

import gc
import pickle
import random
import tracemalloc
from types import SimpleNamespace

from grader.batch.insights import InsightsBuilder, student_list

# ids as a class download has them, and as hostile file names make them: non-ASCII, case,
# digits, astral characters, a name that is a prefix of another
NAMES = ["anna", "Anna", "ánna", "zoë", "10002", "1000", "李雷", "émile", "o'brien", "x" * 40, "😀smile", "Zed"]


def grade(
    student: str, bugs: tuple[str, ...], failed: tuple[str, ...] = (), passed: tuple[str, ...] = ()
) -> SimpleNamespace:
    tests = [SimpleNamespace(diagnoses=bugs, not_run=False, kind="value", case=case, passed=False) for case in failed]
    tests += [SimpleNamespace(diagnoses=(), not_run=False, kind="value", case=case, passed=True) for case in passed]
    if not tests:
        tests = [SimpleNamespace(diagnoses=bugs, not_run=False, kind="random", case="", passed=not bugs)]
    return SimpleNamespace(student=student, report=SimpleNamespace(tests=tests))


def test_the_lists_read_back_are_the_sorted_names_in_any_order_of_grades():
    shuffled = NAMES[:]
    random.Random(3).shuffle(shuffled)
    builder = InsightsBuilder({"strict_cutoff": "a hint"})
    for number, student in enumerate(shuffled):
        # the same bug named by two tests of one student counts that student once
        builder.add(
            grade(student, ("strict_cutoff", "strict_cutoff"), failed=("example", "other") if number % 2 else ())
        )
    insights = builder.result()
    (bug,) = insights.misconceptions
    assert bug.name == "strict_cutoff" and bug.hint == "a hint"
    assert bug.count == len(NAMES) and bug.students == tuple(sorted(NAMES)) == tuple(bug.students)
    assert bug.students[:3] == tuple(sorted(NAMES))[:3] and bug.students[2] == sorted(NAMES)[2]
    assert bug.students[-2:] == tuple(sorted(NAMES))[-2:]
    failing = sorted(shuffled[1::2])
    assert [(c.case, c.students, c.count, c.graded) for c in insights.cases] == [
        ("example", tuple(failing), len(failing), len(failing)),
        ("other", tuple(failing), len(failing), len(failing)),
    ]
    assert (
        student_list(bug.students, 2, clean=str.upper)
        == f"{sorted(NAMES)[0].upper()}, {sorted(NAMES)[1].upper()} and {len(NAMES) - 2} more"
    )
    assert pickle.loads(pickle.dumps(bug)).students == tuple(sorted(NAMES))


def test_a_builder_holds_the_same_memory_for_a_class_of_any_size():
    """20,000 students, most of them diagnosed with several bugs and failing several fixed
    cases: the builder's memory after them is what it was after the first 2,000 (the sets of
    names it used to keep held about 8 MB at 10,000 such students)."""
    bugs = tuple(f"bug_{n}" for n in range(6))
    cases = tuple(f"case_{n}" for n in range(8))
    builder = InsightsBuilder({})
    gc.collect()
    tracemalloc.start()
    try:
        held = []
        for number in range(20_000):
            builder.add(grade(f"student-{number:06d}-with-a-long-id", bugs[: number % 7], failed=cases[: number % 9]))
            if number + 1 in (2_000, 20_000):
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert held[1] - held[0] < 256 * 1024, held
    insights = builder.result()
    assert sum(m.count for m in insights.misconceptions) == sum(min(n % 7, 6) for n in range(20_000))
    assert insights.misconceptions[0].students[:1] == ("student-000001-with-a-long-id",)
