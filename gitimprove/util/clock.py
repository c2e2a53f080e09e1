"""Time stamps and host identity for records."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import socket

_HOST: str | None = None


def utc_now() -> str:
    """UTC ISO time with microseconds, e.g. 2026-11-22T05:52:01.123456Z.

    GITIMPROVE_FAKE_NOW fixes it (tests and golden output)."""
    fake = os.environ.get("GITIMPROVE_FAKE_NOW")
    if fake:
        return fake
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def host_id() -> str:
    """8 hex characters naming this machine, stable across runs."""
    global _HOST
    if _HOST is None:
        override = os.environ.get("GITIMPROVE_HOST")
        _HOST = override or hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    return _HOST
