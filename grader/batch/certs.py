"""The credentials of a TLS cluster (`abgrade cluster certs DIR`): a certificate authority
made for this cluster alone and one certificate and key for each role (scheduler, worker,
client: the machine that runs `abgrade batch`), signed by it. Dask's TLS checks both ends of
every connection against the CA, so only a holder of one of these keys can talk to the
scheduler or a worker; a student process that shares a worker's network and file system
can't read a key (mode 0600, owned by the user who made it, never a student uid) and so
can't connect.

The CA's own key signs the three certificates and is then thrown away: nothing can sign a
fourth, so the credentials can't grow behind the instructor's back (make a new set instead).
Uses `cryptography` (the `dask` extra), imported only here."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROLES = ("scheduler", "worker", "client")
CA_FILE = "ca.pem"
DAYS = 365
KEY_MODE = 0o600
FOLDER_MODE = 0o700


@dataclass(frozen=True)
class Credential:
    """One file of the set: its name, its bytes, and whether it is a secret (a key)."""

    name: str
    data: bytes
    secret: bool

    @property
    def mode(self) -> int:
        return KEY_MODE if self.secret else 0o644


def cert_file(role: str) -> str:
    return f"{role}.pem"


def key_file(role: str) -> str:
    return f"{role}-key.pem"


def make_credentials(days: int = DAYS, now: datetime.datetime | None = None) -> list[Credential]:
    """A fresh CA certificate and a certificate and key per role, as PEM; nothing is written."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = now or datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)  # clocks differ a little

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "abgrade cluster"),
                          x509.NameAttribute(NameOID.COMMON_NAME, common)])  # fmt: skip

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("abgrade cluster CA")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(x509, signs=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = [Credential(CA_FILE, ca_cert.public_bytes(serialization.Encoding.PEM), secret=False)]
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(f"abgrade {role}"))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(x509, signs=False), critical=True)
            # every role both listens and connects (a worker talks to the scheduler and to peers)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(f"abgrade-{role}")]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        files.append(Credential(cert_file(role), cert.public_bytes(serialization.Encoding.PEM), secret=False))
        files.append(Credential(key_file(role), pem, secret=True))
    return files


def _key_usage(x509: Any, signs: bool) -> Any:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=not signs,
        key_cert_sign=signs,
        crl_sign=signs,
        encipher_only=False,
        decipher_only=False,
    )


class CredentialsExist(Exception):
    """The folder already holds credentials (one line naming them and the fix)."""


def write_credentials(folder: Path, files: list[Credential], force: bool = False) -> list[Path]:
    """Write `files` into `folder` (made 0700 if new). Each key is created with mode 0600
    from the start (never readable by anyone else, not even for a moment), then checked."""
    existing = [f.name for f in files if (folder / f.name).exists()]
    if existing and not force:
        raise CredentialsExist(f"{folder} already holds {', '.join(existing)}; give another folder, or --force")
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    written = []
    for credential in files:
        path = folder / credential.name
        if path.is_symlink():
            path.unlink()  # never write a key through a link somebody else placed
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, credential.mode)
        with os.fdopen(descriptor, "wb") as handle:
            os.fchmod(handle.fileno(), credential.mode)  # an existing file keeps its old mode otherwise
            handle.write(credential.data)
        written.append(path)
    return written
