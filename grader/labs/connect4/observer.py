"""Observer of the `connect4` lab: hands the student Connect Four and watches the search.

The game module (`reference/games/connect4.py`) arrives as the extra module
`_abgrade_connect4`. Before every measured call the observer sets the game globals
(`gPlayers`, `gStart`, `next_states`, `finished`, `utility`, `heuristic`, `gTestState`;
DESIGN.md), replacing the student's own, and resets `gCache` to `{}` unless the call
asks for the cache the previous call left ("warm"). It sends back what the call returned,
how often `next_states` was called, the cache afterwards (bounded; keys and flags as plain
JSON), and for `pd_evaluate` / `best_move` the top-level calls of `evaluate` (limit,
value, when each began and ended, in seconds from the start of the call).

A guard keeps a search that would never stop from costing the case's time limit: the
request may give a deadline (seconds after the start of the call) and a largest limit
for the top-level `evaluate`; past either, the grader's `next_states` / `evaluate` raise
`StoppedByGrader`, and the observation says `stopped`. The observer never judges.
"""

import sys
import time

from _abgrade_runtime import call_observed, plain, safe_repr

GAME = sys.modules["_abgrade_game_connect4"]
CACHE_LIMIT = 5000  # cache entries sent back; the size is always exact
TOP_LIMIT = 2000  # top-level evaluate calls sent back
_perf = time.perf_counter


class StoppedByGrader(BaseException):
    """Raised by the grader's functions when the guard of a call runs out."""


def encoded(state):
    """A state in the game's JSON encoding, or None when it is not a Connect Four state."""
    try:
        return GAME.encode(state)
    except BaseException:  # noqa: BLE001 - a student may pass anything
        return None


def rows_of(state):
    """The rows of what looks like a board, as the game encodes them, without checking the
    stones (the grader decodes and checks every key); None when it doesn't look like one.
    Thousands of keys are sent after a call: the game's own checked encoding took longer
    than the search it reported on."""
    if type(state) is not tuple or len(state) != 6:
        return None
    rows = []
    for row in state:
        if type(row) is not tuple or len(row) != 7:
            return None
        try:
            rows.append("".join(row))
        except BaseException:  # noqa: BLE001 - not strings: the checked encoding says what it is
            return None
    return rows


def cache_key(key):
    """A cache key as data: {"state", "limit"} for (State, limit); {"state", "limit": None}
    for a bare state; {"unencodable": repr} for anything else."""
    if type(key) is tuple and len(key) == 2 and type(key[1]) is int:
        state = rows_of(key[0]) or encoded(key[0])
        if state is not None:
            return {"state": state, "limit": key[1]}
    state = encoded(key)
    if state is not None:
        return {"state": state, "limit": None}
    return {"unencodable": safe_repr(key, 120)}


def cache_entry(key, entry):
    flag, value = None, entry
    if type(entry) in (tuple, list) and len(entry) == 2:
        flag, value = entry
    return {"key": cache_key(key), "flag": plain(flag), "value": plain(value)}


def cache_report(cache, before=None, root=None):
    """The cache as a list of entries (at most CACHE_LIMIT), its size, and how many entries
    were left out because the report before it in this request (`before`: their marks)
    sent them unchanged: the warm cache of a case repeats most of the cold one, and they
    were checked there. The entry of `root` (the call's own key) is always sent. Returns
    the report and the marks of this cache's entries."""
    if not isinstance(cache, dict):
        return {"entries": [], "size": None, "type": safe_repr(type(cache).__name__, 60)}, None
    entries = []  # type: list
    marks = set()
    repeated = 0
    try:
        for key, entry in list(cache.items()):
            # the types too: ('=', True) equals ('=', 1), but is not the same entry
            kinds = tuple(type(x) for x in entry) if type(entry) is tuple else type(entry)
            mark = (key, entry, kinds)  # type: object
            try:
                hash(mark)
            except BaseException:  # noqa: BLE001 - a list as the entry: always sent
                mark = None
            if mark is not None and before is not None and mark in before and key != root:
                marks.add(mark)  # sent (and checked) before
                repeated += 1
                continue
            if len(entries) < CACHE_LIMIT:
                entries.append(cache_entry(key, entry))
                if mark is not None:
                    marks.add(mark)
        size = len(cache)
    except BaseException:  # noqa: BLE001 - a student's dict subclass may raise anything
        return {"entries": entries, "size": None, "type": "dict"}, None
    return {"entries": entries, "size": size, "repeated": repeated}, marks


