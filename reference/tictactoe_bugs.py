"""Classic student mistakes in the `tictactoe` lab, as searches the grader can replay.

Each bug is the lab's exact search (`tictactoe_search._lab_search`, the skeleton line by
line: DESIGN.md, "Skeleton semantics") with one thing done wrong, described by `Rules`.
`replay` runs `minimax`, `maximize` or `minimize` written with those rules and gives what
the student's search would return (choice, utility, nodes_visited) and which boards it
would call `get_childs` on, in order; `bug_game_over` is the bug's `game_over`. With the
default `Rules()` the replay *is* the lab's search (tests/test_reference_tictactoe_bugs.py
checks it against `lab_minimax`, `lab_maximize` and `lab_minimize`).

The replay works on plain tuples, not numpy arrays: a search without pruning from the
empty board is 549,946 nodes, and the grader only needs the notations. Given the boards a
student's search expanded (`watch`), it stops at the first board where the two part,
so ruling a bug out costs about as much as the shared beginning.

Some mistakes come in forms that differ on one side only (a strict `>` in maximize but a
correct `<=` in minimize); a bug lists each form as a variant, and a student's calls are
the bug's when one variant reproduces all of them. `BUG_HINTS` holds the one-line hint of
each bug.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from reference.tictactoe_search import INF

Board = tuple[int, ...]  # 9 cells, row-major: 1 'o', -1 'x', 0 empty
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
BOTH = frozenset({"max", "min"})
NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Rules:
    """How a search differs from the lab's (the defaults are the lab's own search)."""

    strict_cutoff: frozenset[str] = NONE  # sides ("max", "min") cutting off only on > beta / < alpha
    prune: bool = True  # False: the loop never breaks
    ties_replace: frozenset[str] = NONE  # sides where an equal utility replaces the choice
    root_window: tuple[int, int] = (-INF, INF)  # the alpha and beta minimax starts with
    count_leaves: bool = False  # nodes_visited + 1 at finished boards, not per child
    increment_depth: bool = True  # `depth += 1` before the children
    detect_draw: bool = True  # game_over finishes a full board without a winner
    # the textbook's fail-hard form (an accepted variant, `tictactoe_search._lab_search`):
    # a cut answers the bound it cut on, and a node answers no less than alpha (MIN: no more
    # than beta). Under `>=` it expands what the fail-soft search does; under a strict
    # cut-off it expands more (the bound a child answers is not past the parent's bound),
    # so a strict course's bugs are replayed in both forms (`bugs_for`)
    fail_hard: bool = False


LAB_RULES = Rules()


@dataclass(frozen=True)
class Bug:
    name: str
    hint: str  # one line, addressed to the student
    variants: tuple[Rules, ...]


BUGS: tuple[Bug, ...] = (
    Bug(
        "strict_cutoff",
        "You cut off only when maxUtility > beta (minUtility < alpha); cut as soon as maxUtility >= beta "
        "(minUtility <= alpha).",
        (Rules(strict_cutoff=frozenset({"max"})), Rules(strict_cutoff=frozenset({"min"})), Rules(strict_cutoff=BOTH)),
    ),
    Bug(
        "no_pruning",
        "Your search never cuts off: break out of the loop as soon as maxUtility >= beta (minUtility <= alpha).",
        (Rules(prune=False),),
    ),
    Bug(
        "tie_last",
        "Change choice only on a strict improvement (utility > maxUtility): a tie may be only a bound.",
        (Rules(ties_replace=frozenset({"max"})), Rules(ties_replace=frozenset({"min"})), Rules(ties_replace=BOTH)),
    ),
    Bug(
        "alpha_beta_zero",
        "minimax must start with the widest window: alpha = -infinite_number and beta = infinite_number, not 0.",
        (Rules(root_window=(0, 0)),),
    ),
    Bug(
        "counts_leaves",
        "Count every child searched (nodes_visited + 1 before each recursive call), not only finished boards.",
        (Rules(count_leaves=True),),
    ),
    Bug(
        "depth_not_incremented",
        "Add 1 to depth before searching the children (depth += 1): a quicker win must score more.",
        (Rules(increment_depth=False),),
    ),
    Bug(
        "draw_not_detected",
        "game_over must also finish a full board without three in a row (a draw), not only a win.",
        (Rules(detect_draw=False),),
    ),
)
BUG_HINTS: dict[str, str] = {bug.name: bug.hint for bug in BUGS}

# A course that cuts off only when maxUtility > beta (minUtility < alpha), a spec's
# `conventions: {cutoff: strict}`: its search is Rules(strict_cutoff=BOTH), and its cut-off
# bug is the mirror of `strict_cutoff`, a cut-off on equality on one side or both.
STRICT_RULES = Rules(strict_cutoff=BOTH)
INCLUSIVE_CUTOFF = Bug(
    "inclusive_cutoff",
    "You cut off as soon as maxUtility >= beta (minUtility <= alpha); this course only when "
    "maxUtility > beta (minUtility < alpha).",
    (Rules(strict_cutoff=frozenset({"min"})), Rules(strict_cutoff=frozenset({"max"})), Rules()),
)
MIRRORED_HINTS: dict[str, str] = {INCLUSIVE_CUTOFF.name: INCLUSIVE_CUTOFF.hint}


def hints_for(strict: bool = False) -> dict[str, str]:
    """Every bug's hint in the words of a course that cuts off on equality or (`strict`)
    only past the bound."""
    if not strict:
        return dict(BUG_HINTS)
    return {
        bug.name: bug.hint
        if bug.name == INCLUSIVE_CUTOFF.name
        else bug.hint.replace("maxUtility >= beta (minUtility <= alpha)", "maxUtility > beta (minUtility < alpha)")
        for bug in bugs_for(strict)
    }


def bugs_for(strict: bool = False) -> tuple[Bug, ...]:
    """The classic bugs of a course that cuts off on equality (the default) or only past the
    bound (`strict`): every other bug made on that course's search, the cut-off bug mirrored."""
    if not strict:
        return BUGS
    return tuple(
        _with_fail_hard(
            INCLUSIVE_CUTOFF
            if bug.name == "strict_cutoff"
            else Bug(bug.name, bug.hint, tuple(replace(rules, strict_cutoff=BOTH) for rules in bug.variants))
        )
        for bug in BUGS
    )


