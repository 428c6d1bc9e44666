"""The generic observer: loads the submission, reports its API, then serves case requests.

Runs in the student's process. Everything the student could tamper with later (json,
print, math.inf, sys.stdout) is bound here before the submission runs, and nothing it
prints travels on the private channel. In a notebook kernel the student's cells ran
first, so json is imported afresh from the standard library (see `_pristine_json`).
"""

import collections
import functools
import importlib.util
import inspect
import linecache
import os
import signal
import sys
import time


def _json_names():
    return [name for name in sys.modules if name in ("json", "_json") or name.startswith("json.")]


def _pristine_json():
    """(dumps, loads) as the standard library ships them, whatever a notebook cell did
    to `json` before the observer started (replaced it in sys.modules, patched
    json.dumps): a fresh copy is imported, then the student's modules are put back.
    Raises ImportError with the reason when json can't be made to work here."""
    saved = {name: sys.modules.pop(name) for name in _json_names()}
    try:
        import json as fresh

        dumps, loads = fresh.dumps, fresh.loads
        sample = {"a": [1.5, None, "\u00e9"]}
        if loads(dumps(sample)) != sample:
            raise ImportError("json.loads(json.dumps(...)) does not give the data back")
    except BaseException as exc:  # noqa: BLE001 - RecursionError from a patched module too
        raise ImportError(
            "the standard module json does not work in this process (%s: %s); "
            "did the notebook replace or patch json?" % (type(exc).__name__, exc)
        ) from None
    finally:
        for name in _json_names():
            del sys.modules[name]
        sys.modules.update(saved)
    return dumps, loads


_dumps, _loads = _pristine_json()
_perf = time.perf_counter
_write = os.write
_isinstance = isinstance
INF = float("inf")
STUDENT_DIRS = []  # type: list[str]  # frames from files under these folders belong to the student
FRAME_NAMES = {}  # type: dict[str, str]  # file name -> how feedback names it (e.g. a notebook cell's file -> "cell In [4]")


class Channel:
    """JSON lines over two private pipes (never stdout, never pickle)."""

    def __init__(self, reader, write_fd):
        self._reader = reader
        self._fd = write_fd

    def receive(self):
        line = self._reader.readline()
        if not line:
            return None
        return _loads(line)

    def send(self, message):
        data = (_dumps(message, default=_fallback) + "\n").encode("utf-8", "replace")
        view = memoryview(data)
        while view:
            written = _write(self._fd, view)
            view = view[written:]


def _fallback(obj):
    return {"type": "object", "repr": "<unserialisable>"}


def safe_repr(value, limit=200):
    """repr() that survives hostile __repr__ methods and never returns more than `limit` chars."""
    try:
        text = repr(value)
        if type(text) is not str:
            text = "<repr did not return a string>"
    except BaseException as exc:  # noqa: BLE001 - student code may raise anything
        text = "<repr failed: %s>" % type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def plain(value, depth=0):
    """Turn a student's value into plain JSON data. Objects never cross as objects: an
    instance whose __eq__ always answers True arrives as its type name and repr."""
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value if kind is not str else value[:1000]
    if kind is int:
        return value if -(10**15) < value < 10**15 else {"type": "int", "repr": safe_repr(value, 60)}
    if kind is float:
        return value
    if kind.__module__ == "numpy":
        if kind.__name__ == "ndarray" and depth < 3:
            try:
                return {"type": "ndarray", "items": plain(value.tolist(), depth + 1)}
            except BaseException:  # noqa: BLE001
                pass
        elif hasattr(value, "item") and kind.__name__ != "ndarray":
            try:
                item = value.item()
                if type(item) in (int, float, bool):
                    return item
            except BaseException:  # noqa: BLE001
                pass
    if kind in (list, tuple) and depth < 4 and len(value) <= 10000:
        return {"type": kind.__name__, "items": [plain(v, depth + 1) for v in value]}
    return {"type": kind.__qualname__ if type(kind.__qualname__) is str else "object", "repr": safe_repr(value)}


MAX_FRAMES = 12


