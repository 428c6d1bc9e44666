"""The lab folder's own code, run in the grader's process only: the reference solution,
its accepted variants and the bug replays (each a `Run`, in the student API, watched
exactly as the student's search is), and the game's hooks (`GameHooks`).

A Run has a game module of its own, so its `import <game>` and its state are its own; a
call of a Run is observed as the student process observes one (watch.py) and its record
goes through the same sanitiser, so the judges compare like with like. Runs are cached
per (world, call) and locked: plans and judges ask from two threads.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ...checks.show import show_call
from ...observations import FieldKind, sanitize_call
from ...probe.runtime import error_record, plain
from .declarations import WINDOW, Declarations, Signature, top_level_lines
from .files import BUGS, LabError, LabFiles, SourceFile
from .modules import describe, error_line, load_module
from .steps import StepsExhausted, bounded_steps
from .watch import Watch

OBSERVED_FIELDS: dict[str, FieldKind] = {"reads": "labels"}
TRACE_LIMIT = 2000  # calls of the search kept for a picture
FULL_WINDOW = (-math.inf, math.inf)
# Python lines the hook `smaller` may run to give one candidate (steps.py): far more than
# cutting a random case takes, few enough that a hook that loops is said in about a second
SMALLER_STEPS = 1_000_000


def to_json(value: Any) -> Any:
    """`value` as plain JSON data (tuples become lists); TypeError/ValueError if it has none."""
    return json.loads(json.dumps(value, allow_nan=True))


@dataclass(frozen=True)
class Call:
    """One call of a student function: its name and positional arguments as JSON, and which
    of them hold a state (decoded by the game before the call)."""

    function: str
    args: tuple[Any, ...]
    decode: tuple[int, ...]

    @classmethod
    def of(cls, signature: Signature, call: dict[str, Any], state: str, window: tuple[float, float] | None) -> Call:
        args = signature.positions(call, window)
        return cls(signature.name, tuple(args), tuple(i for i, p in enumerate(signature.params) if p == state))

    def request(self) -> dict:
        return {"function": self.function, "args": list(self.args), "decode": list(self.decode)}

    def shown(self) -> str:
        return show_call(self.function, *(_short(arg) for arg in self.args))

    def key(self) -> str:
        return json.dumps([self.function, self.args], sort_keys=True, allow_nan=True)


def _short(arg: Any) -> Any:
    """An argument as feedback shows it: a long state as the start of its JSON."""
    text = json.dumps(arg, allow_nan=True) if not isinstance(arg, str) else arg
    if len(text) <= 80:
        return arg
    return _Shown(text[:70] + " …")


class _Shown:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Run:
    """One implementation of the student API from the lab folder. `strict`: an exception in
    it is the instructor's (a LabError at its line; the reference and its variants); else
    it is observed as a student's would be (a bug replay)."""

    def __init__(self, files: LabFiles, source: SourceFile, declarations: Declarations, strict: bool) -> None:
        self.source, self.declarations, self.strict = source, declarations, strict
        # a file's name, or for one way of a bug written several ways (bugs/NAME/WAY.py) "NAME/WAY"
        ways = source.name.startswith(f"{BUGS}/") and source.name.count("/") == 2
        self.name = (source.name.removeprefix(f"{BUGS}/") if ways else source.name.rsplit("/", 1)[-1]).removesuffix(
            ".py"
        )
        self.game = load_module(files.game, declarations.module)
        self.watch = Watch(self.game, json.dumps)
        module = f"_abgrade_lab_{self.name.replace('/', '__')}"
        self.module = load_module(source, module, {declarations.module: self.game})
        self.namespace = self.module.__dict__
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str, bool], dict] = {}

    def defines(self, function: str) -> bool:
        return callable(self.namespace.get(function))

    def missing(self, functions: list[str]) -> LabError | None:
        """A LabError naming the first of `functions` this file does not define."""
        for function in functions:
            if not self.defines(function):
                shape = self.declarations.api[function].shape
                return LabError(self.source.shown, None, function, f"missing: the function {shape} (STUDENT_API)")
        return None

    def observe(self, world: dict | None, call: Call, trace: bool = False) -> dict:
        """What the student process would send for `call` of this implementation."""
        key = (json.dumps(world, sort_keys=True, allow_nan=True), call.key(), trace)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._observe(world, call, trace)
            return self._cache[key]

    def _observe(self, world: dict | None, call: Call, trace: bool) -> dict:
        watch, namespace = self.watch, self.namespace
        try:
            watch.begin(world)
            watch.install(namespace)
            args = tuple(watch.decode(arg) if i in call.decode else arg for i, arg in enumerate(call.args))
        except (Exception, SystemExit) as exc:
            raise LabError(
                self.source.shown, None, "game", f"setting up {call.shown()} failed: {describe(exc)}"
            ) from None
        function = namespace[call.function]
        tracer = Tracer(self, call.function) if trace else None
        error = None
        watch.start()
        try:
            returned = (tracer.run if tracer else function)(*args)
        except (Exception, SystemExit) as exc:
            if self.strict:
                raise LabError(
                    self.source.shown,
                    error_line(exc, self.source),
                    call.function,
                    f"{call.shown()} raised {describe(exc)}",
                ) from None
            returned, error = None, error_record(exc)
        finally:
            reads = watch.stop()
            if tracer is not None:
                tracer.restore()
        observation = sanitize_call({**reads, "returned": plain(returned), "error": error}, OBSERVED_FIELDS)
        if tracer is not None:
            observation["trace"] = tracer.nodes
        return observation


