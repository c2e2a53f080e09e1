"""`git improve doctor --secrets`: secrets already stored in gitimprove's records.

Everything written since redaction runs at `Repo.write_blob` / `Repo.create_commit` (and
tree entry names at `trees.put_paths`) is masked, but records written before (or fetched from a clone running an older gitimprove)
may hold secrets. This scans every gitimprove ref: the notes and the memory branch (imports
included) at their tips and through their history, contents and entry names alike, and the messages of every commit
gitimprove made (experiment attempts, archive, notes and memory commits). `--repair` writes
the tips again through the redactor, as one new commit per ref (compare-and-swap, like every
write). What a new commit cannot undo (old versions in the history, commit messages) is
explained, never rewritten behind the user's back: pushed history lives on in other clones,
and the only real fix for a leaked credential is to revoke it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gitimprove.git import objects, refs
from gitimprove.git.repo import Repo, cas_loop, update_refs
from gitimprove.redaction import engine, redact, redact_blob, redact_path
from gitimprove.redaction.engine import MARKER
from gitimprove.state.findings import Finding

RECORD_REFS = (refs.NOTES, refs.MEMORY)
DOCS = "docs/secrets.md"


@dataclass
class Leak:
    place: str  # note | memory | import | commit message
    where: str  # the annotated commit (notes), the entry path (memory), the commit id
    markers: list[str]  # what the secrets become once masked (never the secrets)


@dataclass
class SecretsScan:
    current: list[Leak] = field(default_factory=list)  # a --repair masks these
    messages: list[Leak] = field(default_factory=list)  # only a history rewrite removes these
    history: dict[str, int] = field(default_factory=dict)  # ref -> old versions with secrets
    shared: dict[str, list[str]] = field(default_factory=dict)  # ref -> remotes that have it
    repaired: dict[str, list[str]] = field(default_factory=dict)  # ref -> paths masked


def _new_markers(before: str, after: str) -> list[str]:
    pattern = engine.compiled(MARKER, 0)
    old = set(pattern.findall(before))
    return [m for m in pattern.findall(after) if m not in old]


def _leak(ref: str, path: str, data: bytes) -> Leak | None:
    """A record holding a secret in its content or in its path (an entry name a remote or
    an older gitimprove chose); `where` names it by its masked path."""
    masked = redact_blob(data)
    name = redact_path(path)
    if masked == data and name == path:
        return None
    markers = _new_markers(data.decode("utf-8", "replace"), masked.decode("utf-8", "replace"))
    markers += _new_markers(path, redact(path))
    if ref == refs.NOTES:
        return Leak("note", name.replace("/", ""), markers)
    return Leak("import" if name.startswith("imports/") else "memory", name, markers)


def _secret_names(paths: set[str]) -> int:
    return sum(redact_path(p) != p for p in paths)


def scan(repo: Repo) -> SecretsScan:
    out = SecretsScan()
    known: set[str] = set()  # blobs of the local records' history, counted there
    named: set[str] = set()  # paths of the local records' history, counted there
    for ref in RECORD_REFS:
        at_tip = set()
        tip_paths = set()
        for oid, path, data in objects.tip_blobs(repo, ref):
            at_tip.add(oid)
            tip_paths.add(path)
            leak = _leak(ref, path, data)
            if leak is not None:
                out.current.append(leak)
        old = 0
        for oid, _, data in objects.history_blobs(repo, ref):
            known.add(oid)
            old += oid not in at_tip and redact_blob(data) != data
        paths = objects.history_paths(repo, ref)
        named |= paths
        old += _secret_names(paths - tip_paths)
        if old:
            out.history[ref] = old
        remotes = objects.known_remotes(repo, ref)
        if remotes:
            out.shared[ref] = remotes
    for copy in objects.record_copies(repo):  # fetched, not (yet) merged: only history here
        fetched = 0
        for oid, _, data in objects.history_blobs(repo, copy):
            if oid not in known:
                known.add(oid)
                fetched += redact_blob(data) != data
        fetched += _secret_names(objects.history_paths(repo, copy) - named)
        if fetched:
            out.history[copy] = fetched
    copies, users = objects.remote_tips(repo)
    own = [t for r in objects.gitimprove_refs(repo) if (t := repo.ref_target(r))] + copies
    seen: set[str] = set()
    walks = (
        (objects.commits(repo, own), False),
        # commits only a remote-tracking branch reaches (an experiment kept and pushed
        # from another clone): gitimprove's by their message
        (objects.commits(repo, users, hide_remote=False), True),
    )
    for walk, by_message in walks:
        for commit in walk:
            if str(commit.id) in seen or (by_message and not _ours(commit.message)):
                continue
            seen.add(str(commit.id))
            masked = redact(commit.message)
            if masked != commit.message:
                out.messages.append(
                    Leak("commit message", str(commit.id), _new_markers(commit.message, masked))
                )
    return out


def _ours(message: str) -> bool:
    """A message gitimprove writes: an attempt's `experiment(<scope>): …` or its own."""
    return message.startswith(("experiment(", "experiment:", "experiment!:", "gitimprove:"))


