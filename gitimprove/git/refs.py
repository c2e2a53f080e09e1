"""Every ref name gitimprove uses, parsed and formatted here and nowhere else (STYLE.md §6)."""

from __future__ import annotations

import re

NOTES = "refs/notes/improve"
MEMORY = "refs/heads/improve/memory"
ARCHIVE = "refs/improve/archive"
RUNS_PREFIX = "refs/improve/runs/"
SESSIONS_PREFIX = "refs/improve/sessions/"
REMOTES_PREFIX = "refs/improve/remotes/"
RUN_BRANCH_PREFIX = "refs/heads/improve/"

RESERVED_RUNS = frozenset({"memory"})
_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-z]{8}-[0-9a-z]{4}$")
_MARKERS = ("base", "stop")
_SESSION_ENDS = ("start", "end")


def check_run_name(run: str) -> str:
    from gitimprove.errors import GitImproveError

    if not _RUN_NAME.match(run) or run.endswith(".lock") or ".." in run:
        raise GitImproveError(
            f"{run!r} is not a usable run name",
            hint="use up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    if run in RESERVED_RUNS:
        raise GitImproveError(f"{run!r} is reserved", hint="choose another run name")
    return run


def run_branch(run: str) -> str:
    return RUN_BRANCH_PREFIX + check_run_name(run)


def run_marker(run: str, marker: str) -> str:
    if marker not in _MARKERS:
        raise ValueError(f"unknown run marker {marker!r}")
    return f"{RUNS_PREFIX}{check_run_name(run)}/{marker}"


def check_session_id(sid: str) -> str:
    if not _SID.match(sid):
        raise ValueError(f"{sid!r} is not a session id (YYYYMMDDTHHMMSSZ-<host8>-<rand4>)")
    return sid


def session_ref(sid: str, end: str) -> str:
    if end not in _SESSION_ENDS:
        raise ValueError(f"unknown session boundary {end!r}")
    return f"{SESSIONS_PREFIX}{check_session_id(sid)}/{end}"


def remote_scratch(remote: str, ref: str) -> str:
    """Where a forced fetch of `ref` from `remote` lands: refs/improve/remotes/<remote>/<rest>."""
    if not ref.startswith("refs/"):
        raise ValueError(f"{ref!r} is not a full ref name")
    return f"{REMOTES_PREFIX}{remote}/{ref[len('refs/') :]}"


class ParsedRef:
    """What a ref name means. kind: notes | memory | archive | run-branch | run-marker |
    session | remote | other. (A plain class: dataclasses cost the hooks 10 ms to import.)"""

    __slots__ = ("kind", "marker", "run", "session")

    def __init__(
        self,
        kind: str,
        run: str | None = None,
        marker: str | None = None,
        session: str | None = None,
    ) -> None:
        self.kind, self.run, self.marker, self.session = kind, run, marker, session

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParsedRef) and (
            self.kind,
            self.run,
            self.marker,
            self.session,
        ) == (other.kind, other.run, other.marker, other.session)

    def __hash__(self) -> int:
        return hash((self.kind, self.run, self.marker, self.session))

    def __repr__(self) -> str:
        return f"ParsedRef({self.kind!r}, run={self.run!r}, marker={self.marker!r}, session={self.session!r})"


def parse(name: str) -> ParsedRef:
    if name == NOTES:
        return ParsedRef("notes")
    if name == MEMORY:
        return ParsedRef("memory")
    if name == ARCHIVE:
        return ParsedRef("archive")
    if name.startswith(RUN_BRANCH_PREFIX):
        return ParsedRef("run-branch", run=name[len(RUN_BRANCH_PREFIX) :])
    if name.startswith(RUNS_PREFIX):
        run, _, marker = name[len(RUNS_PREFIX) :].rpartition("/")
        return ParsedRef("run-marker", run=run, marker=marker)
    if name.startswith(SESSIONS_PREFIX):
        sid, _, end = name[len(SESSIONS_PREFIX) :].rpartition("/")
        return ParsedRef("session", session=sid, marker=end)
    if name.startswith(REMOTES_PREFIX):
        return ParsedRef("remote")
    return ParsedRef("other")
