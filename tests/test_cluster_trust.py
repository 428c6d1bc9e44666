"""The pieces of issue 23, point 1, without a cluster: the credentials `abgrade cluster
certs` writes (a real TLS handshake between them), the pure judging of what a worker
reports, the stranger probe against real listeners, and the batch's one-line refusals of
credentials it can't trust. The attack itself runs on a real cluster in test_dask_trust.py."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader.batch.cluster_trust import (
    WorkerFacts,
    cluster_problem,
    key_exposure,
    stranger_answered,
    worker_problem,
)

PROJECT = Path(__file__).resolve().parent.parent
cryptography = pytest.importorskip("cryptography", reason="abgrade cluster certs needs pip install 'abgrade[dask]'")


def abgrade(*args: object, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("c") / "certs"
    done = abgrade("cluster", "certs", folder)
    assert done.returncode == 0, done.stderr
    return folder


# --- abgrade cluster certs ----------------------------------------------------------------------


def test_certs_are_a_ca_and_a_pair_per_role_with_private_keys(certs):
    names = sorted(p.name for p in certs.iterdir())
    assert names == sorted(
        ["ca.pem"] + [f"{r}{s}.pem" for r in ("client", "scheduler", "worker") for s in ("", "-key")]
    )
    assert stat.S_IMODE(certs.stat().st_mode) == 0o700
    for path in certs.iterdir():
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o600 if path.name.endswith("-key.pem") else 0o644), path
        assert key_exposure(str(path)) is None or not path.name.endswith("-key.pem")
    assert "PRIVATE KEY" not in (certs / "ca.pem").read_text()  # the CA's key is not kept anywhere


def test_certs_refuses_to_overwrite_and_force_replaces_with_modes_kept(certs, tmp_path):
    again = abgrade("cluster", "certs", certs)
    assert again.returncode == 2 and again.stderr.startswith(f"abgrade: {certs} already holds ca.pem")
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "worker-key.pem").write_text("old")
    (folder / "worker-key.pem").chmod(0o644)
    assert abgrade("cluster", "certs", folder, "--force").returncode == 0
    assert stat.S_IMODE((folder / "worker-key.pem").stat().st_mode) == 0o600
    assert "PRIVATE KEY" in (folder / "worker-key.pem").read_text()


def _context(certs: Path, role: str | None, server: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(
        ssl.Purpose.CLIENT_AUTH if server else ssl.Purpose.SERVER_AUTH, cafile=str(certs / "ca.pem")
    )
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    if role:
        context.load_cert_chain(certs / f"{role}.pem", certs / f"{role}-key.pem")
    return context


def _tls_echo_server(context: ssl.SSLContext) -> tuple[socket.socket, int]:
    """A listener that speaks first after the handshake, as a Dask listener does."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(connection, server_side=True) as tls:
                    tls.sendall(b"hello")
            except (OSError, ssl.SSLError):
                pass

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]


def test_the_roles_authenticate_each_other_and_a_stranger_is_refused(certs):
    listener, port = _tls_echo_server(_context(certs, "scheduler", server=True))
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        with _context(certs, "client", server=False).wrap_socket(raw) as tls:
            assert tls.recv(5) == b"hello"
        assert asyncio.run(stranger_answered(f"tls://127.0.0.1:{port}")) is False
        assert asyncio.run(stranger_answered(f"tcp://127.0.0.1:{port}")) is True  # plain is taken as open
    finally:
        listener.close()
    # a TLS listener that doesn't ask for a certificate lets the stranger in
    lax = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    lax.load_cert_chain(certs / "scheduler.pem", certs / "scheduler-key.pem")
    listener, port = _tls_echo_server(lax)
    try:
        assert asyncio.run(stranger_answered(f"tls://127.0.0.1:{port}")) is True
    finally:
        listener.close()


# --- judging what a worker reports -------------------------------------------------------------


def test_namespaces_workers_need_nothing_more():
    facts = WorkerFacts("tcp://w:1", "namespaces", root=False, open_listeners=("tcp://s:1",))
    assert worker_problem(facts) is None


