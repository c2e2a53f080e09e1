"""Time stamps and host identity for records (cheap to import: used by hooks)."""

from __future__ import annotations

import os
import time
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime

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


def parse_utc(value: object) -> datetime.datetime | None:
    """A stored time stamp as an aware UTC datetime, or None when it is not one.

    Records come from other clones and other tools: a stamp without a zone is read as UTC, and
    anything that is not an ISO time (a number, garbage, a year out of range) is None."""
    import datetime  # here, not at the top: the hooks import this module for utc_now

    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.UTC)
    try:
        return moment.astimezone(datetime.UTC)
    except (OverflowError, ValueError):
        return None
