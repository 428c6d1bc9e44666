"""Whether a Dask cluster may be given students' code (issue 23).

At the `namespaces` isolation level a student process has a network namespace of its own:
it reaches nothing, the cluster included. At the `process` level it shares the worker's
network and file system. Dask has no authentication of its own: any process that can
connect to a plain `tcp://` scheduler or worker can read every queued task (other students'
submissions) and run code in every worker process (`client.run`), as the worker's user,
root, which grades the next students. So at the process level a worker may grade only when

- it runs as root (else student code runs as the worker's own user and reads its key);
- every listener it knows (the scheduler, itself, its nanny) refuses a stranger: Dask's TLS
  with a CA of the cluster's own makes both ends of every connection show a certificate,
  and the probe below connects as a student would, without one;
- its key file is unreadable to student uids (mode 0600, not owned by one of them).

`gather_facts` runs on each worker (where its students sit), through `client.run` before the
batch sends its first task, and again on the worker before its first grading (a worker that
joined later); the judging functions are pure. dask is imported only inside gather_facts."""

from __future__ import annotations

import asyncio
import os
import ssl
import stat
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..sandbox.identity import FIRST_UID, POOL_SIZE

PROBE_SECONDS = 10.0  # a TLS listener that requires certificates refuses within milliseconds
FIX = (
    "start the scheduler and workers with TLS (abgrade cluster certs DIR; README, Grading on a cluster) and give "
    "--scheduler tls://HOST:PORT --tls-ca DIR/ca.pem --tls-cert DIR/client.pem --tls-key DIR/client-key.pem, "
    "or grade on workers where namespaces work"
)


@dataclass(frozen=True)
class WorkerFacts:
    """What a worker found about itself, as its students would see it."""

    worker: str
    level: str  # the isolation level its gradings get
    root: bool
    open_listeners: tuple[str, ...] = ()  # listeners that answered a connection without a certificate
    exposed_keys: tuple[str, ...] = ()  # "PATH (why)" for each key file a student uid could read
    key_folders: tuple[str, ...] = ()  # where its key files are (hidden from its students at the namespaces level)


def worker_problem(facts: WorkerFacts) -> str | None:
    """Why student code graded on this worker could reach the cluster, or None."""
    if facts.level == "namespaces":
        return None
    where = f"dask worker {facts.worker} grades at the `{facts.level}` isolation level, where student code shares the worker's network and files"
    if not facts.root:
        return f"{where}, and the worker is not root, so student code runs as the worker's own user and can read its key; run the worker as root, or where namespaces work"
    if facts.open_listeners:
        listeners = ", ".join(facts.open_listeners)
        return f"{where}, and {listeners} let a process connect without a certificate (a student could take over the cluster); {FIX}"
    if facts.exposed_keys:
        keys = ", ".join(facts.exposed_keys)
        first = facts.exposed_keys[0].rsplit(" (", 1)[0]
        return f"{where}, and its TLS key can be read by student uids: {keys}; chmod 600 {first} on that machine (abgrade cluster certs writes keys that way)"
    return None


def cluster_problem(found: Mapping[str, Any]) -> str | None:
    """The first worker's problem (one line, with how many workers have one), or None.
    `found` maps each worker to what gather_facts returned there (a dict) or raised."""
    problems = []
    for worker, answer in sorted(found.items()):
        if not isinstance(answer, dict):
            problems.append(f"dask worker {worker} could not say how it isolates students ({answer!r})")
            continue
        problem = worker_problem(facts_from(answer))
        if problem:
            problems.append(problem)
    if not problems:
        return None
    more = f" ({len(problems)} of {len(found)} workers)" if len(problems) > 1 else ""
    return problems[0] + more


def facts_from(answer: dict) -> WorkerFacts:
    return WorkerFacts(
        worker=str(answer["worker"]),
        level=str(answer["level"]),
        root=bool(answer["root"]),
        open_listeners=tuple(answer.get("open_listeners", ())),
        exposed_keys=tuple(answer.get("exposed_keys", ())),
        key_folders=tuple(answer.get("key_folders", ())),
    )


def key_exposure(path: str) -> str | None:
    """Why a student uid could read the key file at `path`, or None."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return f"{path} (can't be checked: {exc.strerror})"
    if FIRST_UID <= info.st_uid < FIRST_UID + POOL_SIZE:
        return f"{path} (owned by student uid {info.st_uid})"
    if stat.S_IMODE(info.st_mode) & 0o077:
        return f"{path} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def key_files(security: Any, role: str = "worker") -> list[str]:
    """The files that hold the role's TLS key (the key file, else the certificate file that
    carries the key too); a key given as PEM text in the configuration is no file."""
    key = getattr(security, f"tls_{role}_key", None) or getattr(security, f"tls_{role}_cert", None)
    return [key] if isinstance(key, str) and key and "\n" not in key else []


async def stranger_answered(address: str, seconds: float = PROBE_SECONDS) -> bool:
    """Whether the listener at `address` talks to a process that shows no certificate.
    Anything but `tls://` is taken as open (plain tcp:// is; the rest is not checked)."""
    scheme, _, rest = address.partition("://")
    if scheme != "tls":
        return True
    host, _, port = rest.rpartition(":")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # a stranger doesn't care who answers, only whether
    writer = None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host.strip("[]"), int(port), ssl=context), seconds
        )
        data = await asyncio.wait_for(reader.read(64), seconds)  # a Dask listener speaks first
        return bool(data)
    except (ssl.SSLError, ConnectionError, EOFError):
        return False  # refused: no certificate, no conversation
    except (OSError, asyncio.TimeoutError, ValueError):
        return True  # no clear refusal: not taken as one
    finally:
        if writer is not None:
            writer.close()


async def gather_facts(dask_worker: Any) -> dict:
    """Run on a worker (`client.run` passes `dask_worker`): its level, and at the process
    level, which of its listeners let a stranger in and whether its key is private."""
    from ..sandbox.isolation import detect_isolation

    level = detect_isolation().level
    keys = key_files(dask_worker.security)
    folders = tuple(dict.fromkeys(os.path.dirname(os.path.abspath(path)) for path in keys))
    facts = WorkerFacts(str(dask_worker.address), level, os.geteuid() == 0, key_folders=folders)
    if level != "namespaces":
        listeners = [dask_worker.scheduler.address, dask_worker.address, getattr(dask_worker, "nanny", None)]
        addresses = list(dict.fromkeys(str(a) for a in listeners if a))
        answered = await asyncio.gather(*(stranger_answered(a) for a in addresses))
        exposed = [why for path in keys if (why := key_exposure(path))]
        opened = tuple(a for a, yes in zip(addresses, answered) if yes)
        facts = WorkerFacts(facts.worker, level, facts.root, opened, tuple(exposed), folders)
    return asdict(facts)
