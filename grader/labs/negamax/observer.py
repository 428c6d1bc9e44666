"""Observer of the `negamax` lab: hands the student a game and watches it being searched.

The game modules (`reference/games/*`) arrive as extra modules named `_abgrade_game_<name>`.
For every call the observer (re)builds the game the request names, sets the globals the
student's code uses (`Players`, `Start`, `next_states`, `utility`, `finished`; DESIGN.md),
resets `num_value_call` to 0, calls the student's function on a decoded state and sends
back what it returned, the counter afterwards, and how often (and on which encoded states)
`next_states` was called. States cross the pipe only in the game's own JSON encoding.
"""

import sys

from _abgrade_runtime import call_observed, home_of, plain, safe_repr, set_global, student_namespaces

GAME_PREFIX = "_abgrade_game_"

# Each game module's globals as shipped, so a request that configures a game (Nim heaps,
# a tree) never leaks into the next one.
_PRISTINE = {
    name[len(GAME_PREFIX) :]: dict(module.__dict__)
    for name, module in list(sys.modules.items())
    if name.startswith(GAME_PREFIX)
}


def build_game(name, params):
    module = sys.modules[GAME_PREFIX + name]
    module.__dict__.update(_PRISTINE[name])
    if params:
        module.configure(**params)
    return module


def encoded(game, state):
    """The state in the game's JSON encoding, or a marker if the student made something else."""
    try:
        return game.encode(state)
    except BaseException:  # noqa: BLE001 - a student may pass anything
        return {"unencodable": safe_repr(state)}


class ExpansionLog:
    """The calls of `next_states`: how many, and on which states (the first `keep`, as many
    as the grader asks for)."""

    def __init__(self, game, keep):
        self.game = game
        self.keep = keep if type(keep) is int and keep > 0 else 0
        self.count = 0
        self.states = []

    def watched(self, next_states):
        def next_states_watched(state, player):
            self.count += 1
            if len(self.states) < self.keep:
                self.states.append(encoded(self.game, state))
            return next_states(state, player)

        return next_states_watched


def install_game(spaces, game, log):
    """The game globals, set afresh before every call (replacing the student's own) in
    each of the student's namespaces (runtime.student_namespaces)."""
    set_global(spaces, "Players", list(game.Players))
    set_global(spaces, "Start", game.Start)
    set_global(spaces, "next_states", log.watched(game.next_states))
    set_global(spaces, "utility", game.utility)
    set_global(spaces, "finished", game.finished)
    set_global(spaces, "num_value_call", 0)


def observed_move(game, result):
    """`best_move`'s answer as data: its value, and its state encoded (None if that is no
    state of the game); None when the answer is not a pair."""
    if type(result) not in (tuple, list) or len(result) != 2:
        return None
    value, state = result
    try:
        state = game.encode(state)
    except BaseException:  # noqa: BLE001 - a student may return anything
        state = None
    return {"value": plain(value), "state": state}


def observe(namespace, spaces, game, call):
    """One call; the counter is read where the called function's `global` wrote it."""
    log = ExpansionLog(game, call.get("trace"))
    install_game(spaces, game, log)
    function = namespace.get(call["function"])
    results = []

    def run(*args):
        result = function(*args)
        results.append(result)
        return result

    state = game.decode(call["state"])
    returned, error, seconds = call_observed(run, (state, *call["args"]))
    observation = {
        "returned": returned,
        "error": error,
        "seconds": seconds,
        "counter": plain(home_of(spaces, function).get("num_value_call")),
        "expansions": log.count,
    }
    if log.keep:
        observation["expanded"] = log.states
    if call["function"] == "best_move" and results:
        observation["move"] = observed_move(game, results[0])
    return observation


def handle(namespace, request):
    """Run the calls of one case on the game it names."""
    game = build_game(request["game"], request.get("params"))
    spaces = student_namespaces(namespace)
    observations = []
    for call in request["calls"]:
        observation = observe(namespace, spaces, game, call)
        observations.append(observation)
        error = observation["error"]
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}
