"""What a lab folder's game module declares (README, "Write your own lab"), checked once in
the grader with a LabError at game.py's line for anything wrong:

- `STUDENT_API`: function -> how it is called, e.g. `{"alphabeta": "alphabeta(node, alpha,
  beta, max_player)"}`: the functions the student writes, each parameter by name;
- `SEARCH`: the one of them judged on values, reads and bounds (it has `alpha` and `beta`);
- `CHOOSE` (optional): the one that returns a move (with the hook `after`);
- `STATE` (default "state"): the parameter that holds the state (decoded with `decode`);
- `WATCH`, `REPEATS`, `GLOBALS`, `MODULE`, `setup`, `encode`, `decode`: how the game is
  watched (see watch.py);
- hooks the grader calls in its own process: `probes(call)` (where the bound specification
  is tried; default the case's own call), `after(call, move)` (the search call at the state
  after a move), `tree(call)` (the whole game tree below a state: pruned sets and pictures),
  `random_case(rng, **settings)` (a hidden case), `smaller(case)` (cases each smaller than
  a failed hidden case, to shrink it: smaller.py).
"""

from __future__ import annotations

import ast
import inspect
import sys
from dataclasses import dataclass
from typing import Any

from .files import LabError, SourceFile
from .watch import DEFAULTS, ROLES

HOOKS = ("setup", "encode", "decode", "probes", "after", "tree", "random_case", "smaller")
WINDOW = ("alpha", "beta")


@dataclass(frozen=True)
class Signature:
    """A student function: its name, its parameters in order, and the shape students see."""

    name: str
    params: tuple[str, ...]
    shape: str

    def positions(self, call: dict[str, Any], window: tuple[float, float] | None) -> list[Any]:
        """The positional arguments for `call` (parameter -> value) and the window."""
        values = dict(call, **dict(zip(WINDOW, window))) if window is not None else call
        return [values[param] for param in self.params]


@dataclass(frozen=True)
class Declarations:
    module: str  # the game's import name
    api: dict[str, Signature]
    search: Signature
    choose: Signature | None
    state: str
    watch: dict[str, str]
    globals: tuple[str, ...]
    repeats: bool
    hooks: frozenset[str]
    random_settings: tuple[str, ...] | None  # random_case's settings; None: any (**settings)

    @property
    def call_params(self) -> tuple[str, ...]:
        """What a case's `call` must give: every parameter of SEARCH but the window, then
        CHOOSE's others."""
        own = [p for p in self.search.params if p not in WINDOW]
        extra = [p for p in (self.choose.params if self.choose else ()) if p not in own]
        return (*own, *extra)

    @property
    def arities(self) -> dict[str, int]:
        return {name: len(signature.params) for name, signature in self.api.items()}


def top_level_lines(source: SourceFile) -> dict[str, int]:
    """name -> line of its first assignment or definition at the top of `source`."""
    lines: dict[str, int] = {}
    for node in ast.parse(source.text).body:
        targets: list[ast.expr] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                lines.setdefault(target.id, node.lineno)
    return lines


def read_declarations(module: Any, source: SourceFile) -> Declarations:
    lines = top_level_lines(source)

    def fail(name: str, problem: str) -> LabError:
        return LabError(source.shown, lines.get(name, 1), name, problem)

    api = _student_api(getattr(module, "STUDENT_API", None), fail)
    search = _api_entry(module, "SEARCH", api, fail, required=True)
    assert search is not None
    for param in WINDOW:
        if param not in search.params:
            raise fail("SEARCH", f"{search.shape} has no parameter {param!r}: the grader passes the window by name")
    state = getattr(module, "STATE", DEFAULTS["STATE"])
    if not isinstance(state, str) or state not in search.params or state in WINDOW:
        raise fail("STATE", f"must name the parameter of {search.shape} that holds the state, got {state!r}")
    choose = _api_entry(module, "CHOOSE", api, fail, required=False)
    if choose is not None and state not in choose.params:
        raise fail("CHOOSE", f"{choose.shape} has no parameter {state!r} (STATE) for the state")
    hooks = frozenset(hook for hook in HOOKS if callable(getattr(module, hook, None)))
    for hook in HOOKS:
        if hasattr(module, hook) and hook not in hooks:
            raise fail(hook, "must be a function")
    if choose is not None and "after" not in hooks:
        raise fail("CHOOSE", "needs the hook after(call, move): the search call at the state after a move")
    return Declarations(
        module=_module_name(module, fail),
        api=api,
        search=search,
        choose=choose,
        state=state,
        watch=_watch(module, fail),
        globals=_globals(module, fail),
        repeats=_flag(module, "REPEATS", fail),
        hooks=hooks,
        random_settings=_settings(module) if "random_case" in hooks else (),
    )


