"""Observer of the `tictactoe` lab: calls the student's functions on boards and watches
`get_childs`.

The board rules (`reference/tictactoe.py`) arrive as the extra module
`_abgrade_tictactoe_rules`; they stand in for any given helper the submission did not
define. Before each call `get_childs` in the student's namespace is wrapped (the
student's own version if it has one): the wrapper keeps a byte copy of every board it is
called on, and the copies become notations ("xo./.x./..o") in bulk after the call, so
the search pays almost nothing per expansion. Only plain data goes back: notations,
numbers, error records; never an array or a student object.
"""

import inspect
import re
import sys

import numpy as np
from _abgrade_runtime import FRAME_NAMES, STUDENT_DIRS, call_observed, plain, safe_repr, student_namespaces

RULES = sys.modules["_abgrade_tictactoe_rules"]
GIVEN_HELPERS = ("get_next_turn", "get_childs", "game_status", "score")
TRACE_LIMIT = 60000  # notations kept per call; the count of expansions is always exact
NOT_A_BOARD = "?"  # first character of a label for something that is not a 3x3 board of -1/0/1
_NONE_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_]\w*\s*=\s*None\b")
_MARKS = np.frombuffer(b"x.o", dtype=np.uint8)  # cell value + 1 -> mark
_ndarray = np.ndarray
_FLOAT = np.dtype(float)


