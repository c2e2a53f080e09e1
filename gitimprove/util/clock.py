"""Time stamps and host identity for records (cheap to import: used by hooks)."""

from __future__ import annotations

import os
import time
import zlib

_HOST: str | None = None


def utc_now() -> str:
    """UTC ISO time with microseconds, e.g. 2026-11-22T05:52:01.123456Z.

    GITIMPROVE_FAKE_NOW fixes it (tests and golden output)."""
    fake = os.environ.get("GITIMPROVE_FAKE_NOW")
    if fake:
        return fake
    ns = time.time_ns()
    seconds, rest = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest // 1000:06d}Z"


def host_id() -> str:
    """8 hex characters naming this machine, stable across runs."""
    global _HOST
    if _HOST is None:
        _HOST = (
            os.environ.get("GITIMPROVE_HOST") or f"{zlib.crc32(os.uname().nodename.encode()):08x}"
        )
    return _HOST