def _student_api(value: Any, fail: Any) -> dict[str, Signature]:
    if not isinstance(value, dict) or not value:
        raise fail(
            "STUDENT_API", 'missing: a dict function -> call, e.g. {"alphabeta": "alphabeta(state, alpha, beta)"}'
        )
    api = {}
    for name, shape in value.items():
        if not isinstance(name, str) or not name.isidentifier() or not isinstance(shape, str):
            raise fail("STUDENT_API", f"{name!r}: {shape!r} is not a function name and its call")
        try:
            definition = ast.parse(f"def {shape.strip()}: pass").body[0]
        except SyntaxError:
            definition = None
        if not isinstance(definition, ast.FunctionDef) or definition.name != name:
            raise fail("STUDENT_API", f"{shape!r} is not a call of {name}, e.g. {name}(state, alpha, beta)")
        arguments = definition.args
        if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
            raise fail("STUDENT_API", f"{shape!r}: name every parameter (no *, ** or /)")
        api[name] = Signature(name, tuple(arg.arg for arg in arguments.args), shape.strip())
    return api


def _api_entry(module: Any, key: str, api: dict[str, Signature], fail: Any, required: bool) -> Signature | None:
    name = getattr(module, key, None)
    if name is None and not required:
        return None
    if name not in api:
        raise fail(key, f"must name a function of STUDENT_API ({', '.join(api)}), got {name!r}")
    return api[name]


def _module_name(module: Any, fail: Any) -> str:
    name = getattr(module, "MODULE", DEFAULTS["MODULE"])
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_abgrade"):
        raise fail("MODULE", f"must be a module name (the student's `import ...`), got {name!r}")
    if name in sys.stdlib_module_names or name in ("grader", "reference", "numpy", "abgrade"):
        raise fail("MODULE", f"{name!r} is the name of a module the student may import; choose another")
    return name


def _watch(module: Any, fail: Any) -> dict[str, str]:
    watch = getattr(module, "WATCH", None)
    if not isinstance(watch, dict) or not watch:
        raise fail("WATCH", 'missing: a dict name -> "state" or "result" of what the search reads')
    for name, role in watch.items():
        if role not in ROLES:
            raise fail("WATCH", f"{name!r}: the role must be 'state' or 'result', got {role!r}")
        owner, _, method = str(name).partition(".")
        target = getattr(module, owner, None)
        if method:
            if not inspect.isclass(target) or not callable(target.__dict__.get(method)):
                raise fail("WATCH", f"{name!r} is not a method defined in a class of the game")
        elif isinstance(target, dict):
            if role != "state":
                raise fail("WATCH", f"{name!r} is a mapping: its reads are keys, so its role is 'state'")
        elif not inspect.isfunction(target):
            raise fail("WATCH", f"{name!r} is not a function, a mapping or a Class.method of the game")
    return dict(watch)


def _globals(module: Any, fail: Any) -> tuple[str, ...]:
    names = getattr(module, "GLOBALS", DEFAULTS["GLOBALS"])
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise fail("GLOBALS", f"must be a list of names of the game, got {names!r}")
    for name in names:
        if not hasattr(module, name):
            raise fail("GLOBALS", f"{name!r} is not defined in the game")
    return tuple(names)


def _flag(module: Any, key: str, fail: Any) -> bool:
    value = getattr(module, key, DEFAULTS[key])
    if not isinstance(value, bool):
        raise fail(key, f"must be True or False, got {value!r}")
    return value


def _settings(module: Any) -> tuple[str, ...] | None:
    parameters = list(inspect.signature(module.random_case).parameters.values())[1:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return tuple(p.name for p in parameters)