def _with_fail_hard(bug: Bug) -> Bug:
    """`bug` written fail-soft or fail-hard: a strict course's fail-hard search expands other
    boards than its fail-soft search (Rules.fail_hard), so each form is a variant."""
    return replace(bug, variants=(*bug.variants, *(replace(rules, fail_hard=True) for rules in bug.variants)))


@dataclass
class Replay:
    """What a call returns (choice as notation) and the boards it expands, in order."""

    choice: str | None
    points: int
    nodes_visited: int
    expanded: list[str] = field(default_factory=list)


class Parted(Exception):
    """The replay expanded a board the watched search did not (or more boards)."""


@dataclass(frozen=True)
class Watch:
    """The boards a student's search expanded: the first `len(seen)` of `total`."""

    seen: Sequence[str]
    total: int


def parse(notation: str) -> Board:
    marks = {"o": 1, "x": -1, ".": 0}
    return tuple(marks[c] for c in notation.replace("/", ""))


def notation(board: Board) -> str:
    cells = "".join(".ox"[v] for v in board)  # index -1 is 'x'
    return f"{cells[0:3]}/{cells[3:6]}/{cells[6:9]}"


def status_of(board: Board) -> int:
    """game_status: 1 if 'o' has three in a row, -1 if 'x' has ('o' checked first), else 0."""
    sums = [board[a] + board[b] + board[c] for a, b, c in LINES]
    return 1 if 3 in sums else -1 if -3 in sums else 0