class Tracer:
    """The reference's own recursive calls of the search, for pictures: each as [parent
    index, state label, alpha, beta, returned] in the order they were made."""

    def __init__(self, run: Run, function: str) -> None:
        self.run_of, self.function = run, function
        self.original = run.namespace[function]
        signature = run.declarations.api[function]
        self.params = signature.params
        self.nodes: list[list[Any]] = []
        self.stack: list[int] = []
        run.namespace[function] = self.traced

    def run(self, *args: Any) -> Any:
        return self.traced(*args)

    def traced(self, *args: Any, **kwargs: Any) -> Any:
        if len(self.nodes) >= TRACE_LIMIT:
            return self.original(*args, **kwargs)
        values = dict(zip(self.params, args), **kwargs)
        state = values.get(self.run_of.declarations.state)
        index = len(self.nodes)
        alpha, beta = (values.get(p) for p in WINDOW)
        self.nodes.append([self.stack[-1] if self.stack else None, self.run_of.watch.label(state), alpha, beta, None])
        self.stack.append(index)
        try:
            result = self.original(*args, **kwargs)
        finally:
            self.stack.pop()
        self.nodes[index][4] = plain(result)
        return result

    def restore(self) -> None:
        self.run_of.namespace[self.function] = self.original


class HookError(LabError):
    """The course's hook misused, said in words that hold nothing of the case (they may be
    shown where the case is hidden); `detail`: the same line with the whole reason (the
    problem given as `detail`), for where it is not."""

    def __init__(self, file: str, line: int | None, field: str, problem: str, detail: str | None = None) -> None:
        super().__init__(file, line, field, problem)
        self.detail = str(LabError(file, line, field, detail)) if detail else str(self)


