"""Test failpoints: `failpoint("after-log", "3.0")` dies like `kill -9` when the test asked.

A test sets `GITIMPROVE_FAILPOINT=<name>:<key>` in the run's environment; the point with that
name fires when its key matches, or when the test gave only the key's prefix before a dot
(`after-log:3` fires at `after-log` with key `3.0`, `3.1`, …). Nothing else in the package reads
the environment for tests.
"""

from __future__ import annotations

import os

_ENV = "GITIMPROVE_FAILPOINT"


def failpoint(name: str, key: str) -> None:
    wanted = os.environ.get(_ENV)
    if not wanted:
        return
    want_name, _, want_key = wanted.partition(":")
    if want_name != name:
        return
    if want_key == key or (want_key and "." not in want_key and key.split(".", 1)[0] == want_key):
        os._exit(137)