def student_frames(tb):
    """The last student frames of a traceback, cheaply: a runaway recursion has 10,000
    frames and formatting them all would cost more than the call itself."""
    last = collections.deque(maxlen=MAX_FRAMES)  # type: collections.deque[tuple[str, int, str]]
    while tb is not None:
        code = tb.tb_frame.f_code
        if any(code.co_filename.startswith(folder) for folder in STUDENT_DIRS):
            last.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    frames = []  # type: list[list]  # [shown file, line, function, text, repeats]
    for filename, line, function in last:
        shown = FRAME_NAMES.get(filename) or os.path.basename(filename)
        text = linecache.getline(filename, line).strip()[:200]
        if frames and frames[-1][:3] == [shown, line, function]:
            frames[-1][4] += 1  # the same frame again: count it instead of repeating it
        else:
            frames.append([shown, line, function, text, 1])
    return frames


def error_record(exc, tb=None):
    """An exception as data, its traceback trimmed to the student's own frames."""
    tb = tb if tb is not None else exc.__traceback__
    try:
        frames = student_frames(tb)
    except BaseException:  # noqa: BLE001
        frames = []
    kind = type(exc)
    record = {
        "type": kind.__name__ if type(kind.__name__) is str else "Exception",
        "message": safe_repr(exc.args[0] if len(exc.args) == 1 else exc.args, 500) if exc.args else "",
        "frames": frames,
        "recursion": _isinstance(exc, RecursionError),
        "memory": _isinstance(exc, MemoryError),
        "exit": _isinstance(exc, SystemExit),
    }
    try:
        if _isinstance(exc, OSError) and type(exc.filename) is str:
            # which file could not be read or written says why; the folder it was in is the grader's
            number = exc.errno if type(exc.errno) is int else "?"
            why = exc.strerror[:200] if type(exc.strerror) is str else "error"
            said = "[Errno %s] %s: %s" % (number, why, os.path.basename(exc.filename))
            record["message"] = safe_repr(said, 500)
    except BaseException:  # noqa: BLE001 - a student's own OSError subclass may raise anything
        pass
    if _isinstance(exc, SyntaxError):
        record["line"] = exc.lineno
        record["text"] = (exc.text or "").rstrip()[:200]
        record["message"] = str(exc.msg)[:300]
        record["file"] = os.path.basename(exc.filename or "")
    return record


def call_observed(function, args):
    """Call student code once; return (returned, error, seconds). Never raises."""
    start = _perf()
    try:
        returned = function(*args)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and friends are observations too
        return None, error_record(exc), _perf() - start
    seconds = _perf() - start
    try:
        return plain(returned), None, seconds
    except BaseException as exc:  # noqa: BLE001
        return None, error_record(exc), seconds


def describe_api(namespace, api):
    """For each required function: is it defined, callable, and callable with its arity?"""
    report = {}
    for name, arity in api.items():
        entry = {"defined": name in namespace}  # type: dict[str, object]
        value = namespace.get(name)
        if entry["defined"]:
            entry["callable"] = callable(value)
            code = getattr(value, "__code__", None)
            entry["line"] = getattr(code, "co_firstlineno", None)
            try:
                signature = inspect.signature(value)
                entry["signature"] = name + str(signature)[:200]
                signature.bind(*range(arity))
                entry["arity_ok"] = True
            except TypeError:
                entry["arity_ok"] = False
            except (ValueError, BaseException):  # noqa: BLE001 - builtins without signature
                entry["arity_ok"] = entry["callable"]
        report[name] = entry
    return report


# the types looked into, taken from objects of our own (a notebook cell may have replaced `types`)
_FUNCTION = type(_fallback)
_MODULE = type(sys)
_METHOD = type(Channel(None, None).send)
_LRU_CACHE = getattr(functools, "_lru_cache_wrapper", None)
_PARTIAL = getattr(functools, "partial", None)
_UNWRAP_LIMIT = 8  # decorators followed from a name to the function it wraps
SPACE_LIMIT = 64  # namespaces followed from the student's (a bound against a crafted chain)
_REAL_DIRS = {}  # type: dict[str, str]  # a student folder -> its real path
_IN_STUDENT_DIR = {}  # type: dict[str, bool]  # a file name -> whether it is in a student folder