class ExpansionLog:
    """Snapshots of the boards `get_childs` was called on, in call order: the raw bytes
    of a float64 array (the common case, ~0.2 us), else the notation made at once."""

    def __init__(self):
        self.snapshots = []
        self.dropped = 0  # calls beyond TRACE_LIMIT, counted but not kept

    @property
    def count(self):
        return len(self.snapshots) + self.dropped

    def watched(self, get_childs):
        snapshots = self.snapshots
        keep = snapshots.append

        def get_childs_watched(matrix, turn):
            if len(snapshots) >= TRACE_LIMIT:
                self.dropped += 1
            elif type(matrix) is _ndarray and matrix.dtype is _FLOAT:
                keep(matrix.tobytes())
            else:
                keep(_snapshot_other(matrix))
            return get_childs(matrix, turn)

        return get_childs_watched

    def notations(self):
        """Every snapshot as a notation (a board that is not one as "?<what it was>")."""
        labels = list(self.snapshots)
        floats = [i for i, s in enumerate(labels) if type(s) is bytes and len(s) == 72]
        if floats:
            rows = np.frombuffer(b"".join(labels[i] for i in floats), dtype=_FLOAT).reshape(-1, 9)
            for i, text in zip(floats, _rows_as_notation(rows)):
                labels[i] = text
        return [NOT_A_BOARD + "an array of %d numbers" % (len(s) // 8) if type(s) is bytes else s for s in labels]


def _snapshot_other(matrix):
    """The notation of a board that is not a float64 array (ints, a list, None, ...)."""
    try:
        array = np.array(matrix, dtype=float)
        if array.shape == (3, 3):
            return _rows_as_notation(array.reshape(1, 9))[0]
    except BaseException:  # noqa: BLE001 - a student may pass anything
        pass
    return NOT_A_BOARD + safe_repr(matrix, 80)


def _rows_as_notation(rows):
    """Rows of 9 cells -> notations, vectorised; a row with other values -> "?<values>"."""
    try:
        valid = ((rows == -1) | (rows == 0) | (rows == 1)).all(axis=1)
    except BaseException:  # noqa: BLE001 - exotic dtypes
        return [NOT_A_BOARD + safe_repr(row.tolist(), 80) for row in rows]
    codes = np.where(valid[:, None], rows, 0).astype(np.int8) + 1
    cells = _MARKS[codes]
    text = np.full((len(rows), 12), ord("/"), dtype=np.uint8)
    text[:, [0, 1, 2, 4, 5, 6, 8, 9, 10]] = cells
    joined = text.tobytes().decode("ascii")
    labels = [joined[12 * k : 12 * k + 11] for k in range(len(rows))]
    for k in np.flatnonzero(~valid):
        labels[k] = NOT_A_BOARD + "a board holding " + safe_repr(rows[k].reshape(3, 3).tolist(), 80)
    return labels


def board_label(value):
    """A board the student returned, as a notation; None stays None."""
    if value is None:
        return None
    if type(value) is _ndarray and value.shape == (3, 3):
        return _rows_as_notation(value.reshape(1, 9))[0]
    return _snapshot_other(value)


def install_helpers(spaces):
    """The given helpers the submission did not define come from the reference rules, in
    each of its namespaces (runtime.student_namespaces)."""
    for space in spaces:
        for name in GIVEN_HELPERS:
            if name not in space:
                space[name] = getattr(RULES, name)


def _own_functions(spaces):
    """(name, function) of every function in the student's namespaces, each once."""
    seen = set()
    for space in spaces:
        for name, value in list(space.items()):
            if inspect.isfunction(value) and id(value) not in seen:
                seen.add(id(value))
                yield name, value


def none_assignments(spaces):
    """Lines `name = None` in the submission's own functions: [file, line, function, text]."""
    found = []
    for name, value in _own_functions(spaces):
        code = getattr(value, "__code__", None)
        if code is None or not any(code.co_filename.startswith(d) for d in STUDENT_DIRS):
            continue
        try:
            lines, start = inspect.getsourcelines(value)
        except BaseException:  # noqa: BLE001 - source not available
            continue
        shown = FRAME_NAMES.get(code.co_filename) or code.co_filename.rsplit("/", 1)[-1]
        for offset, text in enumerate(lines):
            if _NONE_ASSIGNMENT.match(text):
                found.append([shown, start + offset, name, text.strip()[:160]])
    return found


def observe_search(spaces, function, args, trace):
    """Call minimax / maximize / minimize with get_childs watched (when `trace`): in each
    of the student's namespaces the `get_childs` found there, all into one log."""
    log = ExpansionLog()
    given = [space["get_childs"] for space in spaces]
    if trace:
        for space, own in zip(spaces, given):
            space["get_childs"] = log.watched(own)
    results = []

    def run(*call_args):
        result = function(*call_args)
        results.append(result)
        return result

    try:
        returned, error, seconds = call_observed(run, args)
    finally:
        for space, own in zip(spaces, given):
            space["get_childs"] = own
    observation = {"error": error, "seconds": seconds}
    if results:
        observation.update(_triple(results[0], returned))
    if trace:
        observation["expansions"] = log.count
        observation["expanded"] = log.notations()
    return observation


def _triple(result, returned):
    """(choice, utility, nodes_visited) as {choice, points, nodes}; anything else as `returned`."""
    try:
        if isinstance(result, (tuple, list)) and len(result) == 3:
            choice, points, nodes = result
            return {"choice": board_label(choice), "points": plain(points), "nodes": plain(nodes)}
    except BaseException:  # noqa: BLE001 - a student's sequence may raise anything
        pass
    return {"returned": returned}


def observe(namespace, spaces, call):
    function = namespace.get(call["function"])
    board = RULES.parse_board(call["board"])
    if call["function"] == "game_over":
        returned, error, seconds = call_observed(function, (board,))
        return {"returned": returned, "error": error, "seconds": seconds}
    return observe_search(spaces, function, (board, *call["args"]), call.get("trace", False))


def explainable(error):
    """Errors whose cause may be a line of the skeleton left as it was."""
    return bool(error) and error.get("type") in ("TypeError", "NameError", "UnboundLocalError")


def handle(namespace, request):
    """Run the calls of one case in order."""
    spaces = student_namespaces(namespace)
    install_helpers(spaces)
    observations = []
    assignments = None  # looked up once per request, and only if a call needs them
    for call in request["calls"]:
        observation = observe(namespace, spaces, call)
        if explainable(observation["error"]):
            if assignments is None:
                assignments = none_assignments(spaces)
            observation["none_assignments"] = assignments
        observations.append(observation)
        error = observation["error"]
        if error and (error["exit"] or error["memory"]):
            break
    return {"op": "case", "id": request["id"], "calls": observations}
