"""Observer of the `connect4` lab: hands the student Connect Four and watches the search.

The game module (`reference/games/connect4.py`) arrives as the extra module
`_abgrade_connect4`. Before every measured call the observer sets the game globals
(`gPlayers`, `gStart`, `next_states`, `finished`, `utility`, `heuristic`, `gTestState`;
DESIGN.md), replacing the student's own, and resets `gCache` to `{}` unless the call
asks for the cache the previous call left ("warm"). It sends back what the call returned,
how often `next_states` was called, the cache afterwards (bounded; keys and flags as plain
JSON), and for `pd_evaluate` / `best_move` the top-level calls of `evaluate` (limit,
value, and the work done when each began and ended: `[next_states calls, evaluate rounds]`
since the start of the call).

During a measured `pd_evaluate` or `best_move` the student's code sees a virtual clock
(`VirtualClock`): `time.time`, `time.monotonic`, `time.perf_counter`, `time.process_time`,
`time.thread_time`, `time.clock_gettime` and their `_ns` forms advance by the request's
`clock.call` seconds per counted `next_states` call and `clock.round` seconds per
top-level `evaluate` call (charged when it returns), and stand still otherwise. So how
deep a time-limited deepening gets is a function of the work it does, never of the
machine's speed or load; the grader replays the same clock from the counts.

A guard keeps a search that would never stop from costing the case's time limit: the
request may give a deadline (seconds of the virtual clock after the start of the call)
and a largest limit for the top-level `evaluate`; past either, the grader's `next_states`
/ `evaluate` raise `StoppedByGrader`, and the observation says `stopped`. The observer
never judges.
"""

import sys
import time

from _abgrade_runtime import call_observed, home_of, plain, safe_repr, set_global, student_namespaces

GAME = sys.modules["_abgrade_game_connect4"]
CACHE_LIMIT = 5000  # cache entries sent back; the size is always exact
TOP_LIMIT = 2000  # top-level evaluate calls sent back
CLOCKS = ("time", "monotonic", "perf_counter", "process_time", "thread_time")


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
    """One measured call: the counting `next_states`, the top-level `evaluate` calls (the
    rounds) and the guard, on the virtual clock of `clock` ({"call", "round"}: seconds)."""

    def __init__(self, guard, clock=None):
        self.count = 0
        self.rounds = 0
        self.top = []
        clock = clock or {}
        self.per_call = float(clock.get("call", 0.0))
        self.per_round = float(clock.get("round", 0.0))
        guard = guard or {}
        self.deadline = guard.get("seconds")
        self.max_limit = guard.get("max_limit")
        self.stopped = None

    def elapsed(self):
        """Seconds of the virtual clock since the call began."""
        return self.count * self.per_call + self.rounds * self.per_round

    def stop(self, why):
        self.stopped = why
        raise StoppedByGrader(why)

    def next_states(self, State, player):
        self.count += 1
        if self.deadline is not None and self.elapsed() > self.deadline:
            self.stop("time")
        return GAME.next_states(State, player)

    def evaluate(self, namespace, student):
        """`evaluate` for a call of pd_evaluate or best_move: a top-level call is recorded
        and runs with the student's own `evaluate` in place, so the recursion below it
        costs nothing extra."""
        watch = self

        def evaluate(State, limit, *args, **kwargs):
            entry = [plain(limit), None, [watch.count, watch.rounds], None, encoded(State)]
            if len(watch.top) < TOP_LIMIT:
                watch.top.append(entry)
            if watch.max_limit is not None and type(limit) is int and limit > watch.max_limit:
                watch.stop("limit")
            if watch.deadline is not None and watch.elapsed() > watch.deadline:
                watch.stop("time")
            namespace["evaluate"] = student
            try:
                value = student(State, limit, *args, **kwargs)
            finally:
                namespace["evaluate"] = evaluate
                watch.rounds += 1
            entry[1] = plain(value)
            entry[3] = [watch.count, watch.rounds]
            return value

        setattr(evaluate, "_abgrade_wrapper", student)  # noqa: B010 - a mark the next wrap looks for
        return evaluate


