"""The judges of a lab folder: pure functions `judge_*(observed, case) -> Judgement` from the
plain observation dicts of one request (one per call) to verdicts per check kind. What the
references did is in the case (computed in the grader by runs.py, under the same watch as
the student's search); nothing here runs student code.

`value`: the search's value equals an accepted reference's; `nodes`: as many states read;
`pruned`: the same states read in the same order (with the game's tree, also which subtrees
the reference prunes); `bounds`: the bound specification on narrowed windows; `choice`: a
move after which the value is the best; `random`: a hidden case, on value and reads (and
choice) at once. With several accepted references (the spec's `variants`), a call is
judged against the first one whose reads it repeats, else whose value it returns."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...checks import Verdict
from ...checks.bounds import BoundProbe, check_bounds
from ...checks.expansions import check_count, check_expansions
from ...checks.show import describe_error, is_number, show
from ...checks.value import check_value
from ..kit import Judgement
from ..kit.messages import roll_up
from ..kit.observations import CallObservation, answer_at
from .files import LabError
from .replays import consistent_choice, consistent_search, intersect, labels
from .runs import Call

Replays = Callable[[], Mapping[str, Mapping]]


class StatesCall(CallObservation, total=False):
    """What the observer sends for one call (observer.py, watch.py): the labels of the
    states read, in order, the calls per watched name, and whether reads were left out."""

    reads: list[str]
    counts: dict[str, int]
    truncated: bool


@dataclass(frozen=True)
class SearchCase:
    """A search call judged on value, reads (nodes) and their order (pruned)."""

    call: Call
    kinds: tuple[str, ...]
    expected: Callable[[], Sequence[Mapping]]  # each accepted reference's observation, reference.py first
    replays: Replays  # bug name -> its replay's observation of the same call
    watched: tuple[str, ...]  # what the search reads through (for messages)
    repeats: bool  # every read counts (else distinct states)
    tree: Callable[[], Mapping[str, list[str]] | None]  # the game tree below the state, as labels
    root: str  # the searched state's label


@dataclass(frozen=True)
class BoundsCase:
    """Calls with narrowed windows, each with what the bound specification demands."""

    calls: tuple[Call, ...]
    probes: tuple[BoundProbe, ...]
    replays: Callable[[int], Mapping[str, Mapping]]  # call index -> bug replays of it


@dataclass(frozen=True)
class ChoiceCase:
    """A move chosen at a state: right when the value after it is the best value."""

    call: Call
    best: Callable[[], tuple[Any, Any]]  # (the reference's move, the value after it)
    value_after: Callable[[Any], Any]  # a move -> the value after it; None: no move here
    replays: Replays


@dataclass(frozen=True)
class RandomCase:
    search: SearchCase
    choice: ChoiceCase | None
    about: str  # the generated case, for the message


def reference_failed(exc: LabError) -> str:
    """What a test says when the lab's own code failed on its case: the instructor's error,
    said without the lab folder's path (students may read it)."""
    return f"not judged: the lab's reference failed on this case ({exc.field}: {exc.problem}); tell your instructor."


def guarded(
    observed: list[StatesCall], judge: Callable[[list[StatesCall]], Judgement], kinds: tuple[str, ...]
) -> Judgement:
    """`judge(observed)`, or every kind failed with what went wrong when the lab's own code
    (a hook, a reference on the position after a student's move) failed while judging."""
    try:
        return judge(observed)
    except LabError as exc:
        return Judgement({kind: Verdict.fail(reference_failed(exc)) for kind in kinds})


def reads_noun(case: SearchCase) -> str:
    what = "states read" if case.repeats else "distinct states read"
    return f"{what} (through {', '.join(case.watched)})"


def no_reads_hint(case: SearchCase) -> str:
    return (
        f"Your search read no state through {', '.join(case.watched)}: it must use the game's own "
        f"{', '.join(case.watched)} at each step, not a copy."
    )