def _game_over(board: Board, rules: Rules) -> tuple[bool, int]:
    status = status_of(board)
    return status != 0 or (rules.detect_draw and 0 not in board), status


def bug_game_over(rules: Rules, notation_: str) -> tuple[bool, int]:
    """What `game_over` written with `rules` returns on a board in notation."""
    return _game_over(parse(notation_), rules)


def _score(board: Board, player: int, depth: int) -> int:
    status = status_of(board)
    if status == 0:
        return 0
    return 10 - depth if status == player else depth - 10


def _children(board: Board, turn: int) -> list[Board]:
    return [board[:i] + (turn,) + board[i + 1 :] for i in range(9) if board[i] == 0]


def replay(rules: Rules, function: str, board: str, args: Sequence[int], watch: Watch | None = None) -> Replay:
    """`function(board, *args)` (`minimax(matrix, player)`, or maximize / minimize with
    `(active_turn, player, depth, alpha, beta, nodes_visited)`) written with `rules`.
    With `watch`, raises Parted as soon as the replay expands a board the watched search
    did not, or more boards than it did."""
    expanded: list[str] = []
    seen, total = (watch.seen, watch.total) if watch else ((), -1)
    strict_max, strict_min = "max" in rules.strict_cutoff, "min" in rules.strict_cutoff
    ties_max, ties_min = "max" in rules.ties_replace, "min" in rules.ties_replace

    def search(
        node: Board, active_turn: int, player: int, depth: int, alpha: int, beta: int, nodes: int, maximizing: bool
    ) -> tuple[Board | None, int, int]:
        finished, _ = _game_over(node, rules)
        if finished:
            return None, _score(node, player, depth), nodes + 1 if rules.count_leaves else nodes
        entry_alpha, entry_beta = alpha, beta
        if rules.increment_depth:
            depth += 1
        best = -INF if maximizing else INF
        choice = None
        label = notation(node)
        if watch is not None:
            index = len(expanded)
            if index >= total or (index < len(seen) and seen[index] != label):
                raise Parted
        expanded.append(label)
        for child in _children(node, active_turn):
            if not rules.count_leaves:
                nodes += 1
            _, utility, nodes = search(child, -active_turn, player, depth, alpha, beta, nodes, not maximizing)
            if maximizing:
                if utility > best or (ties_max and utility == best):
                    choice, best = child, utility
                if rules.prune and (best > beta if strict_max else best >= beta):
                    return choice, beta if rules.fail_hard else best, nodes
                if best > alpha:
                    alpha = best
            else:
                if utility < best or (ties_min and utility == best):
                    choice, best = child, utility
                if rules.prune and (best < alpha if strict_min else best <= alpha):
                    return choice, alpha if rules.fail_hard else best, nodes
                if best < beta:
                    beta = best
        if rules.fail_hard:
            best = max(best, entry_alpha) if maximizing else min(best, entry_beta)
        return choice, best, nodes

    start = parse(board)
    if function == "minimax":
        (player,) = args
        alpha, beta = rules.root_window
        call = (start, player, player, 0, alpha, beta, 0, True)
    elif function in ("maximize", "minimize"):
        active_turn, player, depth, alpha, beta, nodes = args
        call = (start, active_turn, player, depth, alpha, beta, nodes, function == "maximize")
    else:
        raise ValueError(f"no search named {function!r}")
    choice, points, nodes = search(*call)
    if watch is not None and len(expanded) != total:
        raise Parted
    return Replay(None if choice is None else notation(choice), points, nodes, expanded)


def watched_replay(rules: Rules, function: str, board: str, args: Sequence[int], watch: Watch) -> Replay | None:
    """`replay` of a call whose student search expanded `watch`: None when they part."""
    try:
        return replay(rules, function, board, args, watch)
    except Parted:
        return None