def _in_student_dir(path):
    """Whether `path` names a file in a student folder (the work folder), links resolved:
    IPython's %run compiles a file under its real path. A name in angle brackets is no
    file (`<abgrade ...>`: the grader's modules, `<string>`), though the kernel's working
    folder is the student's."""
    if type(path) is not str or path.startswith("<"):
        return False
    known = _IN_STUDENT_DIR.get(path)
    if known is None:
        for folder in STUDENT_DIRS:
            if folder not in _REAL_DIRS:
                _REAL_DIRS[folder] = os.path.realpath(folder)
        real = os.path.realpath(path)
        known = any(real.startswith(_REAL_DIRS[folder] + os.sep) for folder in STUDENT_DIRS)
        _IN_STUDENT_DIR[path] = known
    return known


def _functions_in(value):
    """The plain functions `value` is or wraps (a decorator's `__wrapped__`, an lru_cache,
    a partial, a bound method), read without calling anything: only objects of these known types are
    looked into, so no student `__getattr__` or property runs."""
    found = []
    for _ in range(_UNWRAP_LIMIT):
        kind = type(value)
        if kind is _FUNCTION:
            found.append(value)
            value = value.__dict__.get("__wrapped__")
        elif kind is _LRU_CACHE:
            value = value.__dict__.get("__wrapped__")
        elif kind is _PARTIAL:
            value = value.func
        elif kind is _METHOD:  # `alphabeta = Solver().alphabeta`
            value = value.__func__
        else:
            break
    return found


def _module_dict(namespace):
    """The module registered in sys.modules whose globals `namespace` is, or None."""
    name = dict.get(namespace, "__name__")
    module = sys.modules.get(name) if type(name) is str else None
    if type(module) is _MODULE and module.__dict__ is namespace:
        return module
    return None


def _student_space(namespace, function):
    """Whether `namespace`, the globals of `function`, is the student's: the module of a
    file in the work folder (`import sol` of a file a cell wrote), or an unregistered
    namespace of code compiled from such a file (`%run sol.py`) or from a string
    (`exec(source, namespace)`: "<string>"), or of a file and without a `__name__` (what
    `%run` leaves of a file's namespace, wherever the file is). Never a library's or the
    grader's module (the grader's are "<abgrade ...>")."""
    module = _module_dict(namespace)
    if module is not None:
        return _in_student_dir(dict.get(namespace, "__file__"))
    filename = function.__code__.co_filename
    if type(filename) is not str:
        return False
    if filename.startswith("<"):  # only exec's own default name: a library names its
        return filename == "<string>"  # generated code ("<__array_function__ internals>")
    # %run takes `__name__` out of the file's namespace once it ran (a module always has
    # one): so is a file the notebook wrote outside its folder (`%run /tmp/sol.py`)
    return _in_student_dir(filename) or "__name__" not in namespace


def student_namespaces(namespace):
    """The global namespaces the student's functions run in: `namespace` first (a `.py`'s
    module, a notebook's user namespace), then every other one a function found from it
    has as its globals. In a notebook a function may live elsewhere: `%run sol.py` runs
    the file in a namespace of its own and copies the names over, `from sol import f`
    brings f from the module `sol`, `exec(source, ns)` defines it in `ns`; the globals
    an observer sets (the lab's game, its watched mappings) must reach the function
    where it looks them up. Followed from module to module (a helper module of sol's),
    at most SPACE_LIMIT; a `.py` or a notebook that defines everything in its cells has
    only `namespace`. Nothing of the student's runs while they are found."""
    spaces = [namespace]
    seen = {id(namespace)}
    position = 0
    while position < len(spaces) and len(spaces) < SPACE_LIMIT:
        for value in list(dict.values(spaces[position])):
            if type(value) is _MODULE:
                inner = value.__dict__
                if id(inner) not in seen and _module_dict(inner) is value and _in_student_dir(inner.get("__file__")):
                    seen.add(id(inner))
                    spaces.append(inner)
                continue
            for function in _functions_in(value):
                inner = function.__globals__
                if id(inner) not in seen and _student_space(inner, function):
                    seen.add(id(inner))
                    spaces.append(inner)
        position += 1
    return spaces