def unwatched_hint(case: SearchCase, call: Mapping, reference: Mapping) -> str:
    """A watched function the reference calls and the search never did: why its reads can't
    match (a search that makes its states some other way reads them unseen). The names are
    the lab's own; the search's counts only decide whether one was called."""
    theirs, ours = call.get("counts"), reference.get("counts")
    theirs = theirs if isinstance(theirs, Mapping) else {}
    ours = ours if isinstance(ours, Mapping) else {}
    unused = [name for name in case.watched if _calls(ours.get(name)) and not _calls(theirs.get(name))]
    if not unused:
        return ""
    never = " or ".join(f"{name}(...)" for name in unused)
    return (
        f"Your search never called {never} (the reference does, {sum(_calls(ours.get(n)) for n in unused)} "
        f"times here): this lab counts the states a search reads only through {', '.join(case.watched)}, "
        "so states your search makes another way (with the game's other functions or your own code) go unseen."
    )


def _calls(count: object) -> int:
    return count if type(count) is int and count > 0 else 0


def pick(expected: Sequence[Mapping], reads: list[str], returned: Any) -> Mapping:
    """The accepted reference this call is judged against: the first that read what it
    read, else the first that returned its value, else reference.py."""
    for observation in expected:
        if labels(observation) == reads:
            return observation
    for observation in expected:
        if is_number(returned) and observation.get("returned") == returned:
            return observation
    return expected[0]


def judge_search(observed: list[StatesCall], case: SearchCase) -> Judgement:
    """One search call: value, number of reads and their order, with a picture."""
    call, text = answer_at(observed), case.call.shown()
    if call.get("error"):
        failed = Verdict.fail(f"{text} raised {describe_error(call.get('error') or {})}")
        return Judgement({kind: failed for kind in case.kinds})
    reads, returned = labels(call), call.get("returned")
    reference = pick(case.expected(), reads, returned)
    expected = labels(reference)
    bugs = functools.cache(lambda: consistent_search(case.replays(), reads, returned))
    verdicts: dict[str, Verdict] = {}
    if "value" in case.kinds:
        value = check_value(returned, reference["returned"], text)
        verdicts["value"] = value if value.passed else Verdict.fail(value.message, tuple(sorted(bugs())))
    unseen = unwatched_hint(case, call, reference) if reads and reads != expected else ""
    if "nodes" in case.kinds:
        verdicts["nodes"] = check_count(
            len(reads), len(expected), reads_noun(case), unseen if reads else no_reads_hint(case)
        )
    if "pruned" in case.kinds:
        verdicts["pruned"] = judge_reads(case, reads, expected, bugs)
        if unseen and not verdicts["pruned"].passed:
            verdicts["pruned"] = replace(verdicts["pruned"], hint=unseen)
    if call.get("truncated") or reference.get("truncated"):
        note = "\n(Only the first reads were kept: this search reads more states than the grader records.)"
        verdicts = {k: Verdict(v.passed, v.message + note, v.diagnoses) for k, v in verdicts.items()}
    picture = search_details(case, reads, expected, returned, reference)
    return Judgement({kind: verdict.with_details(picture) for kind, verdict in verdicts.items()}, bugs)


def judge_reads(case: SearchCase, reads: list[str], expected: list[str], bugs: Callable[[], frozenset[str]]) -> Verdict:
    if reads == expected:
        return check_expansions(reads, expected, noun="states")
    summary = pruned_summary(case.tree(), case.root, set(expected))
    if not reads:
        summary = f"{no_reads_hint(case)}\n{summary}".strip()
    return check_expansions(reads, expected, diagnoses=sorted(bugs()), extra=summary, noun="states")


def pruned_summary(tree: Mapping[str, list[str]] | None, root: str, read: set[str]) -> str:
    """With the game's tree: the roots of the subtrees the reference prunes, and every
    state it prunes (as the tree lab says it)."""
    if tree is None or root not in read:
        return ""
    order, parent = preorder(tree, root)
    pruned = [state for state in order if state not in read]
    roots = [state for state in pruned if parent.get(state) in read]
    return (
        "The reference prunes "
        + (", ".join(f"Pruning Node -> {state}" for state in roots) or "nothing")
        + (f"; pruned set: {{{', '.join(pruned)}}}." if pruned else ".")
    )


def preorder(tree: Mapping[str, list[str]], root: str) -> tuple[list[str], dict[str, str | None]]:
    """The states below `root` in preorder (children in listed order), and their parents;
    a state met twice (the game is no tree there) is taken once."""
    order: list[str] = []
    parent: dict[str, str | None] = {root: None}
    stack = [root]
    while stack:
        state = stack.pop()
        order.append(state)
        children = [child for child in tree.get(state, []) if child not in parent]
        for child in children:
            parent[child] = state
        stack.extend(reversed(children))
    return order, parent


