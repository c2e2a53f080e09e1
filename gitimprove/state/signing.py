"""Integrity tags on the note lines the harness writes (docs/integrity.md).

Every record the loop writes (`run`, `measure`) carries `"integrity": "<key id>:<hmac>"`: an
HMAC-SHA256 over the line's canonical JSON without `sig`, with a key of this repository kept
in `<git-common-dir>/improve/key` (mode 0600; the sandbox hides the whole git directory, so an
agent in it cannot read it). The key id is the start of the key's own hash, so a line signed
in another clone (brought by `sync`) is told apart from a forged one.

`classify` is how `doctor` reads every line, run by run: a run whose baseline record is signed
is a signed run, and every line of it — and every line without a run on one of its commits,
other than imported rows — must carry its key (and verify, when that key is ours). Lines of
runs from before signing, imports and the post-commit hook's records are unsigned, not forged.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gitimprove.util.keys import Key, load_key

__all__ = ["FIELD", "Key", "classify", "load_key", "tag", "verify"]

FIELD = "integrity"
_MASK = re.compile(r"\[REDACTED:[a-z0-9-]+(?::[0-9a-f]{4})?\]")


def canonical(record: Mapping[str, Any]) -> str:
    """The form a line is written in (state/records.make_line), without its tag."""
    body = {k: v for k, v in record.items() if k != FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tag(record: Mapping[str, Any], key: Key) -> str:
    return f"{key.id}:{key.mac(canonical(record))}"


def verify(record: Mapping[str, Any], key: Key) -> bool:
    sig = record.get(FIELD)
    return isinstance(sig, str) and hmac.compare_digest(sig, tag(record, key))


def key_id_of(record: Mapping[str, Any]) -> str | None:
    sig = record.get(FIELD)
    if not isinstance(sig, str) or ":" not in sig:
        return None
    return sig.split(":", 1)[0]


# --- doctor's reading --------------------------------------------------------------------------


@dataclass
class Verdict:
    verified: int = 0  # signed with our key, and it verifies
    foreign: int = 0  # signed in another clone (its key is not ours to check)
    masked: int = 0  # signed, then a secret in it was masked (the tag no longer matches)
    unsigned: int = 0  # runs from before signing, imports, hook records
    forged: list[tuple[str, str]] = field(default_factory=list)  # (commit, why)


def _line_status(record: Mapping[str, Any], run_key: str, key: Key | None) -> str:
    kid = key_id_of(record)
    if kid is None:
        return "unsigned"
    if kid != run_key:
        return "other key"
    if key is None or kid != key.id:
        return "foreign"
    if verify(record, key):
        return "verified"
    if _MASK.search(json.dumps(dict(record), ensure_ascii=False)):
        return "masked"
    return "bad tag"


def classify(notes: Mapping[str, list[dict[str, Any]]], key: Key | None) -> Verdict:
    """Every readable record of every note (commit -> records), judged as above."""
    run_keys: dict[str, str] = {}
    for records in notes.values():
        for rec in records:
            run, kid = rec.get("run"), key_id_of(rec)
            if rec.get("status") != "baseline" or not isinstance(run, str) or kid is None:
                continue
            if key is not None and kid == key.id:
                if verify(rec, key):
                    run_keys[run] = kid  # a baseline this repository's harness wrote wins
            else:
                run_keys.setdefault(run, kid)
    out = Verdict()
    for commit, records in notes.items():
        signed_here = {
            run_keys[r["run"]]
            for r in records
            if isinstance(r.get("run"), str) and r["run"] in run_keys
        }
        for rec in records:
            run = rec.get("run")
            if isinstance(run, str) and run in run_keys:
                status = _line_status(rec, run_keys[run], key)
                status = "unsigned in run" if status == "unsigned" else status
            elif signed_here and rec.get("import_id") is None and not isinstance(run, str):
                kid = key_id_of(rec)
                status = _line_status(rec, kid, key) if kid in signed_here else "no run"
            else:
                status = "unsigned" if key_id_of(rec) is None else _unknown_run(rec, key)
            if status == "verified":
                out.verified += 1
            elif status == "foreign":
                out.foreign += 1
            elif status == "masked":
                out.masked += 1
            elif status == "unsigned":
                out.unsigned += 1
            else:
                out.forged.append((commit, _WHY[status]))
    return out


def _unknown_run(record: Mapping[str, Any], key: Key | None) -> str:
    """A signed line of a run with no signed baseline (the baseline is elsewhere or lost)."""
    if key is not None and key_id_of(record) == key.id and not verify(record, key):
        return "masked" if _MASK.search(json.dumps(dict(record))) else "bad tag"
    return "verified" if key is not None and key_id_of(record) == key.id else "foreign"


_WHY = {
    "unsigned in run": "no integrity tag in a signed run",
    "other key": "tagged with another key than its run",
    "bad tag": "its integrity tag does not match",
    "no run": "a record without a run on a commit of a signed run",
}
