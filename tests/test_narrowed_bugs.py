"""A request of many calls (the tree lab's bounds case) is asked only about the classic
bugs the grading's other requests left (Judgement.narrowed, grading._consistent_bugs):
the answer must be the full one intersected with those, None where the full one is None,
for the reads of the reference and of every classic bug, raised calls, and any set of
names asked about, under both cut-offs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checks import Verdict
from grader.grading import _consistent_bugs
from grader.labs.kit import Judgement
from grader.labs.tree.cases import BoundsCase
from grader.labs.tree.hints import bugs_behind_calls, replayed_bugs
from grader.labs.tree.judges import judge_bounds
from grader.labs.tree.plans import bound_probes
from grader.spec.model import DEFAULT_CONVENTIONS, Conventions
from reference.random_trees import random_tree
from reference.tree_bugs import HARDCODED_ANSWER, buggy_calls
from reference.tree_search import SearchRules, run_search

NAMES = sorted(buggy_calls(">=")) + sorted(set(buggy_calls(">")) - set(buggy_calls(">="))) + [HARDCODED_ANSWER.name]
# what the properties draw: a tree's seed, its cutoff, the classic bug (if any) behind the
# observed calls, and the names a narrowed question asks about
SEEDS = st.integers(0, 10**5)
BUG_OR_NONE = st.sampled_from([None, *sorted(buggy_calls(">="))])
AMONG = st.frozensets(st.sampled_from(NAMES))


def _bounds_case(seed: int, cutoff: str) -> BoundsCase:
    conventions = DEFAULT_CONVENTIONS if cutoff == ">=" else Conventions(cutoff="strict")
    tree = random_tree(seed, depth=(2, 3))
    probes = bound_probes(tree, conventions)
    return BoundsCase(tree, tuple(c for c, _ in probes), tuple(p for _, p in probes), cutoff)  # type: ignore[arg-type]


def _observed(
    case: BoundsCase, bug: str | None, raised: set[int], reversed_reads: set[int] = frozenset()
) -> list[dict]:
    """Every call's observation as a search with `bug` (None: the reference) makes it; the
    calls in `raised` raised, those in `reversed_reads` read the same nodes backwards."""
    seen = []
    for index, call in enumerate(case.calls):
        if index in raised:
            seen.append({"error": {"type": "RecursionError", "message": "deep"}})
            continue
        if bug is None:
            result = run_search(case.tree, *call, SearchRules(cutoff=case.cutoff))
        else:
            result = buggy_calls(case.cutoff)[bug](case.tree, *call)[0]
        reads = list(result.trace.order)
        seen.append({"reads": reads[::-1] if index in reversed_reads else reads, "returned": result.value})
    return seen


@settings(max_examples=40, deadline=None)
@given(
    seed=SEEDS,
    strict=st.booleans(),
    bug=BUG_OR_NONE,
    among=AMONG,
    raised=st.sets(st.integers(0, 200), max_size=6),
    all_raised=st.booleans(),
    reversed_reads=st.sets(st.integers(0, 30), max_size=3),
)
def test_a_narrowed_answer_is_the_full_one_among_the_names_asked(
    seed, strict, bug, among, raised, all_raised, reversed_reads
) -> None:
    case = _bounds_case(seed, ">" if strict else ">=")
    if bug is not None and bug not in buggy_calls(case.cutoff):
        bug = None
    raised = set(range(len(case.calls))) if all_raised else raised
    observed = _observed(case, bug, raised, reversed_reads)
    full = bugs_behind_calls(case.tree, list(case.calls), observed, case.cutoff)
    narrowed = bugs_behind_calls(case.tree, list(case.calls), observed, case.cutoff, among)
    assert narrowed == (None if full is None else full & among)
    judgement = judge_bounds(observed, case)
    assert judgement.bugs_among(among) == narrowed and judgement.bugs() == full


@settings(max_examples=40, deadline=None)
@given(
    seed=SEEDS,
    bug=st.sampled_from(sorted(buggy_calls(">="))),
    others=st.lists(st.one_of(st.none(), AMONG), min_size=1, max_size=4),
    where=st.integers(0, 4),
)
def test_the_pipelines_consistent_bugs_are_the_intersection_of_every_requests(seed, bug, others, where) -> None:
    case = _bounds_case(seed, ">=")
    bounds = judge_bounds(_observed(case, bug, set()), case)
    named = Verdict.fail("wrong", ("no_pruning",))  # some verdict names a bug: the pipeline asks
    judgements = [Judgement({"value": named}, found) for found in others]
    judgements.insert(min(where, len(judgements)), bounds)
    expected = None
    for judgement in judgements:
        found = judgement.bugs()
        if found is not None:
            expected = found if expected is None else expected & found
    assert _consistent_bugs(judgements) == expected


@settings(max_examples=40, deadline=None)
@given(
    seed=SEEDS,
    strict=st.booleans(),
    bug=BUG_OR_NONE,
    among=AMONG,
    by_value=st.booleans(),
)
def test_each_calls_narrowed_replay_is_the_full_one_among_the_names_asked(seed, strict, bug, among, by_value) -> None:
    case = _bounds_case(seed, ">" if strict else ">=")
    if bug is not None and bug not in buggy_calls(case.cutoff):
        bug = None
    for call, seen in zip(case.calls, _observed(case, bug, set())):
        for reads in (seen["reads"], seen["reads"][::-1], seen["reads"][:1], []):
            for returned in (seen["returned"], HARDCODED_ANSWER.value, None):
                full = replayed_bugs(case.tree, call, reads, returned, by_value, case.cutoff)
                narrowed = replayed_bugs(case.tree, call, reads, returned, by_value, case.cutoff, among)
                assert narrowed == full & among, (call, reads, returned)
