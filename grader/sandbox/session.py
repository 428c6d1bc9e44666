"""One submission's run: a private work folder, a worker that loads the submission, and
case requests under per-case and per-submission time limits. A case that kills or hangs
the worker costs only that case: the next one gets a fresh worker."""
from __future__ import annotations

import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..spec.model import Limits
from .worker import Worker, WorkerFailure

_PROBE_DIR = Path(__file__).resolve().parent.parent / "probe"


@dataclass(frozen=True)
class ProbeSetup:
    """What the lab's observer needs in the student process: its module, the API to check."""

    handler: str                      # probe module file name without .py, e.g. "tree"
    api: dict[str, int]               # function name -> number of positional arguments
    extra_modules: tuple[tuple[str, str], ...] = ()  # (module name, source) shipped too

    def modules(self) -> list[tuple[str, str]]:
        runtime = ("_abgrade_runtime", (_PROBE_DIR / "runtime.py").read_text())
        handler = (f"_abgrade_{self.handler}", (_PROBE_DIR / f"{self.handler}.py").read_text())
        return [runtime, *self.extra_modules, handler]


@dataclass
class LoadObservation:
    """What the observer saw while loading the submission."""

    api: dict[str, dict] = field(default_factory=dict)
    error: dict | None = None        # exception raised while loading (trimmed traceback)
    failure: WorkerFailure | None = None  # the process hung or died while loading
    seconds: float = 0.0


def module_name_for(path: Path) -> str:
    stem = re.sub(r"\W", "_", path.stem)
    return stem if stem.isidentifier() and not stem.startswith("_abgrade") else "submission"


class Session:
    """Runs one `.py` submission. Use as a context manager; the work folder is removed after."""

    def __init__(self, submission: Path, probe: ProbeSetup, limits: Limits) -> None:
        self.submission = submission
        self.probe = probe
        self.limits = limits
        self.workdir = Path(tempfile.mkdtemp(prefix="abgrade-"))
        self.copy = self.workdir / submission.name
        shutil.copyfile(submission, self.copy)
        self.started = time.monotonic()
        self.worker: Worker | None = None
        self.outputs: list[str] = []
        self.load_observation: LoadObservation | None = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def remaining(self) -> float:
        return self.limits.submission_seconds - (time.monotonic() - self.started)

    def _setup_message(self) -> dict:
        return {
            "modules": self.probe.modules(),
            "handler": f"_abgrade_{self.probe.handler}",
            "submission": str(self.copy),
            "module_name": module_name_for(self.submission),
            "api": self.probe.api,
            "recursion_limit": self.limits.recursion_limit,
        }

    def _start(self) -> LoadObservation:
        self.worker = Worker(self.workdir, self.limits)
        reply = self.worker.request(self._setup_message(), max(0.0, self.remaining()))
        if isinstance(reply, WorkerFailure):
            self._retire_worker()
            return LoadObservation(failure=reply)
        if reply.get("op") != "loaded":
            self._retire_worker()
            return LoadObservation(failure=WorkerFailure("protocol", "unexpected first reply from the observer"))
        return LoadObservation(api=reply.get("api") or {}, error=reply.get("error"), seconds=reply.get("seconds", 0.0))

    def load(self) -> LoadObservation:
        self.load_observation = self._start()
        return self.load_observation

    def run(self, request: dict, timeout: float | None = None) -> dict | WorkerFailure:
        """Send one case request; restart the worker first if an earlier case killed it."""
        if self.worker is None:
            if self.remaining() <= 0:
                return self._budget_spent()
            observation = self._start()
            if observation.failure:
                return observation.failure
        assert self.worker is not None
        limit = min(timeout or self.limits.case_seconds, max(0.0, self.remaining()))
        reply = self.worker.request(request, limit)
        if isinstance(reply, WorkerFailure):
            self._retire_worker()
            if reply.kind == "timeout" and limit < (timeout or self.limits.case_seconds):
                return self._budget_spent()
            return reply
        return reply

    def _budget_spent(self) -> WorkerFailure:
        return WorkerFailure("timeout", f"the submission's total time limit of {self.limits.submission_seconds:g} s ran out")

    def _retire_worker(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.outputs.append(self.worker.output.text)
            self.worker = None

    @property
    def output(self) -> str:
        return "".join(self.outputs)

    def close(self) -> None:
        self._retire_worker()
        shutil.rmtree(self.workdir, ignore_errors=True)
