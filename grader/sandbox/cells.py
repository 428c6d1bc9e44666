"""What happens to a notebook's cells: the incidents the report lists (a cell that raised,
was interrupted at a time limit, caught its interrupt, was stopped, skipped or never run),
and the watchdog that interrupts a cell past its limit and stops it when it goes on."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol

from .cpu_clock import CpuMeter
from .deadline import Deadline, Limit
from .session import INTERRUPT_GRACE_SECONDS


@dataclass(frozen=True)
class CellIncident:
    """A code cell that did not simply run: it `raised`, was `interrupted` at a time limit
    (`detail` names it), `caught` its interrupt and finished, was `stopped` (it went on
    after its interrupt: loading fails), was `skipped` (it killed the kernel, or could not
    be run), was `not_run` (the loading time ran out first), `loaded` a file with `%load`
    (`detail`: its argument), which runs none of it, or was `timed`: a `%%timeit` cell
    whose definitions are gone after it. `number` is Jupyter's `In [n]`."""

    number: int
    kind: str
    detail: str = ""

    @property
    def note(self) -> str:
        where = f"cell In [{self.number}]"
        return {
            "raised": f"{where} raised {self.detail}",
            "interrupted": f"{where} ran past {self.detail} and was interrupted (KeyboardInterrupt)",
            "caught": f"{where} ran past {self.detail} and was interrupted; it caught the KeyboardInterrupt and finished",
            "stopped": f"{where} ran past {self.detail}, and went on after its interrupt (KeyboardInterrupt) "
            f"until it was stopped",
            "skipped": f"{where} {self.detail}; it was skipped and the notebook run again without it",
            "not_run": f"{where} was not run: {self.detail} ran out before it",
            "loaded": f"{where} is `%load {self.detail}`: run as part of the notebook it only puts the file's "
            f"text into the cell and runs none of it (as Jupyter's Run All does); run that cell once more "
            f"before saving, or use `%run {self.detail}`",
            "timed": f"{where} is `%%timeit`: IPython runs the cell in a namespace of its own, so what it "
            f"defines is gone after it (in Jupyter too); take `%%timeit` off the cell that defines your "
            f"functions and time a call in a cell of its own",
        }[self.kind] + (missing_module_hint(self.detail) + typing_hint(self.detail) if self.kind == "raised" else "")


def missing_module_hint(error: str) -> str:
    """For a cell that raised `ModuleNotFoundError: No module named 'x'`: only the notebook
    is graded, so a file x.py the student kept beside it is not there (a library the
    grader lacks reads the same, hence the "if"). A library (tqdm, matplotlib) can't be
    installed from a cell either: the kernel has no network."""
    prefix = "ModuleNotFoundError: No module named "
    if not error.startswith(prefix):
        return ""
    name = error[len(prefix) :].strip().strip("'\"").split(".")[0]
    if not name.isidentifier():
        return ""
    return (
        f" (only the notebook is graded: if {name}.py is a file of yours beside it, put its code in a "
        f"cell, or write it from a cell with `%%writefile {name}.py` before the import; if it is a "
        f"library, the grader does not have it and a `pip install` cell cannot fetch it (no network "
        f"while grading): a cell that only draws, times or shows progress with it may fail at no cost, "
        f"but your functions must not need it)"
    )


def typing_hint(error: str) -> str:
    """For a cell that called input() (or stopped at a debugger): nobody can type while grading."""
    if not error.startswith("StdinNotImplementedError"):
        return ""
    return " (input() or a debugger waits for typing, and nobody types while grading: the cells after it still ran)"


def incident_notes(incidents: list[CellIncident]) -> list[str]:
    """Each incident's note, a missing module's advice only at the first cell that needed
    it (a notebook that imports matplotlib in three cells got the same paragraph three
    times, and the summary's first lines were all that)."""
    said: set[str] = set()
    notes = []
    for incident in incidents:
        note = incident.note
        hint = missing_module_hint(incident.detail) if incident.kind == "raised" else ""
        if hint and hint in said:
            note = note[: -len(hint)] + " (as above)"
        said.add(hint)
        notes.append(note)
    return notes


def load_magic(source: str) -> str | None:
    """The argument of a cell that is IPython's `%load` (its first line), else None."""
    lines = [line for line in source.splitlines() if line.strip()]
    if not lines or not lines[0].lstrip().startswith("%load "):
        return None
    return lines[0].split(None, 1)[1].strip()[:200] or None


def timed_definitions(source: str) -> bool:
    """Whether a cell is IPython's `%%timeit` around a `def` or `class`: timeit runs the
    cell in a namespace of its own, so a student who timed the cell that defines the
    solution has no solution after it, and was told only that none was defined."""
    lines = [line for line in source.splitlines() if line.strip()]
    if not lines or not lines[0].lstrip().startswith("%%timeit"):
        return False
    return any(line.startswith(("def ", "class ", "async def ")) for line in lines[1:])


def not_run(rest: list[tuple[int, int]], skip: set[int], limit: Limit) -> list[CellIncident]:
    return [CellIncident(number, "not_run", limit.says) for _, number in rest if number not in skip]


class Watched(Protocol):
    """The kernel a watchdog watches (kernel_worker.KernelWorker)."""

    meter: CpuMeter

    def interrupt(self) -> None: ...

    def kill_kernel(self) -> None: ...


class CellWatchdog:
    """Watches one cell on a thread of its own: when one of `limits` passes it interrupts
    the kernel (`interrupted`: that limit), and when the cell then goes on for
    INTERRUPT_GRACE_SECONDS more of CPU time (or the backstop of that) it kills the kernel
    (`stopped`)."""

    def __init__(self, worker: Watched, limits: Deadline) -> None:
        self.worker, self.limits = worker, limits
        self.interrupted: Limit | None = None
        self.stopped = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="abgrade-cell-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(self.limits.pause()):
            passed = self.limits.passed()
            if passed is not None:
                self.interrupted = passed
                self.worker.interrupt()
                break
        else:
            return
        grace = Deadline(self.worker.meter).charged("interrupt", INTERRUPT_GRACE_SECONDS, "after the interrupt")
        while not self._done.wait(grace.pause()):
            if grace.passed() is not None:
                self.stopped = True
                self.worker.kill_kernel()
                return

    def stop(self) -> None:
        """The cell has ended: stop watching."""
        self._done.set()
        self._thread.join()