class VirtualClock:
    """The time module's clocks as the student's code sees them during one measured call:
    each reads what it read when the call began plus the watch's virtual seconds. The
    module's functions are replaced, and so are the names in the student's namespaces
    that hold the real ones (`from time import time`); `restore()` puts everything back."""

    def __init__(self, watch, spaces):
        self.watch = watch
        self.saved = {}  # name in the time module -> the real function
        self.replaced = []  # (namespace, name, the real function)
        makers = [(name, self._seconds) for name in CLOCKS] + [(name + "_ns", self._nanoseconds) for name in CLOCKS]
        makers += [("clock_gettime", self._seconds_of), ("clock_gettime_ns", self._nanoseconds_of)]
        for name, make in makers:
            real = getattr(time, name, None)
            if real is not None:
                self.saved[name] = real
                setattr(time, name, make(real))
        by_id = {id(real): name for name, real in self.saved.items()}
        for namespace in spaces:
            try:
                for key, value in list(namespace.items()):
                    found = by_id.get(id(value))
                    if found is not None and value is self.saved[found]:
                        self.replaced.append((namespace, key, value))
                        namespace[key] = getattr(time, found)
            except BaseException:  # noqa: BLE001 - a namespace a student broke: the module's clocks still are virtual
                pass

    def _seconds(self, real):
        base, watch = real(), self.watch
        return lambda: base + watch.elapsed()

    def _nanoseconds(self, real):
        base, watch = real(), self.watch
        return lambda: base + int(round(watch.elapsed() * 1e9))

    def _seconds_of(self, real):
        bases, watch = {}, self.watch

        def clock_gettime(clock_id):
            if clock_id not in bases:
                bases[clock_id] = real(clock_id)
            return bases[clock_id] + watch.elapsed()

        return clock_gettime

    def _nanoseconds_of(self, real):
        bases, watch = {}, self.watch

        def clock_gettime_ns(clock_id):
            if clock_id not in bases:
                bases[clock_id] = real(clock_id)
            return bases[clock_id] + int(round(watch.elapsed() * 1e9))

        return clock_gettime_ns

    def restore(self):
        for name, real in self.saved.items():
            setattr(time, name, real)
        for namespace, key, real in self.replaced:
            try:
                namespace[key] = real
            except BaseException:  # noqa: BLE001
                pass


def student_function(namespace, name):
    function = namespace.get(name)
    return getattr(function, "_abgrade_wrapper", function)


def install_game(spaces, watch, test_state):
    """The game globals, in each of the student's namespaces (runtime.student_namespaces)."""
    set_global(spaces, "gPlayers", list(GAME.gPlayers))
    set_global(spaces, "gStart", GAME.gStart)
    set_global(spaces, "next_states", watch.next_states)
    set_global(spaces, "finished", GAME.finished)
    set_global(spaces, "utility", GAME.utility)
    set_global(spaces, "heuristic", GAME.heuristic)
    set_global(spaces, "gTestState", test_state)


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


def observe(namespace, spaces, call, test_state, sent=None):
    """One measured call. `spaces`: the student's namespaces (runtime.student_namespaces),
    the user's first; the game goes into each, and so does the watched `evaluate` (each
    wrapping the student's own `evaluate` found there). The cache is read where the called
    function's `global gCache` writes it. `sent`: {"marks": ...} of the cache report before
    it in this request (see cache_report), updated here."""
    sent = {} if sent is None else sent
    if not call.get("warm"):
        set_global(spaces, "gCache", {})
    # the user's namespace, and each other one that has an `evaluate` of its own
    spaces_evaluates = [
        (space, student_function(space, "evaluate")) for space in spaces if space is namespace or "evaluate" in space
    ]
    for space, own in spaces_evaluates:
        space["evaluate"] = own
    watch = Watch(call.get("guard"), call.get("clock"))
    install_game(spaces, watch, test_state)
    function = student_function(namespace, call["function"])
    deepening = call["function"] in ("pd_evaluate", "best_move")
    if deepening:
        for space, own in spaces_evaluates:
            if callable(own):
                space["evaluate"] = watch.evaluate(space, own)
    State = GAME.decode(call["state"])
    results = []
    clock = VirtualClock(watch, spaces) if call.get("clock") else None

    def run(*args):
        result = function(*args)
        results.append(result)
        return result

    try:
        returned, error, seconds = call_observed(run, arguments(namespace, call, State))
    finally:
        if clock is not None:
            clock.restore()
        for space, own in spaces_evaluates:
            space["evaluate"] = own
    observation = {
        "returned": returned,
        "error": None if watch.stopped else error,
        "seconds": seconds,
        "expansions": watch.count,
        "stopped": watch.stopped,
    }
    if call.get("cache"):
        root = (State, call["limit"]) if call["function"] == "evaluate" else None
        cache = home_of(spaces, function).get("gCache")
        observation["cache"], sent["marks"] = cache_report(cache, sent.get("marks"), root)
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
    spaces = student_namespaces(namespace)
    observations = []
    sent = {}  # type: dict
    for call in request["calls"]:
        observation = observe(namespace, spaces, call, test_state, sent)
        observations.append(observation)
        error = observation["error"]
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}
