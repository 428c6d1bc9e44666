"""SHA-256 for the grade's own keys and seeds (the spec's digest and seed, the YAML
cache's key), without `hashlib`'s import: hashlib loads OpenSSL's libcrypto, about 3 ms
of a `.py` grade's start-up, for a hash that CPython's own built-in module computes just
as well (the same function, the same digests: SHA-256 is SHA-256). Where that module is
missing (another Python build), hashlib's is used."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing

if TYPE_CHECKING:
    from hashlib import _Hash


def sha256(data: bytes = b"") -> _Hash:
    """A SHA-256 hash object of `data` (`.digest()`, `.hexdigest()`, `.update()`)."""
    try:
        from _sha256 import sha256 as made  # CPython up to 3.11
    except ImportError:
        try:
            from _sha2 import sha256 as made  # CPython 3.12 on
        except ImportError:
            from hashlib import sha256 as made
    return made(data)
