"""Which global namespaces the observer sets the watched globals in (runtime.student_namespaces):
those of the student's functions, wherever a notebook put them, and never a library's or the
grader's module. Pure: plain dicts and modules in this process, no kernel."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest

from grader.probe import runtime


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A work folder the runtime counts as the student's."""
    monkeypatch.setattr(runtime, "STUDENT_DIRS", [str(tmp_path)])
    monkeypatch.setattr(runtime, "_IN_STUDENT_DIR", {})
    monkeypatch.setattr(runtime, "_REAL_DIRS", {})
    return tmp_path


def defined(source: str, filename: str, namespace: dict | None = None) -> dict:
    namespace = {} if namespace is None else namespace
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def test_a_run_file_an_exec_dict_and_a_work_folder_module_are_followed(work, monkeypatch):
    user: dict = {"__name__": "__main__"}
    ran = defined("def alphabeta(n):\n    return graph[n]\n", str(work / "sol.py"), {"__name__": "__main__"})  # %run
    executed = defined("def value(s):\n    return num_value_call\n", "<string>")  # exec(source, found)
    (work / "helper.py").write_text("def search(s):\n    return next_states(s)\n")
    spec = importlib.util.spec_from_file_location("helper", work / "helper.py")
    assert spec is not None and spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    monkeypatch.setitem(sys.modules, "helper", helper)
    # %run of a file written outside the work folder: %run took `__name__` out of its namespace
    elsewhere = defined("def best(s):\n    return gCache\n", "/tmp/elsewhere.py")
    user.update(alphabeta=ran["alphabeta"], value=executed["value"], helper=helper, best=elsewhere["best"])
    spaces = runtime.student_namespaces(user)
    assert [id(s) for s in spaces] == [id(user), id(ran), id(executed), id(helper.__dict__), id(elsewhere)]
    runtime.set_global(spaces, "graph", {"a": 1})
    assert ran["alphabeta"]("a") == 1 and user["graph"] == {"a": 1}
    assert runtime.home_of(spaces, user["value"]) is executed
    assert runtime.home_of(spaces, print) is user


def test_decorated_functions_are_followed_to_the_function_they_wrap(work):
    inner = defined("def alphabeta(n):\n    return graph[n]\n", str(work / "sol.py"))

    @functools.wraps(inner["alphabeta"])
    def logged(n):
        return inner["alphabeta"](n)

    solver = defined("class Solver:\n    def alphabeta(self, n):\n        return graph[n]\n", str(work / "solver.py"))
    bound = solver["Solver"]().alphabeta
    for wrapped in (functools.lru_cache(inner["alphabeta"]), functools.partial(inner["alphabeta"]), logged, bound):
        spaces = runtime.student_namespaces({"alphabeta": wrapped})
        assert any(space is inner or space is solver for space in spaces), wrapped


def test_libraries_the_grader_and_files_outside_the_work_folder_are_never_followed(work, tmp_path_factory):
    grader_module = types.ModuleType("_abgrade_game_x")
    grader_module.__file__ = "<abgrade _abgrade_game_x>"
    defined("def next_states(s):\n    return []\n", "<abgrade _abgrade_game_x>", grader_module.__dict__)
    sys.modules["_abgrade_game_x"] = grader_module
    try:
        elsewhere = tmp_path_factory.mktemp("elsewhere")
        outside = defined("def f():\n    return 1\n", str(elsewhere / "lib.py"), {"__name__": "lib"})
        # a preloaded copy the observer replaced: unregistered, compiled from "<abgrade ...>"
        replaced = defined("def g():\n    return 1\n", "<abgrade _abgrade_generic_lab>")
        # a library's generated function (numpy before 1.25 made its public functions so)
        generated = defined("def h():\n    return 1\n", "<__array_function__ internals>")
        user = {
            "dumps": json.dumps,  # a library's function
            "json": json,
            "next_states": grader_module.next_states,
            "game": grader_module,
            "f": outside["f"],
            "g": replaced["g"],
            "h": generated["h"],
            "path": Path,
        }
        assert runtime.student_namespaces(user) == [user]
    finally:
        del sys.modules["_abgrade_game_x"]


def test_nothing_of_the_student_runs_while_namespaces_are_found(work):
    touched = []

    class Trap:
        def __getattr__(self, name):
            touched.append(name)
            raise AttributeError(name)

        @property
        def __wrapped__(self):
            touched.append("__wrapped__")
            return None

    user = {"alphabeta": Trap(), "other": Trap}
    assert runtime.student_namespaces(user) == [user]
    assert touched == []


def test_a_crafted_chain_of_namespaces_is_bounded(work):
    user: dict = {}
    space = user
    for number in range(runtime.SPACE_LIMIT * 2):
        inner = defined("def f():\n    return 1\n", "<string>")
        space[f"f{number}"] = inner["f"]
        space = inner
    assert len(runtime.student_namespaces(user)) == runtime.SPACE_LIMIT
