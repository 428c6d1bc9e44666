"""`abgrade cluster certs DIR`: the credentials of a TLS Dask cluster (README, Grading on a
cluster): a CA of the cluster's own, and a certificate and private key for the scheduler,
the workers and the batch machine (client), keys with mode 0600."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    cluster = commands.add_parser("cluster", help="set up a Dask cluster for `abgrade batch --scheduler`")
    actions = cluster.add_subparsers(metavar="ACTION")
    certs = actions.add_parser(
        "certs",
        help="write a CA and a certificate and key per role (scheduler, worker, client) for a TLS cluster",
        description="Write DIR/ca.pem and DIR/ROLE.pem, DIR/ROLE-key.pem for ROLE in scheduler, worker, client. "
        "Keys get mode 0600 (DIR 0700 if new); the CA's own key is not kept.",
    )
    certs.add_argument("folder", type=Path, metavar="DIR")
    certs.add_argument("--days", type=int, default=365, help="how long the certificates are valid (default 365)")
    certs.add_argument("--force", action="store_true", help="replace the credentials already in DIR")
    certs.set_defaults(run=run_certs)
    cluster.set_defaults(run=lambda args: cluster.print_help() or 2)


def run_certs(args: argparse.Namespace) -> int:
    from ..batch.certs import CredentialsExist, make_credentials, write_credentials

    if args.days < 1:
        raise UsageError("--days must be at least 1")
    try:
        files = make_credentials(args.days)
    except ImportError:
        raise UsageError("abgrade cluster certs needs the cryptography package: pip install 'abgrade[dask]'") from None
    try:
        written = write_credentials(args.folder, files, force=args.force)
    except CredentialsExist as exc:
        raise UsageError(str(exc)) from None
    folder = args.folder
    print(f"wrote {', '.join(p.name for p in written)} to {folder} (keys mode 0600; the CA's key is not kept)")
    print(
        f"  scheduler: dask scheduler --protocol tls --tls-ca-file {folder}/ca.pem --tls-cert {folder}/scheduler.pem "
        f"--tls-key {folder}/scheduler-key.pem\n"
        f"  workers:   dask worker tls://HOST:8786 --nthreads 1 --tls-ca-file {folder}/ca.pem "
        f"--tls-cert {folder}/worker.pem --tls-key {folder}/worker-key.pem\n"
        f"  batch:     abgrade batch DIR --lab LAB --scheduler tls://HOST:8786 --tls-ca {folder}/ca.pem "
        f"--tls-cert {folder}/client.pem --tls-key {folder}/client-key.pem\n"
        "  copy the folder to each machine keeping the modes (scp -rp), as the user that runs dask there"
    )
    return EXIT_OK