class GameHooks:
    """The game's hooks (declarations.py), on a game module of their own, set up for the
    case before each use. A hook that raises is the instructor's: a LabError at its line."""

    def __init__(self, files: LabFiles, declarations: Declarations) -> None:
        self.source, self.declarations = files.game, declarations
        self.module = load_module(files.game, declarations.module)
        self.watch = Watch(self.module, json.dumps)
        self._lock = threading.RLock()

    def has(self, hook: str) -> bool:
        return hook in self.declarations.hooks

    def error(self, hook: str, problem: str, detail: str | None = None) -> HookError:
        """The course's error in one of the game's hooks, at the line that defines it."""
        return HookError(self.source.shown, top_level_lines(self.source).get(hook), hook, problem, detail)

    def label(self, state: Any) -> str:
        with self._lock:
            return self.watch.label(state)

    def call(self, hook: str, world: dict | None, *args: Any) -> Any:
        with self._lock:
            try:
                self.watch.begin(world)
                return getattr(self.module, hook)(*args)
            except (Exception, SystemExit) as exc:
                raise LabError(self.source.shown, error_line(exc, self.source), hook, describe(exc)) from None

    def decoded(self, world: dict | None, call: dict[str, Any]) -> dict[str, Any]:
        """The case's call (JSON) with its state decoded, as the hooks take it."""
        state = self.declarations.state
        if not self.has("decode"):
            return dict(call)
        return dict(call, **{state: self.call("decode", world, call[state])})

    def encoded(self, world: dict | None, call: Any, hook: str) -> dict[str, Any]:
        """A call a hook returned (its state the game's own object) as JSON."""
        state = self.declarations.state
        if not isinstance(call, dict) or state not in call:
            raise LabError(
                self.source.shown, None, hook, f"must return calls as dicts parameter -> value with {state!r}"
            )
        if self.has("encode"):
            call = dict(call, **{state: self.call("encode", world, call[state])})
        try:
            return to_json(call)
        except (TypeError, ValueError) as exc:
            raise LabError(self.source.shown, None, hook, f"returned a call that is not JSON data ({exc})") from None

    def probes(self, world: dict | None, call: dict[str, Any]) -> list[dict[str, Any]]:
        """Where the bound specification is tried: the hook's calls, else the case's own."""
        if not self.has("probes"):
            return [call]
        found = self.call("probes", world, self.decoded(world, call))
        if not isinstance(found, (list, tuple)):
            raise LabError(self.source.shown, None, "probes", "must return a list of calls")
        return [self.encoded(world, probe, "probes") for probe in found]

    def after(self, world: dict | None, call: dict[str, Any], move: Any) -> dict[str, Any] | None:
        """The search call at the state after `move` (a student's answer: anything), or None
        when the game says it is no move here."""
        with self._lock:
            try:
                self.watch.begin(world)
                child = self.module.after(self.decoded(world, call), move)
            except (Exception, SystemExit):
                return None
            return None if child is None else self.encoded(world, child, "after")

    def tree(self, world: dict | None, call: dict[str, Any]) -> dict[str, list[str]] | None:
        """The whole game tree below the call's state, as labels (None without the hook)."""
        if not self.has("tree"):
            return None
        found = self.call("tree", world, self.decoded(world, call))
        if not isinstance(found, dict):
            raise LabError(self.source.shown, None, "tree", "must return a dict state -> list of child states")
        return {self.label(node): [self.label(child) for child in children] for node, children in found.items()}

    def random_case(self, rng: Any, settings: dict[str, Any]) -> tuple[dict | None, dict[str, Any]]:
        """A hidden case from the game's generator: (world, call) as JSON."""
        found = self._random(rng, settings)
        if not isinstance(found, dict) or not isinstance(found.get("call"), dict):
            raise LabError(self.source.shown, None, "random_case", 'must return {"call": {...}} and maybe "world"')
        try:
            world = to_json(found.get("world"))
        except (TypeError, ValueError) as exc:
            raise LabError(
                self.source.shown, None, "random_case", f"returned a world that is not JSON ({exc})"
            ) from None
        return world, self.encoded(world, found["call"], "random_case")

    def _random(self, rng: Any, settings: dict[str, Any]) -> Any:
        with self._lock:
            try:
                self.watch.begin(None)
                return self.module.random_case(rng, **settings)
            except (Exception, SystemExit) as exc:
                raise LabError(self.source.shown, error_line(exc, self.source), "random_case", describe(exc)) from None

    def smaller(self, world: dict | None, call: dict[str, Any]) -> Iterator[tuple[dict | None, dict[str, Any]]]:
        """The game's `smaller(case)` candidates for the case (world, call), each as JSON
        (world, call) as random_case's are, pulled one at a time (a generator runs only as
        far as shrinking goes), each pull with the case's world set up again and at most
        SMALLER_STEPS lines. Anything wrong is a LabError at the hook."""
        case = {"world": world, "call": self.decoded(world, call)}
        found = self._bounded_smaller(world, lambda: self.module.smaller(case))
        if isinstance(found, (dict, str, bytes)) or not isinstance(found, Iterable):
            raise self.error("smaller", f"must yield (or return a list of) cases, not {type(found).__name__}")
        candidates = iter(found)
        while True:
            try:
                item = self._bounded_smaller(world, lambda: next(candidates))
            except StopIteration:
                return
            yield self.smaller_case(item)

    def smaller_case(self, item: Any) -> tuple[dict | None, dict[str, Any]]:
        """One candidate the hook gave, as JSON (world, call), or a LabError at the hook."""
        if not isinstance(item, dict) or not isinstance(item.get("call"), dict):
            kind = type(item).__name__
            raise self.error("smaller", f'must yield cases {{"call": {{...}}}} (and maybe "world"), not a {kind}')
        world = item.get("world")
        if world is not None and (not isinstance(world, dict) or not self.has("setup")):
            raise self.error("smaller", "yielded a world, which must be a dict of setup(**world)'s arguments")
        try:
            world = to_json(world)
        except (TypeError, ValueError) as exc:
            raise self.error("smaller", f"yielded a world that is not JSON ({exc})") from None
        return world, self.encoded(world, item["call"], "smaller")

    def _bounded_smaller(self, world: dict | None, step: Callable[[], Any]) -> Any:
        """`step()` (the hook, or its next candidate) with `world` set up, at most
        SMALLER_STEPS lines; StopIteration passes, anything else is a LabError at the hook."""
        with self._lock:
            try:
                self.watch.begin(world)
                with bounded_steps(SMALLER_STEPS):
                    return step()
            except StopIteration:
                raise
            except StepsExhausted as exc:
                raise self.error("smaller", str(exc)) from None
            except (Exception, SystemExit) as exc:
                line = error_line(exc, self.source) or top_level_lines(self.source).get("smaller")
                said = f"raised {type(exc).__name__}"
                raise HookError(self.source.shown, line, "smaller", said, describe(exc)) from None