@pytest.mark.parametrize(
    "facts, words",
    [
        (
            WorkerFacts("tcp://w:1", "process", True, ("tcp://s:1",)),
            "tcp://s:1 let a process connect without a certificate",
        ),
        (WorkerFacts("tls://w:1", "process", False), "the worker is not root"),
        (WorkerFacts("tls://w:1", "process", True, (), ("/k.pem (mode 0644)",)), "chmod 600 /k.pem on that machine"),
    ],
    ids=["plain", "not-root", "readable-key"],
)
def test_process_level_workers_must_be_out_of_reach(facts, words):
    problem = worker_problem(facts)
    assert problem is not None and words in problem and "\n" not in problem
    assert problem.startswith(f"dask worker {facts.worker} grades at the `process` isolation level")


def test_the_cluster_problem_names_the_first_worker_and_counts_the_rest():
    good = {"worker": "tls://a:1", "level": "process", "root": True}
    bad = {"worker": "tcp://b:1", "level": "process", "root": True, "open_listeners": ["tcp://s:1"]}
    assert cluster_problem({"tls://a:1": good}) is None
    both = cluster_problem({"tcp://b:1": bad, "tcp://c:1": {**bad, "worker": "tcp://c:1"}, "tls://a:1": good})
    assert both is not None and both.startswith("dask worker tcp://b:1") and both.endswith("(2 of 3 workers)")
    broken = cluster_problem({"tcp://d:1": RuntimeError("boom")})
    assert broken == "dask worker tcp://d:1 could not say how it isolates students (RuntimeError('boom'))"


def test_key_exposure_reads_the_mode_and_the_owner(tmp_path):
    key = tmp_path / "k.pem"
    key.write_text("secret")
    key.chmod(0o600)
    assert key_exposure(str(key)) is None
    key.chmod(0o640)
    assert key_exposure(str(key)) == f"{key} (mode 0640)"
    key.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(key, 61007, 61000)
        assert key_exposure(str(key)) == f"{key} (owned by student uid 61007)"
    assert key_exposure(str(tmp_path / "none.pem")).endswith("(can't be checked: No such file or directory)")


# --- the batch's own credentials ---------------------------------------------------------------


def test_batch_refuses_tls_options_it_cannot_use(tmp_path, certs):
    folder = tmp_path / "subs"
    folder.mkdir()
    tls = ["--tls-ca", certs / "ca.pem", "--tls-cert", certs / "client.pem", "--tls-key", certs / "client-key.pem"]
    cases = [
        (["--tls-ca", certs / "ca.pem"], "--tls-ca, --tls-cert and --tls-key go with --scheduler tls://HOST:PORT"),
        (
            ["--scheduler", "tls://127.0.0.1:9", "--tls-ca", certs / "ca.pem"],
            "--tls-ca, --tls-cert and --tls-key go together",
        ),
        (["--scheduler", "tcp://127.0.0.1:9", *tls], "--tls-ca, --tls-cert and --tls-key are for a tls:// scheduler"),
        (["--scheduler", "tls://127.0.0.1:9"], "--scheduler tls://127.0.0.1:9 needs this machine's credentials"),
        (["--scheduler", "ws://127.0.0.1:9"], "abgrade talks to tcp:// or tls:// schedulers only"),
    ]
    for args, words in cases:
        done = abgrade("batch", folder, "--lab", "tree", "--out", tmp_path / "out", *args)
        assert done.returncode == 2 and words in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    open_key = tmp_path / "open-key.pem"
    open_key.write_bytes((certs / "client-key.pem").read_bytes())
    open_key.chmod(0o644)
    done = abgrade("batch", folder, "--lab", "tree", "--out", tmp_path / "out", "--scheduler", "tls://127.0.0.1:9",
                   *tls[:4], "--tls-key", open_key)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"abgrade: --tls-key {open_key} can be read by others (mode 0644, or owned by a student uid): whoever reads "
        f"it controls the cluster; chmod 600 {open_key}"
    )
    assert not (tmp_path / "out").exists()