def set_global(spaces, name, value):
    """Bind `name` to `value` in every one of the student's namespaces."""
    for space in spaces:
        space[name] = value


def home_of(spaces, function):
    """The namespace of `spaces` the student's `function` runs in (its globals, through
    its decorators), else the first: where its `global` statements write."""
    for found in _functions_in(function):
        for space in spaces:
            if space is found.__globals__:
                return space
    return spaces[0]


_IMPORTING = [False]  # whether the grader's interrupt may still stop the import


def _interrupt(signum, frame):
    """SIGINT from the grader: the import ran past its time limit. It stops the import
    with a KeyboardInterrupt, once; an interrupt that comes after the import is ignored
    (it must not stop the observer)."""
    if _IMPORTING[0]:
        _IMPORTING[0] = False
        raise KeyboardInterrupt


def _compiled(loader, module_name, path):
    """The submission's code object. A file that can't be compiled is a SyntaxError on every
    Python: a null byte raises ValueError on 3.11.0-3.11.3 (Debian 12's python3 is 3.11.2)
    and SyntaxError from 3.11.4 on, and either way not a line of the file ran."""
    try:
        return loader.get_code(module_name)
    except ValueError as exc:
        error = SyntaxError(str(exc))
        error.filename = path
        raise error from None


def load_python(path, module_name):
    """Import the submission file as a module; return (namespace, error_record or None).
    An import the grader interrupts (its load limit) returns what it defined so far, with
    the KeyboardInterrupt as its error, as a notebook cell does."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:  # only for a file name without a Python suffix
        raise ImportError("cannot import %r: no loader for this file name" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    signal.signal(signal.SIGINT, _interrupt)
    try:
        _IMPORTING[0] = True
        try:
            exec(_compiled(spec.loader, module_name, path), module.__dict__)  # what exec_module does
        finally:  # an interrupt that arrives in here is still raised inside the outer try
            _IMPORTING[0] = False
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import is a graded result
        return module.__dict__, error_record(exc)
    return module.__dict__, None


def _flush_output(streams):
    for stream in streams:
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a student may have closed or replaced it
            pass


def _name_cells(cells):
    """In a notebook kernel, map each cell's compiled file name to "cell In [N]" (as Jupyter numbers it)."""
    try:
        compiler = get_ipython().compile  # type: ignore[name-defined]  # noqa: F821 - defined inside IPython
        for number, source in cells:
            FRAME_NAMES[compiler.get_code_name(source, source, 0)] = "cell In [%d]" % number
    except BaseException:  # noqa: BLE001 - plain file names are fine too
        pass


def serve(channel, setup, handler, namespace=None, extra=None):
    """Load the submission (or take the namespace a notebook kernel already filled),
    report what was found (plus `extra`), then answer case requests until EOF. The original
    stdout/stderr are flushed after every step, so a kill loses no output."""
    streams = (sys.stdout, sys.stderr)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process: input() fails at once
    sys.setrecursionlimit(int(setup.get("recursion_limit", 10000)))
    start = _perf()
    error = None
    STUDENT_DIRS.append(setup["student_dir"])
    _name_cells(setup.get("cells", ()))
    if namespace is None:
        namespace, error = load_python(setup["submission"], setup["module_name"])
    _flush_output(streams)
    nonce = setup.get("nonce")
    channel.send(
        {
            "op": "loaded",
            "nonce": nonce,
            "error": error,
            "api": describe_api(namespace, setup["api"]),
            "seconds": _perf() - start,
            **(extra or {}),
        }
    )
    while True:
        request = channel.receive()
        if request is None:
            return
        reply = handler(namespace, request)
        reply["nonce"] = nonce
        _flush_output(streams)
        channel.send(reply)