def repair(repo: Repo) -> dict[str, list[str]]:
    """Mask the tips of the notes and the memory branch, one new commit each."""
    out = {}
    for ref, lock, what in (
        (refs.NOTES, "notes", "experiment notes"),
        (refs.MEMORY, "memory", "memory entries"),
    ):
        changed = objects.rewrite_tip(repo, ref, f"gitimprove: mask secrets in {what}", lock=lock)
        if changed:
            out[ref] = changed
    return out


def drop_history(repo: Repo) -> tuple[list[str], dict[str, list[str]]]:
    """`--drop-history`: the notes and the memory branch, when their history holds a secret
    and no remote this clone knows of has them, become one commit each holding their tip's
    tree (masked by `repair` first), so their old versions are reachable from no ref
    (gitimprove reads only the tips). A ref that was pushed is left as it is: the remote and
    every clone keep the old versions, and the next sync would merge them back.
    Returns (refs dropped, ref -> remotes for the refs left)."""
    found = scan(repo)
    dropped: list[str] = []
    pushed: dict[str, list[str]] = {}
    for ref, lock in ((refs.NOTES, "notes"), (refs.MEMORY, "memory")):
        if ref not in found.history:
            continue
        if found.shared.get(ref):
            pushed[ref] = found.shared[ref]
            continue

        def attempt(ref: str = ref) -> bool:
            tip = repo.ref_target(ref)
            if tip is None:
                return False
            message = f"gitimprove: {ref}, history holding secrets dropped"
            new = repo.create_commit(repo.commit(tip).tree.id, message + "\n", [])
            update_refs(repo, [(ref, new, tip)], message)
            return True

        if cas_loop(repo, attempt, what=ref, lock=lock):
            dropped.append(ref)
    return dropped, pushed


def _listed(items: list[str], limit: int = 8) -> str:
    more = f", and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def check(repo: Repo, fix: bool, *, drop: bool = False) -> list[Finding]:
    """`doctor --secrets`: records are masked with --repair; old versions and commit
    messages can only be removed by rewriting history, which is explained (and, with
    `--drop-history`, done for the notes and the memory branch when they were never
    pushed)."""
    repaired = repair(repo) if fix else {}
    dropped, kept = drop_history(repo) if fix and drop else ([], {})
    found = scan(repo)
    out: list[Finding] = []
    revoke = "revoke the credential: anyone with this repository or its remote could read it"
    if dropped:
        f = Finding(
            "secrets in history",
            False,
            f"the history of {', '.join(dropped)} held secrets; each is now one commit holding "
            "its masked records",
        )
        f.repaired = True
        out.append(f)
        out.append(
            Finding(
                "secrets in history",
                False,
                "the old versions stay in this repository's reflog and objects until they expire",
                "git reflog expire --expire=now --all && git gc --prune=now removes them now "
                f"(every ref's reflog) ({DOCS})",
            )
        )
    for ref, remotes in kept.items():
        out.append(
            Finding(
                "secrets in history",
                False,
                f"the history of {ref} was not dropped: it was pushed to {', '.join(remotes)}",
                f"{revoke}; the remote and every clone keep the old versions ({DOCS})",
            )
        )
    if repaired:
        n = sum(len(v) for v in repaired.values())
        f = Finding("secrets", False, f"{n} record(s) held a secret; masked in a new commit")
        f.repaired = True
        out.append(f)
    if found.current:
        where = [f"{x.place} {x.where[:40]} {' '.join(x.markers)}" for x in found.current]
        out.append(
            Finding(
                "secrets",
                False,
                f"{len(found.current)} record(s) hold a secret: {_listed(where)}",
                f"git improve doctor --secrets --repair masks them in a new commit; {revoke}",
            )
        )
    elif not repaired:
        out.append(Finding("secrets", True, "no secret in the notes or the memory branch"))
    if found.messages:
        where = [f"{x.where[:10]} {' '.join(x.markers)}" for x in found.messages]
        out.append(
            Finding(
                "secrets in messages",
                False,
                f"{len(found.messages)} commit message(s) gitimprove wrote hold a secret: "
                + _listed(where),
                f"{revoke}; a message is part of its commit's id, so only rewriting history "
                f"removes it ({DOCS})",
            )
        )
    for ref, count in found.history.items():
        remotes = found.shared.get(ref, [])
        pushed = f"; pushed to {', '.join(remotes)}" if remotes else ""
        out.append(
            Finding(
                "secrets in history",
                False,
                f"{count} old version(s) of records in the history of {ref} hold a secret" + pushed,
                f"{revoke}; a new commit does not remove old ones: rewriting the history of "
                f"{ref} does" + (" in every clone" if remotes else "") + f" ({DOCS})",
            )
        )
    return out