class Watch:
    """One measured call: the counting `next_states`, the top-level `evaluate` calls and
    the guard."""

    def __init__(self, guard):
        self.count = 0
        self.top = []
        self.start = _perf()
        guard = guard or {}
        seconds = guard.get("seconds")
        self.deadline = None if seconds is None else self.start + seconds
        self.max_limit = guard.get("max_limit")
        self.stopped = None

    def stop(self, why):
        self.stopped = why
        raise StoppedByGrader(why)

    def next_states(self, State, player):
        self.count += 1
        if self.deadline is not None and _perf() > self.deadline:
            self.stop("time")
        return GAME.next_states(State, player)

    def evaluate(self, namespace, student):
        """`evaluate` for a call of pd_evaluate or best_move: a top-level call is recorded
        and runs with the student's own `evaluate` in place, so the recursion below it
        costs nothing extra."""
        watch = self

        def evaluate(State, limit, *args, **kwargs):
            entry = [plain(limit), None, _perf() - watch.start, None, encoded(State)]
            if len(watch.top) < TOP_LIMIT:
                watch.top.append(entry)
            if watch.max_limit is not None and type(limit) is int and limit > watch.max_limit:
                watch.stop("limit")
            namespace["evaluate"] = student
            try:
                value = student(State, limit, *args, **kwargs)
            finally:
                namespace["evaluate"] = evaluate
            entry[1] = plain(value)
            entry[3] = _perf() - watch.start
            return value

        setattr(evaluate, "_abgrade_wrapper", student)  # noqa: B010 - a mark the next wrap looks for
        return evaluate


def student_function(namespace, name):
    function = namespace.get(name)
    return getattr(function, "_abgrade_wrapper", function)


def install_game(namespace, watch, test_state):
    namespace["gPlayers"] = list(GAME.gPlayers)
    namespace["gStart"] = GAME.gStart
    namespace["next_states"] = watch.next_states
    namespace["finished"] = GAME.finished
    namespace["utility"] = GAME.utility
    namespace["heuristic"] = GAME.heuristic
    namespace["gTestState"] = test_state


def arguments(namespace, call, State):
    function = call["function"]
    if function == "evaluate":
        f = namespace.get(call["f"])
        return (State, call["limit"], f, *call.get("window", ()))
    if function in ("maxValue", "minValue"):
        return (State, call["limit"], *call.get("window", ()))
    if function == "pd_evaluate":
        return (State, call["time_limit"], namespace.get(call["f"]))
    return (State, call["time_limit"])  # best_move


def observe(namespace, call, test_state, sent=None):
    """One measured call. `sent`: {"marks": ...} of the cache report before it in this
    request (see cache_report), updated here."""
    sent = {} if sent is None else sent
    if not call.get("warm"):
        namespace["gCache"] = {}
    evaluate = student_function(namespace, "evaluate")
    namespace["evaluate"] = evaluate
    watch = Watch(call.get("guard"))
    install_game(namespace, watch, test_state)
    function = student_function(namespace, call["function"])
    deepening = call["function"] in ("pd_evaluate", "best_move")
    if deepening and callable(evaluate):
        namespace["evaluate"] = watch.evaluate(namespace, evaluate)
    State = GAME.decode(call["state"])
    results = []

    def run(*args):
        result = function(*args)
        results.append(result)
        return result

    try:
        returned, error, seconds = call_observed(run, arguments(namespace, call, State))
    finally:
        namespace["evaluate"] = evaluate
    observation = {
        "returned": returned,
        "error": None if watch.stopped else error,
        "seconds": seconds,
        "expansions": watch.count,
        "stopped": watch.stopped,
    }
    if call.get("cache"):
        root = (State, call["limit"]) if call["function"] == "evaluate" else None
        observation["cache"], sent["marks"] = cache_report(namespace.get("gCache"), sent.get("marks"), root)
    if deepening:
        observation["top"] = watch.top
    if call["function"] == "best_move" and results:
        result = results[0]
        if type(result) in (tuple, list) and len(result) == 2:
            observation["move"] = {"value": plain(result[0]), "state": encoded(result[1])}
    return observation


def handle(namespace, request):
    """Run the calls of one case, in order, on one namespace."""
    test_state = GAME.decode(request["test_state"]) if request.get("test_state") else GAME.gStart
    observations = []
    sent = {}  # type: dict
    for call in request["calls"]:
        observation = observe(namespace, call, test_state, sent)
        observations.append(observation)
        error = observation["error"]
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}