def search_details(case: SearchCase, reads: list[str], expected: list[str], returned: Any, reference: Mapping) -> dict:
    """What a report needs to draw this search: the game's tree when it has one, else the
    reference's own recursive calls (with its alpha and beta on entering each), both reads."""
    trace = reference.get("trace")
    return {
        "view": "lab-tree",
        "root": case.root,
        "tree": case.tree() if "pruned" in case.kinds and reads != expected else None,
        "trace": trace if isinstance(trace, list) else [],
        "seen": reads,
        "expected": expected,
        "returned": returned,
        "value": reference.get("returned"),
    }


def judge_bounds(observed: list[StatesCall], case: BoundsCase) -> Judgement:
    """Every narrowed-window call against the bound specification; bugs by reads alone (on a
    narrowed window an accepted fail-hard search returns other values than a fail-soft
    replay, but it reads the same states)."""
    results: list[tuple] = []
    for probe, call in zip(case.probes, observed):
        error = f"raised {describe_error(call.get('error') or {})}" if call.get("error") else None
        results.append((probe, call.get("returned"), error))
    if len(observed) < len(case.probes):
        results.append((case.probes[len(observed)], None, "got no answer: the calls stopped early"))

    def bugs() -> frozenset[str] | None:
        found: frozenset[str] | None = None
        for index, call in enumerate(observed[: len(case.calls)]):
            if call.get("error"):
                continue
            replays = case.replays(index)
            found = intersect(found, consistent_search(replays, labels(call), call.get("returned"), by_value=False))
            if not found:
                break
        return found

    return Judgement({"bounds": check_bounds(results)}, bugs)


def unplain(value: Any) -> Any:
    """A returned value in the observer's encoding as plain JSON (tuples as lists); an
    object that crossed only as its repr stays a record no game takes for a move."""
    if isinstance(value, dict) and isinstance(value.get("items"), list):
        return [unplain(item) for item in value["items"]]
    return value


def judge_choice(observed: list[StatesCall], case: ChoiceCase) -> Judgement:
    call, text = answer_at(observed), case.call.shown()
    if call.get("error"):
        return Judgement({"choice": Verdict.fail(f"{text} raised {describe_error(call.get('error') or {})}")})
    returned = call.get("returned")
    move = unplain(returned)
    best_move, best = case.best()
    value = case.value_after(move)
    bugs = functools.cache(lambda: consistent_choice(case.replays(), returned))
    if value is None:
        verdict = Verdict.fail(
            f"{text} returned {show(returned)}, which is no move here; e.g. {show(best_move)} is best."
        )
    elif value == best:
        verdict = Verdict.ok(f"{text} returned {show(returned)}, a best move (the value after it is {show(best)}).")
    else:
        verdict = Verdict.fail(
            f"{text} returned {show(returned)}, after which the value is {show(value)}; the best is "
            f"{show(best)} (e.g. after {show(best_move)}).",
            tuple(sorted(bugs() or ())),
        )
    return Judgement({"choice": verdict}, bugs)


def judge_random(observed: list[StatesCall], case: RandomCase) -> Judgement:
    """A hidden case: the search's value and reads (and the choice) as one `random` test."""
    try:
        judgement = judge_search(observed[:1], case.search)
        verdicts = dict(judgement.verdicts)
        found = [judgement.consistent_bugs]
        if case.choice is not None:
            choice = judge_choice(observed[1:2], case.choice)
            verdicts.update(choice.verdicts)
            found.append(choice.consistent_bugs)
    except LabError as exc:
        return Judgement({"random": Verdict.fail(reference_failed(exc))})
    details = next(iter(verdicts.values())).details
    ok = f"{' and '.join(verdicts)} match the reference on {case.search.call.shown()}."
    verdict = roll_up(verdicts, ok, dedupe=False, suffix=f"\nThe case: {case.about}", details=details)

    def bugs() -> frozenset[str] | None:
        return intersect(*(f() if callable(f) else f for f in found))

    return Judgement({"random": verdict}, bugs)
