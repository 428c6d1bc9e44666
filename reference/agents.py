"""The agents lab's reference: the book chapter's alpha-beta agents (seed 003) on the
environments of `reference.envs`, the same agents without pruning and with classic bugs,
the true payoffs the grader judges against, and the bound specification.

The chapter's algorithm, which every search here replays move for move so that its `step`
counts are the ones a correct submission produces:

- `maximized_payoff_ttt(env, reward, done, alpha, beta)` is the payoff, for the player to
  move in `env`, of the position reached by the previous move, which returned `reward` and
  `done`. A finished game is -1 when it was won (the previous player won, so the player to
  move has lost) and 0 when tied. `max_payoff_conn(..., depth, ...)` also returns 0 (a tie)
  at depth 0, after the `done` test.
- One function serves both players (the negamax trick): a move's payoff is minus the
  opponent's payoff after it. `alpha` is the first player's best payoff so far, `beta` the
  second player's; `None` stands for the sentinel -2, below every payoff. The mover's best
  payoff starts at its own bound, is replaced only by a strictly better move, which also
  raises the mover's bound, and the loop over `env.validinputs` (each move on a
  `deepcopy`) stops as soon as `alpha >= -beta`, tested after every move (a course that
  cuts off only when `alpha > -beta`, a spec's `conventions: {cutoff: strict}`, has
  `STRICT_CHAPTER` as its reference and `bugs_for(strict=True)` as its classic bugs).
- `minimax_ttt(env)` / `minimax_conn(env, depth=3)`: the first move in `validinputs` that
  wins at once is taken at once; otherwise every move is searched with fresh bounds
  (-2, -2) (at Connect Four with the same `depth`, so the agent looks `depth + 1` moves
  ahead) and the move is chosen among the wins, else the ties, else the losses. The
  chapter picks at random within that group; here the first (in `validinputs` order)
  unless a `random.Random` is given, and `decide` also returns the groups.

The bound specification in the chapter's convention: for the player to move, the window
is `(lo, hi) = (own bound, -opponent's bound)`, i.e. `(alpha, -beta)` when the first
player moves and `(beta, -alpha)` when the second does (`window`). With `v` the true
payoff, a correct result `r` satisfies Knuth and Moore's conditions: `r == v` when
`lo < v < hi`, `r <= lo` when `v <= lo`, `r >= hi` when `v >= hi` (`bound_requirement`).
The chapter's own code returns exactly `lo` in the second case; an agent whose best payoff
starts below its bound (at -inf, say) may return less, and is just as correct.

True payoffs (`true_payoff`, `action_payoffs`, `optimal_actions`) come from a separate
exhaustive negamax that plays moves on copies without counting them, so asking for them
never changes an environment's step count: exact at tic-tac-toe (memoised over the game's
5,478 positions), depth-limited at Connect Four with the chapter's depth rule.

Figures (pinned in tests/test_reference_agents.py; `bench/bench_agents_reference.py`): the
first move of `minimax_ttt` from the empty board makes 30,709 `step` calls with pruning
and 549,945 without (every position below the start), 94.4% fewer, as the chapter's 94%;
`minimax_conn` from the empty board at depths 0-4: 7, 56, 147, 532, 1,211 steps with
pruning, 7, 56, 399, 2,800, 19,607 without. The chapter's section 1 example (X on 1, 6, 7,
O on 4, 5, 8): `maximized_payoff_ttt` makes 13 steps without pruning, 9 with it (the
chapter's six scenarios and four).

Classic bugs (`BUGS`; `Variant.fails` lists the check kinds each fails, `Variant.hint`
the feedback line). Steps are the first tic-tac-toe move's (reference 30,709):

| bug | what the student wrote | fails |
| --- | --- | --- |
| `no_pruning` | never breaks out of the loop (549,945) | nodes, speedup |
| `bounds_never_updated` | never records alpha/beta (549,945; same reads as no_pruning) | nodes, speedup |
| `strict_cutoff` | `alpha > -beta`, the chapter's prose (308,791) | nodes, speedup |
| `no_sentinel` | bounds start at -1, not -2 (27,565; values right) | nodes, speedup |
| `cutoff_not_negated` | `alpha >= beta` (277,442) | value, bounds, nodes, choice, games, speedup |
| `sign_not_flipped` | `my_payoff = opponent_payoff` (13,656) | value, bounds, nodes, choice, games, speedup |
| `wrong_player_bound` | raises beta when X improves, alpha when O does (195,771) | value, bounds, nodes, choice, games, speedup |
| `immediate_win_not_taken` | the top level searches a winning move like any other | nodes (top level), choice |

"speedup" means the first tic-tac-toe move's count is not the chapter's 30,709 (the check
trusts only a count an accepted search makes: fewer steps, as no_sentinel's and
sign_not_flipped's, fail it too);
"games" that the bug loses tic-tac-toe games to the perfect or the random agent. At
Connect Four depths 0 and 1 most bugs are invisible (nothing to prune, or one move deep).

Decisions where the chapter is silent: the reference is deterministic (first of the best
group) and reports every optimal action, since the chapter's random choice makes any of
them right; when the mover can win at once, only the immediate wins are optimal (a later
win is not what the chapter's agent plays); negative depths and searches on finished games
are errors rather than endless or crashing searches.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field, replace

import numpy as np

from reference.envs import BoardEnv

SENTINEL = -2  # the chapter's starting bound: below every payoff (-1, 0, 1)
CONN_DEPTH = 3  # the chapter's default depth for Connect Four

CUTOFFS = {
    ">=-": lambda alpha, beta: alpha >= -beta,  # the chapter's code
    ">-": lambda alpha, beta: alpha > -beta,  # the chapter's prose: equal bounds go on
    ">=": lambda alpha, beta: alpha >= beta,  # the opponent's bound not negated
    ">": lambda alpha, beta: alpha > beta,  # ... in a course that cuts off only past the bound
}
# a course that cuts off only past the bound (`conventions: {cutoff: strict}`): each cut-off
# in the strict course's words
STRICT_CUTOFFS = {">=-": ">-", ">=": ">", ">-": ">-", ">": ">"}


@dataclass(frozen=True)
class Variant:
    """One way of writing the chapter's agent: the chapter's own, the unpruned one the
    `speedup` check compares against, or a classic bug. `fails` lists the check kinds the
    bug shows in (on the lab's positions); `hint` is one line for the student."""

    name: str
    prune: bool = True
    cutoff: str = ">=-"  # a key of CUTOFFS
    start: int = SENTINEL  # the bound a None (and the top level) starts from
    negate: bool = True  # my payoff = -opponent's payoff (False: the opponent's as mine)
    update: str = "own"  # which bound an improvement raises: "own", "other" or "none"
    immediate_win: bool = True  # the top level takes a winning move at once
    hint: str = ""
    fails: tuple[str, ...] = ()

    def __post_init__(self):
        if self.cutoff not in CUTOFFS:
            raise ValueError(f"cutoff must be one of {sorted(CUTOFFS)}, not {self.cutoff!r}")
        if self.update not in ("own", "other", "none"):
            raise ValueError(f"update must be 'own', 'other' or 'none', not {self.update!r}")


CHAPTER = Variant("chapter")
NO_PRUNING = Variant(
    "no_pruning",
    prune=False,
    hint="Your search never stops early: break out of the loop over validinputs as soon as alpha >= -beta.",
    fails=("nodes", "speedup"),
)

BUGS: tuple[Variant, ...] = (
    NO_PRUNING,
    Variant(
        "bounds_never_updated",
        update="none",
        hint="When a move improves the best payoff, record it as the mover's bound (alpha for the first "
        "player, beta for the second); without it nothing is ever pruned.",
        fails=("nodes", "speedup"),
    ),
    Variant(
        "strict_cutoff",
        cutoff=">-",
        hint="Cut off when alpha >= -beta, not only when alpha > -beta: equal bounds already decide the branch.",
        fails=("nodes", "speedup"),
    ),
    Variant(
        "no_sentinel",
        start=-1,
        hint="Start both bounds at the sentinel -2, below every payoff: starting at -1 means a losing first "
        "move is never taken as the best so far, and a win then ends every search at once.",
        fails=("nodes", "speedup"),
    ),
    Variant(
        "cutoff_not_negated",
        cutoff=">=",
        hint="The opponent's bound is in the opponent's payoffs: compare alpha >= -beta, not alpha >= beta.",
        fails=("value", "bounds", "nodes", "choice", "games", "speedup"),
    ),
    Variant(
        "sign_not_flipped",
        negate=False,
        hint="A move's payoff for you is minus the opponent's payoff after it: my_payoff = -opponent_payoff.",
        fails=("value", "bounds", "nodes", "choice", "games", "speedup"),
    ),
    Variant(
        "wrong_player_bound",
        update="other",
        hint="An improvement raises the mover's own bound: alpha when the first player moves, beta when the "
        "second does.",
        fails=("value", "bounds", "nodes", "choice", "games", "speedup"),
    ),
    Variant(
        "immediate_win_not_taken",
        immediate_win=False,
        hint="At the top level, return a move that wins at once as soon as you find it (done and reward != 0).",
        fails=("nodes", "choice"),
    ),
)
VARIANTS: dict[str, Variant] = {variant.name: variant for variant in (CHAPTER, *BUGS)}

# The chapter's code cuts off as soon as alpha >= -beta; a course that cuts off only when
# alpha > -beta (the chapter's prose, and `conventions: {cutoff: strict}` in a spec) has that
# search as its reference, every other bug made on it, and the chapter's code as its bug.
STRICT_CHAPTER = replace(CHAPTER, cutoff=">-")
INCLUSIVE_CUTOFF = Variant(
    "inclusive_cutoff",
    cutoff=">=-",
    hint="You cut off as soon as alpha >= -beta; this course cuts off only when alpha > -beta: equal bounds go on.",
    fails=("nodes", "speedup"),
)


def course_variant(strict: bool = False) -> Variant:
    """The reference's search in a course that cuts off on equality or (`strict`) only past it."""
    return STRICT_CHAPTER if strict else CHAPTER


def _strict_words(hint: str) -> str:
    return hint.replace("alpha >= -beta", "alpha > -beta").replace("alpha >= beta", "alpha > beta")


def bugs_for(strict: bool = False) -> tuple[Variant, ...]:
    """The classic bugs of a course that cuts off on equality (BUGS) or only past the bound
    (`strict`): every other bug made on the strict search, the cut-off bug mirrored."""
    if not strict:
        return BUGS
    return tuple(
        INCLUSIVE_CUTOFF
        if bug.name == "strict_cutoff"
        else replace(bug, cutoff=STRICT_CUTOFFS[bug.cutoff], hint=_strict_words(bug.hint))
        for bug in BUGS
    )


def hints_for(strict: bool = False) -> dict[str, str]:
    """Every classic bug's hint in the words of the course's cut-off."""
    return {bug.name: bug.hint for bug in bugs_for(strict)}


# --- the searches ----------------------------------------------------------------------


def payoff(
    env: BoardEnv,
    reward: int,
    done: bool,
    alpha: int | None = None,
    beta: int | None = None,
    depth: int | None = None,
    variant: Variant = CHAPTER,
) -> int:
    """The chapter's `maximized_payoff_ttt` (`depth=None`) or `max_payoff_conn` (`depth`
    a number), written as `variant`. Its `step` calls go to `env.counter`."""
    if depth is not None and depth < 0:
        raise ValueError(f"depth must be None or >= 0, not {depth}")
    first = env.players[0]
    cut = CUTOFFS[variant.cutoff]

    def search(env, reward, done, depth, alpha, beta):
        if done:
            return -1 if reward != 0 else 0
        if depth == 0:
            return 0
        if alpha is None:
            alpha = variant.start
        if beta is None:
            beta = variant.start
        mover_first = env.turn == first
        best = alpha if mover_first else beta
        below = None if depth is None else depth - 1
        for move in env.validinputs:
            child = copy.deepcopy(env)
            _, reward, done, _ = child.step(move)
            opponent = search(child, reward, done, below, alpha, beta)
            mine = -opponent if variant.negate else opponent
            if mine > best:
                best = mine
                if variant.update == "own":
                    if mover_first:
                        alpha = best
                    else:
                        beta = best
                elif variant.update == "other":
                    if mover_first:
                        beta = best
                    else:
                        alpha = best
            if variant.prune and cut(alpha, beta):
                break
        return best

    return search(env, reward, done, depth, alpha, beta)


@dataclass(frozen=True)
class Run:
    """A search's result and the `step` calls it made."""

    result: int
    steps: int


def run_payoff(
    env: BoardEnv,
    reward: int,
    done: bool,
    alpha: int | None = None,
    beta: int | None = None,
    depth: int | None = None,
    variant: Variant = CHAPTER,
) -> Run:
    """`payoff(...)` with the number of `step` calls it made (on `env`'s counter)."""
    before = env.counter.count
    result = payoff(env, reward, done, alpha, beta, depth, variant)
    return Run(result, env.counter.count - before)


@dataclass(frozen=True)
class Decision:
    """What the top level (`minimax_ttt`, `minimax_conn`) did: the action, whether it was an
    immediate win, the groups it chose from (moves searched, in `validinputs` order; moves
    after an immediate win are never searched), each searched move's payoff, and the
    `step` calls made."""

    action: int
    immediate_win: bool
    wins: tuple[int, ...]
    ties: tuple[int, ...]
    losses: tuple[int, ...]
    payoffs: dict[int, int] = field(compare=False)
    steps: int

    @property
    def group(self) -> tuple[int, ...]:
        """The actions the chapter picks at random among."""
        if self.immediate_win:
            return (self.action,)
        return self.wins or self.ties or self.losses


def decide(
    env: BoardEnv, depth: int | None = None, variant: Variant = CHAPTER, rng: random.Random | None = None
) -> Decision:
    """The chapter's `minimax_ttt` (`depth=None`) or `minimax_conn` (`depth` a number),
    written as `variant`: the first of the chosen group, or `rng.choice` of it."""
    if env.done or not env.validinputs:
        raise ValueError("no move to choose: the game is over")
    before = env.counter.count
    wins: list[int] = []
    ties: list[int] = []
    losses: list[int] = []
    payoffs: dict[int, int] = {}
    for move in env.validinputs:
        child = copy.deepcopy(env)
        _, reward, done, _ = child.step(move)
        if variant.immediate_win and done and reward != 0:
            payoffs[move] = 1
            return Decision(move, True, tuple(wins), tuple(ties), tuple(losses), payoffs, env.counter.count - before)
        mine = -payoff(child, reward, done, variant.start, variant.start, depth, variant)
        payoffs[move] = mine
        (wins if mine == 1 else ties if mine == 0 else losses).append(move)
    group = wins or ties or losses
    action = group[0] if rng is None else rng.choice(group)
    return Decision(action, False, tuple(wins), tuple(ties), tuple(losses), payoffs, env.counter.count - before)


# The student API's names (DESIGN.md, the agents lab), for the chapter's agent and for the
# same agent without pruning (the `speedup` check's baseline).


def maximized_payoff_ttt(env, reward, done, alpha, beta):
    return payoff(env, reward, done, alpha, beta)


def minimax_ttt(env):
    return decide(env).action


def max_payoff_conn(env, reward, done, depth, alpha, beta):
    return payoff(env, reward, done, alpha, beta, depth)


def minimax_conn(env, depth=CONN_DEPTH):
    return decide(env, depth).action


def maximized_payoff_ttt_unpruned(env, reward, done, alpha, beta):
    return payoff(env, reward, done, alpha, beta, variant=NO_PRUNING)


def minimax_ttt_unpruned(env):
    return decide(env, variant=NO_PRUNING).action


def max_payoff_conn_unpruned(env, reward, done, depth, alpha, beta):
    return payoff(env, reward, done, alpha, beta, depth, NO_PRUNING)


def minimax_conn_unpruned(env, depth=CONN_DEPTH):
    return decide(env, depth, NO_PRUNING).action


# --- true payoffs ------------------------------------------------------------------------

_EXACT_MEMO: dict = {}  # (class, state, turn) -> exact payoff; bounded by the game's positions
_EXACT_MEMO_LIMIT = 200_000


def true_payoff(env: BoardEnv, reward: int | None = None, done: bool | None = None, depth: int | None = None) -> int:
    """The exact payoff (depth-limited when `depth` is a number) for the player to move in
    `env`, given the previous move's `reward` and `done` (default: `env.reward`,
    `env.done`), with the chapter's rules: won -1, tied 0, depth 0 a tie. Uncounted."""
    if depth is not None and depth < 0:
        raise ValueError(f"depth must be None or >= 0, not {depth}")
    reward = env.reward if reward is None else reward
    done = env.done if done is None else done
    if done:
        return -1 if reward != 0 else 0
    if depth == 0:
        return 0
    return _solve(env, depth, _memo_for(depth))


def _memo_for(depth: int | None, shared: dict | None = None) -> dict:
    """The global memo for exact payoffs, else `shared` or a new one (depth-limited
    values depend on the depth left, and positions seen in one game rarely recur)."""
    if depth is None:
        if len(_EXACT_MEMO) > _EXACT_MEMO_LIMIT:
            _EXACT_MEMO.clear()
        return _EXACT_MEMO
    return {} if shared is None else shared


def _children(env: BoardEnv):
    """(move, position after it) for every legal move, played without counting."""
    for move in env.validinputs:
        child = copy.deepcopy(env)
        child._play(move)
        yield move, child


def _solve(env: BoardEnv, depth: int | None, memo: dict) -> int:
    """Negamax value of an unfinished `env` with `depth` (None or >= 1) moves left."""
    key = (type(env).__name__, env.state.tobytes(), env.turn, depth)
    if key not in memo:
        best = -1
        below = None if depth is None else depth - 1
        for _, child in _children(env):
            if child.done:
                value = 1 if child.reward != 0 else 0
            elif below == 0:
                value = 0
            else:
                value = -_solve(child, below, memo)
            if value > best:
                best = value
                if best == 1:
                    break
        memo[key] = best
    return memo[key]


def action_payoffs(env: BoardEnv, depth: int | None = None) -> dict[int, int]:
    """Each legal move's true payoff for the player to move, as the chapter's top level
    rates it (at Connect Four each move is followed by a search of `depth`). Uncounted."""
    if depth is not None and depth < 0:
        raise ValueError(f"depth must be None or >= 0, not {depth}")
    memo = _memo_for(depth, {})
    payoffs = {}
    for move, child in _children(env):
        if child.done:
            payoffs[move] = 1 if child.reward != 0 else 0
        else:
            payoffs[move] = 0 if depth == 0 else -_solve(child, depth, memo)
    return payoffs


def immediate_wins(env: BoardEnv) -> tuple[int, ...]:
    """The moves that win at once, in `validinputs` order. Uncounted."""
    return tuple(move for move, child in _children(env) if child.done and child.reward != 0)


def optimal_actions(env: BoardEnv, depth: int | None = None) -> frozenset[int]:
    """Every action the chapter's agent may play: the immediate wins if there are any,
    else the moves of the best true payoff (wins, else ties, else losses). Empty when the
    game is over. Uncounted."""
    if env.done:
        return frozenset()
    wins = immediate_wins(env)
    if wins:
        return frozenset(wins)
    payoffs = action_payoffs(env, depth)
    best = max(payoffs.values())
    return frozenset(move for move, value in payoffs.items() if value == best)


# --- the bound specification -----------------------------------------------------------


def window(
    env: BoardEnv, alpha: int | float | None, beta: int | float | None, start: int = SENTINEL
) -> tuple[float, float]:
    """`(lo, hi)` for the player to move: (own bound, -opponent's bound), `None` read as
    `start`."""
    alpha = start if alpha is None else alpha
    beta = start if beta is None else beta
    return (alpha, -beta) if env.turn == env.players[0] else (beta, -alpha)


@dataclass(frozen=True)
class BoundRequirement:
    """What a correct result must be: `== limit`, `<= limit` or `>= limit`."""

    relation: str
    limit: float

    def holds(self, result) -> bool:
        """Whether `result` meets it; a result that is no number (a bool, None, a string)
        never does, numpy numbers do."""
        if isinstance(result, (bool, np.bool_)):
            return False
        try:
            result = float(result)
        except (TypeError, ValueError):
            return False
        if self.relation == "==":
            return result == self.limit
        return result <= self.limit if self.relation == "<=" else result >= self.limit

    def __str__(self) -> str:
        words = {"==": "exactly", "<=": "at most", ">=": "at least"}
        return f"{words[self.relation]} {self.limit:g}"


def bound_requirement(true: int, lo: float, hi: float) -> BoundRequirement:
    """Knuth and Moore's specification for the window `(lo, hi)`, `lo < hi`, and the true
    payoff `true`."""
    if not lo < hi:
        raise ValueError(f"the window needs lo < hi, got ({lo}, {hi})")
    if true <= lo:
        return BoundRequirement("<=", lo)
    if true >= hi:
        return BoundRequirement(">=", hi)
    return BoundRequirement("==", true)


def check_bounds(
    env: BoardEnv, reward: int, done: bool, alpha, beta, result, depth: int | None = None
) -> tuple[bool, BoundRequirement]:
    """Whether `result`, returned for `payoff(env, reward, done, alpha, beta, depth)`,
    meets the specification, and the requirement it was held to."""
    requirement = bound_requirement(true_payoff(env, reward, done, depth), *window(env, alpha, beta))
    return requirement.holds(result), requirement
