"""Watching a lab folder's game module: what a search reads through it, in order.

The same code runs on both sides of the process boundary, so a student's search and the
references are observed alike: in the student's process (shipped there as source text,
module `_abgrade_generic_watch`, beside the game module itself) and in the grader, around
the reference, its accepted variants and the bug replays. Stdlib only; it never judges.

A game module declares (README, "Write your own lab"):

- `WATCH`: name -> "state" or "result". A name is a function of the module, a method
  (`"Class.method"`) or a mapping (a dict global). A *read* is a call that returned (or a
  mapping lookup, `m[key]` or `m.get(key)`, that found its key); "state" records the
  call's first argument (the key, or `self`), "result" the value it returned (a state it
  generated).
- `REPEATS`: False (default): a state read again is no new read, so the reads are the
  distinct states in the order of their first read; True: every read counts.
- `GLOBALS`: names set in the caller's module before every call, replacing its own.
- `MODULE`: the name the student's code imports the game by (default "game").
- optional `setup(**world)`, `encode(state)` and `decode(data)`.

Every read is recorded as a *label*: the state's encoding as compact JSON (a string state
as itself), cut to LABEL_CHARS with a hash of the whole, so that labels stay short, equal
states get equal labels and different ones (almost surely) different labels.
"""

import hashlib
import types

READ_LIMIT = 20000  # labels kept per call; the counts stay exact
LABEL_CHARS = 120
ROLES = ("state", "result")

DEFAULTS = {
    "WATCH": {},
    "REPEATS": False,
    "GLOBALS": (),
    "MODULE": "game",
    "STATE": "state",
    "SEARCH": None,
    "CHOOSE": None,
}


def declared(module, name):
    """The game module's declaration `name`, or its default."""
    return getattr(module, name, DEFAULTS[name])


def _identity(value):
    return value


class Recorder:
    """The reads of one call, active only while the call runs (a read at import, or the
    grader's own use of the game, is nobody's)."""

    def __init__(self, label, repeats):
        self.label = label
        self.repeats = repeats
        self.active = False
        self.reset()

    def reset(self):
        self.reads = []
        self.seen = set()
        self.counts = {}
        self.truncated = False

    def read(self, name, state):
        if not self.active:
            return
        self.counts[name] = self.counts.get(name, 0) + 1
        label = self.label(state)
        if not self.repeats:
            if label in self.seen:
                return
            self.seen.add(label)
        if len(self.reads) < READ_LIMIT:
            self.reads.append(label)
        else:
            self.truncated = True

    def report(self):
        return {"reads": list(self.reads), "counts": dict(self.counts), "truncated": self.truncated}


def watched_function(recorder, name, function, role):
    """`function`, recording each call that returns (see the module docstring)."""

    def watched(*args, **kwargs):
        result = function(*args, **kwargs)
        recorder.read(name, result if role == "result" else (args[0] if args else None))
        return result

    watched.__name__ = getattr(function, "__name__", name)
    watched.__qualname__ = getattr(function, "__qualname__", name)
    watched.__doc__ = getattr(function, "__doc__", None)
    watched.__module__ = getattr(function, "__module__", None) or name
    return watched


class WatchedMapping(dict):
    """A game mapping that records each key found by `m[key]` or `m.get(key)` (membership
    tests, absent keys and iteration are no reads), and hands out a fresh list for a list
    value, so that a caller who sorts or pops it can't change later reads."""

    def __init__(self, data, recorder, name):
        dict.__init__(self, data)
        self._recorder = recorder
        self._name = name

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        self._recorder.read(self._name, key)
        return list(value) if type(value) is list else value

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        return default


class Watch:
    """A game module made observable, once: its watched functions and methods wrapped in
    place (so that `from game import f` at import time gets the wrapper), its globals as
    shipped kept aside. `begin` puts them back before every call, sets the case up and
    wraps the watched mappings afresh; `install` hands the game to the caller's module."""

    def __init__(self, module, dumps):
        self.module = module
        self.name = declared(module, "MODULE")
        self._dumps = dumps
        self._encode = getattr(module, "encode", None) or _identity
        self._decode = getattr(module, "decode", None) or _identity
        self._setup = getattr(module, "setup", None)
        self.recorder = Recorder(self.label, bool(declared(module, "REPEATS")))
        self.globals = tuple(declared(module, "GLOBALS"))
        self._mappings = []
        self._methods = []
        namespace = module.__dict__
        for name, role in dict(declared(module, "WATCH")).items():
            owner, _, method = name.partition(".")
            if method:
                cls = namespace[owner]
                wrapper = watched_function(self.recorder, name, cls.__dict__[method], role)
                setattr(cls, method, wrapper)
                self._methods.append((cls, method, wrapper))
            elif isinstance(namespace.get(name), dict):
                self._mappings.append(name)
            else:
                namespace[name] = watched_function(self.recorder, name, namespace[name], role)
        self._pristine = dict(namespace)

    def label(self, state):
        """The state's label (see the module docstring); never raises."""
        try:
            data = self._encode(state)
            text = data if type(data) is str else self._dumps(data, sort_keys=True, separators=(",", ":"))
        except BaseException as exc:  # noqa: BLE001 - a caller may read anything
            text = f"<unencodable {type(state).__name__}: {type(exc).__name__}>"
        if len(text) > LABEL_CHARS:
            digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]
            text = text[: LABEL_CHARS - 14] + "\u2026#" + digest
        return text

    def decode(self, data):
        return self._decode(data)

    def begin(self, world):
        """Before a call: the game's globals and watched methods as shipped, `setup(**world)`
        (for a case that has a world), fresh watched mappings, and an empty record."""
        namespace = self.module.__dict__
        namespace.clear()
        namespace.update(self._pristine)
        for cls, method, wrapper in self._methods:
            setattr(cls, method, wrapper)
        if self._setup is not None and world is not None:
            self._setup(**world)
        for name in self._mappings:
            namespace[name] = WatchedMapping(namespace[name], self.recorder, name)
        self.recorder.reset()

    def install(self, namespace):
        """The game in the caller's module: every GLOBALS name, and every name bound to the
        game module or to one of its functions or classes (an import, in a notebook maybe
        of another copy of the module) rebound to this one."""
        game = self.module.__dict__
        for name in self.globals:
            namespace[name] = game[name]
        for key, value in list(namespace.items()):
            try:
                if type(value) is types.ModuleType and value.__name__ == self.name:
                    namespace[key] = self.module
                elif getattr(value, "__module__", None) == self.name:
                    own = getattr(value, "__name__", None)
                    if type(own) is str and own in game and not own.startswith("_"):
                        namespace[key] = game[own]
            except BaseException:  # noqa: BLE001 - a caller's object may raise on any attribute
                pass

    def start(self):
        self.recorder.active = True

    def stop(self):
        self.recorder.active = False
        return self.recorder.report()
