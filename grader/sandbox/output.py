"""Collects what the student process prints, keeping only the first `cap` bytes."""

from __future__ import annotations

import os
import threading


class CappedOutput:
    """Drains a pipe on a thread (so a chatty student never blocks) and keeps a prefix."""

    def __init__(self, fd: int, cap: int) -> None:
        self._fd, self.cap = fd, cap
        self._chunks: list[bytes] = []
        self.kept = 0
        self.total = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    break
                self.total += len(chunk)
                room = self.cap - self.kept
                if room > 0:
                    self._chunks.append(chunk[:room])
                    self.kept += min(room, len(chunk))
        except OSError:
            pass
        finally:
            os.close(self._fd)

    def finish(self, timeout: float = 1.0) -> None:
        self._thread.join(timeout)

    @property
    def text(self) -> str:
        text = b"".join(self._chunks).decode("utf-8", "replace")
        if self.total > self.kept:
            text += f"\n[output truncated: {self.total - self.kept} more bytes not kept]"
        return text
