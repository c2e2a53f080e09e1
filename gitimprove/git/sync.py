"""`git improve sync`: share notes, memory, archive, sessions and run markers through any
git remote.

Entries captured by hooks wait in the local spool; they are moved onto the memory branch
first, so they travel too. Fetch is forced, but only onto scratch refs under
refs/improve/remotes/<remote>/; everything is merged locally (notes: union of lines per note;
memory: union of trees; archive: a merge commit; session and run markers: create what is
missing), then one non-forced `git push --atomic` that only creates the markers the remote
lacks. When the remote moved meanwhile, fetch and merge again, with jittered backoff. Nothing
is forced on the remote and no record on either side is lost; a marker both sides hold with
different values stays as each side has it and is reported.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field

import pygit2

from gitimprove.errors import ConflictError, GitImproveError
from gitimprove.git import archive, gitfiles, notes, objects, refs
from gitimprove.git.repo import RefMoved, Repo, cas_loop, update_refs
from gitimprove.git.trees import empty_tree, put_paths, walk_blobs
from gitimprove.util import proc
from gitimprove.util.lines import raw_lines

SHARED = (refs.NOTES, refs.MEMORY, refs.ARCHIVE)
# Create-only refs: a session's start/end, a run's base/stop.
MARKERS = (refs.SESSIONS_PREFIX, refs.RUNS_PREFIX)
_REJECTED = (
    "rejected",
    "non-fast-forward",
    "fetch first",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
)


# a fast-forward adopts the remote's commits; what they hold unmasked is masked on top
_MASK_NOTES = "gitimprove: mask secrets in notes synced from {}"
_MASK_MEMORY = "gitimprove: mask secrets in memory synced from {}"
# a push leaves out local versions (never pushed) that hold a secret: one masked commit
_PUBLISH = "gitimprove: records masked before pushing to {}"


@dataclass
class SyncReport:
    remote: str
    notes_lines_in: int = 0
    memory_entries_in: int = 0
    archive_merged: bool = False
    sessions_in: int = 0
    runs_in: int = 0
    flushed: int = 0
    conflicts: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    attempts: int = 0
    mode: str = "both"
    # ref -> local versions that held a secret, published as one masked commit instead
    masked_history: dict[str, int] = field(default_factory=dict)
    # experiment commits whose message holds a secret: the archive is not pushed
    held_messages: int = 0


def scratch_name(remote: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", remote).strip("._") or "remote"


def default_remote(repo: Repo) -> str:
    names = list(repo.raw.remotes.names())
    try:
        branch = repo.raw.head.shorthand
        upstream = repo.raw.config[f"branch.{branch}.remote"]
        if upstream in names:
            return str(upstream)
    except (KeyError, pygit2.GitError):
        pass
    if "origin" in names:
        return "origin"
    if len(names) == 1:
        return str(names[0])
    raise GitImproveError(
        "no remote to sync with" if not names else "several remotes and none is origin",
        hint="name one: git improve sync <remote>",
    )


def _git(repo: Repo, args: list[str]) -> proc.Result:
    planted = gitfiles.outside_problems()
    if planted:  # a remote needs the user's config (credentials, url rewrites, ssh)
        raise GitImproveError(
            "git would hang on or choke over files outside this repository: "
            + "; ".join(planted[:5]),
            hint="put the regular file back (`git improve doctor` names each), then sync again",
        )
    env = proc.clean_env(
        {"GIT_DIR": str(repo.git_dir), "GITIMPROVE_CHILD": "1", "GIT_TERMINAL_PROMPT": "0"}
    )
    # from the work tree, as the user's own git runs: a remote given as a relative path
    # (`git remote add origin ../shared.git`) resolves the same way
    return proc.git(args, cwd=repo.work_tree or repo.git_dir, env=env, timeout=300)


def fetch(repo: Repo, remote: str) -> dict[str, str]:
    """Forced fetch of the shared refs onto scratch refs; returns remote ref -> object id."""
    res = _git(repo, ["ls-remote", remote, *SHARED, *(f"{p}*" for p in MARKERS)])
    if not res.ok:
        raise GitImproveError(
            f"cannot reach the remote {remote!r}: {res.stderr.strip() or 'ls-remote failed'}",
            hint="check the remote name and the network; nothing was changed locally",
        )
    found: dict[str, str] = {}
    for line in res.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name in SHARED or name.startswith(MARKERS):
            found[name] = oid
    if found:
        specs = [
            f"+{name}:{refs.remote_scratch(scratch_name(remote), name)}" for name in sorted(found)
        ]
        res = _git(repo, ["fetch", "--no-tags", "--no-write-fetch-head", "--quiet", remote, *specs])
        if not res.ok:
            raise GitImproveError(
                f"fetching from {remote!r} failed: {res.stderr.strip()}",
                hint="nothing was merged; try again",
            )
    return found


def _tip_relation(repo: Repo, local: str | None, remote: str) -> str:
    if local is None:
        return "create"
    if local == remote or repo.raw.descendant_of(pygit2.Oid(hex=local), pygit2.Oid(hex=remote)):
        return "same"
    if repo.raw.descendant_of(pygit2.Oid(hex=remote), pygit2.Oid(hex=local)):
        return "fast-forward"
    return "merge"


def merge_notes(repo: Repo, remote_tip: str, remote: str) -> int:
    """Union of lines per note; returns how many lines came in."""

    def attempt() -> int:
        local = repo.ref_target(refs.NOTES)
        relation = _tip_relation(repo, local, remote_tip)
        theirs = dict(notes.iter_notes(repo, remote_tip))
        ours = dict(notes.iter_notes(repo, local)) if local else {}
        incoming = 0
        for commit, data in theirs.items():
            mine = set(raw_lines(ours.get(commit, b"").decode("utf-8", "replace")))
            incoming += sum(
                1
                for ln in raw_lines(data.decode("utf-8", "replace"))
                if ln.strip() and ln not in mine
            )
        if relation == "same":
            return 0
        if relation in ("create", "fast-forward"):
            tip = objects.adopt_masked(repo, remote_tip, local, _MASK_NOTES.format(remote))
            update_refs(repo, [(refs.NOTES, tip, local)], f"gitimprove: sync notes from {remote}")
            return incoming
        files: dict[str, pygit2.Oid | None] = {}
        for commit in sorted(set(ours) | set(theirs)):
            lines = raw_lines(ours.get(commit, b"").decode("utf-8", "replace"))
            seen = set(lines)
            for ln in raw_lines(theirs.get(commit, b"").decode("utf-8", "replace")):
                # a line another clone stored unmasked is the line we hold masked
                if ln not in seen and (masked := _masked(ln)) not in seen:
                    lines.append(masked)
                    seen.update((ln, masked))
            text = "".join(ln + "\n" for ln in lines if ln.strip())
            files[f"{commit[:2]}/{commit[2:]}"] = repo.write_blob(text)
        tree = notes.indexed(repo, put_paths(repo, None, files))
        assert local is not None
        merged = repo.create_commit(
            tree, f"gitimprove: merge notes from {remote}\n", [local, remote_tip]
        )
        update_refs(repo, [(refs.NOTES, merged, local)], f"gitimprove: sync notes from {remote}")
        return incoming

    return cas_loop(repo, attempt, what=refs.NOTES, lock="notes")


def _masked(line: str) -> str:
    from gitimprove.redaction import redact_blob

    return redact_blob(line.encode("utf-8")).decode("utf-8", "replace")


def _read(repo: Repo, oid: pygit2.Oid) -> bytes:
    blob = repo.raw[oid]
    assert isinstance(blob, pygit2.Blob)
    return blob.data


def merge_memory(repo: Repo, remote_tip: str, remote: str) -> int:
    """Union of the two trees (entries have unique names); returns entries that came in.

    Incoming entries are written again through the redactor (a clone running an older
    gitimprove may have stored them unmasked); a path both sides hold with different content
    was masked by `doctor --secrets --repair` on one side: both are masked again, so the
    masked version wins."""

    def attempt() -> int:
        local = repo.ref_target(refs.MEMORY)
        relation = _tip_relation(repo, local, remote_tip)
        their_tree = repo.commit(remote_tip).tree
        theirs = dict(walk_blobs(repo, their_tree))
        ours = dict(walk_blobs(repo, repo.commit(local).tree)) if local else {}
        new = {p: oid for p, oid in theirs.items() if p not in ours}
        if relation == "same":
            return 0
        if relation in ("create", "fast-forward"):
            tip = objects.adopt_masked(repo, remote_tip, local, _MASK_MEMORY.format(remote))
            update_refs(repo, [(refs.MEMORY, tip, local)], f"gitimprove: sync memory from {remote}")
            return len(new)
        assert local is not None
        changes: dict[str, pygit2.Oid | None] = {
            p: repo.write_blob(_read(repo, oid)) for p, oid in new.items()
        }
        for p, oid in theirs.items():
            if p in ours and ours[p] != oid:
                changes[p] = repo.write_blob(_read(repo, ours[p]))
        tree = put_paths(repo, repo.commit(local).tree, changes)
        merged = repo.create_commit(
            tree, f"gitimprove: merge memory from {remote}\n", [local, remote_tip]
        )
        update_refs(repo, [(refs.MEMORY, merged, local)], f"gitimprove: sync memory from {remote}")
        return len(new)

    return cas_loop(repo, attempt, what=refs.MEMORY, lock="memory")


def merge_archive(repo: Repo, remote_tip: str, remote: str) -> bool:
    def attempt() -> bool:
        local = repo.ref_target(refs.ARCHIVE)
        relation = _tip_relation(repo, local, remote_tip)
        if relation == "same":
            return False
        if relation in ("create", "fast-forward"):
            update_refs(
                repo, [(refs.ARCHIVE, remote_tip, local)], f"gitimprove: sync archive from {remote}"
            )
            return True
        assert local is not None
        merged = repo.create_commit(
            empty_tree(repo), f"{archive.MERGE_PREFIX} from {remote}\n", [local, remote_tip]
        )
        update_refs(
            repo, [(refs.ARCHIVE, merged, local)], f"gitimprove: sync archive from {remote}"
        )
        return True

    return cas_loop(repo, attempt, what=refs.ARCHIVE, lock="archive")


_RUN_FIELD = re.compile(rb'"run"\s*:\s*"([^"\\]{1,200})"')


def recorded_runs(repo: Repo) -> set[str]:
    """The runs some note line records. A run with markers but no record is a phantom (left
    by a run that failed before it started, in older versions): its markers are neither
    pushed nor taken in, so `doctor --repair` removing them is not undone by the next sync."""
    out: set[str] = set()
    for _, data in notes.iter_notes(repo):
        out.update(m.decode("utf-8", "replace") for m in _RUN_FIELD.findall(data))
    return out


def _shared_marker(name: str, runs: set[str]) -> bool:
    parsed = refs.parse(name)
    return parsed.kind != "run-marker" or parsed.run in runs


def merge_markers(
    repo: Repo,
    remote: str,
    fetched: dict[str, str],
    report: SyncReport,
    runs: set[str] | None = None,
) -> None:
    """Create the session and run markers this side lacks (not a phantom run's); never move
    one it has."""
    runs = recorded_runs(repo) if runs is None else runs
    for name, oid in sorted(fetched.items()):
        if not name.startswith(MARKERS) or not _shared_marker(name, runs):
            continue
        local = repo.ref_target(name)
        if local is None:
            try:
                update_refs(repo, [(name, oid, None)], f"gitimprove: marker from {remote}")
            except RefMoved:
                continue
            if name.startswith(refs.SESSIONS_PREFIX):
                report.sessions_in += 1
            else:
                report.runs_in += 1
        elif local != oid and name not in report.conflicts:
            report.conflicts.append(name)


def _local_markers(repo: Repo) -> list[str]:
    return sorted(n for n in repo.raw.references if n.startswith(MARKERS))


def secret_messages(repo: Repo, fetched: dict[str, str]) -> int:
    """How many commits gitimprove made (by their message: an attempt's `experiment(…)`, its
    own `gitimprove: …`) that a push of the archive would carry to a remote lacking them
    hold a secret in their message: written by an older gitimprove, they cannot be masked
    without changing their ids (the keys of their notes)."""
    from gitimprove.redaction import redact

    tip = repo.ref_target(refs.ARCHIVE)
    if tip is None or tip == fetched.get(refs.ARCHIVE):
        return 0
    walk = objects.commits(
        repo, [tip], hide=[fetched[refs.ARCHIVE]] if refs.ARCHIVE in fetched else []
    )
    return sum(1 for c in walk if c.message.startswith(_OURS) and redact(c.message) != c.message)


_OURS = ("experiment(", "experiment:", "experiment!:", "gitimprove:")


def push(
    repo: Repo,
    remote: str,
    fetched: dict[str, str],
    runs: set[str] | None = None,
    held: tuple[str, ...] = (),
) -> tuple[bool, list[str], str]:
    """One atomic, non-forced push of the shared refs (but `held`) and of the markers the
    remote lacks (not a phantom run's)."""
    runs = recorded_runs(repo) if runs is None else runs
    specs = [
        f"{name}:{name}" for name in SHARED if repo.ref_target(name) and not (held and name in held)
    ]
    specs += [
        f"{name}:{name}"
        for name in _local_markers(repo)
        if name not in fetched and _shared_marker(name, runs)
    ]
    if not specs:
        return True, [], ""
    res = _git(repo, ["push", "--atomic", "--no-verify", "--porcelain", remote, *specs])
    if res.ok:
        return True, [s.split(":")[0] for s in specs], ""
    text = res.stdout + res.stderr
    if any(r in text for r in _REJECTED):
        return False, [], text
    raise GitImproveError(
        f"pushing to {remote!r} failed: {res.stderr.strip() or res.stdout.strip()}",
        hint="the local records are merged and safe; run `git improve sync` again",
    )


def _flush_spool(repo: Repo) -> int:
    """Entries captured by hooks (the local spool) go onto the memory branch before sharing."""
    from gitimprove.memory.signals import flush

    return flush(repo)


def sync(
    repo: Repo, remote: str | None = None, *, mode: str = "both", tries: int = 12
) -> SyncReport:
    remote = remote or default_remote(repo)
    report = SyncReport(remote, mode=mode)
    delay = 0.1
    with repo.lock("sync", timeout=600):
        report.flushed = _flush_spool(repo)
        for attempt in range(1, tries + 1):
            report.attempts = attempt
            fetched = fetch(repo, remote)
            if refs.NOTES in fetched:
                report.notes_lines_in += merge_notes(repo, fetched[refs.NOTES], remote)
            if refs.MEMORY in fetched:
                report.memory_entries_in += merge_memory(repo, fetched[refs.MEMORY], remote)
            if refs.ARCHIVE in fetched:
                report.archive_merged |= merge_archive(repo, fetched[refs.ARCHIVE], remote)
            runs = recorded_runs(repo)  # after the notes came in
            merge_markers(repo, remote, fetched, report, runs)
            if mode == "pull":
                return report
            for ref in (refs.NOTES, refs.MEMORY):
                dropped = objects.publish_masked(
                    repo, ref, fetched.get(ref), _PUBLISH.format(remote)
                )
                if dropped:
                    report.masked_history[ref] = report.masked_history.get(ref, 0) + dropped
            report.held_messages = secret_messages(repo, fetched)
            held = (refs.ARCHIVE,) if report.held_messages else ()
            ok, pushed, _ = push(repo, remote, fetched, runs, held)
            if ok:
                report.pushed = pushed
                return report
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 5.0)
    raise ConflictError(
        f"the remote {remote!r} kept moving; {tries} tries did not get the records pushed",
        hint="the local side holds the union; run `git improve sync` again",
    )
