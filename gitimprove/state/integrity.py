"""What `git improve doctor` checks of evaluation integrity (docs/integrity.md).

- processes a killed run left behind (found by their token), killed by `--repair`;
- incidents the loop logged when it stopped because something changed the user's repository
  or the run's refs (`<git-common-dir>/improve/integrity.jsonl`), marked reviewed by `--repair`;
- run branches holding a commit the harness did not keep, and keep records for commits that
  are not on their run's branch (a forged note).
"""

from __future__ import annotations

import json
import os
from typing import Any

from gitimprove.git import objects, pending, refs, witness
from gitimprove.git.notes import iter_notes
from gitimprove.git.repo import Repo
from gitimprove.state import signing
from gitimprove.state.experiments import all_experiments
from gitimprove.state.findings import Finding
from gitimprove.state.records import parse_note
from gitimprove.util import flocks, reaper
from gitimprove.util.alive import pid_alive
from gitimprove.util.clock import utc_now
from gitimprove.util.files import append_state, read_state, state_kind
from gitimprove.util.keys import KEY_FILE

INCIDENTS = "integrity.jsonl"


def log_incident(repo: Repo, run: str, what: str, paths: list[str]) -> None:
    """One line, signed with the repository's key (as the records are, state/signing.py): a
    line no gitimprove process wrote is told apart by `doctor`."""
    record: dict[str, Any] = {"ts": utc_now(), "run": run, "what": what, "paths": paths}
    path = repo.improve_dir / INCIDENTS
    path.parent.mkdir(parents=True, exist_ok=True)
    key = signing.load_key(repo.improve_dir)
    if key is not None:
        record[signing.FIELD] = signing.tag(record, key)
    append_state(path, (json.dumps(record, sort_keys=True) + "\n").encode("utf-8"))


def incidents(repo: Repo) -> list[dict[str, Any]]:
    """The incidents gitimprove logged: lines signed with this repository's key, and unsigned
    lines of the form it wrote before it signed them (`forged_incidents` counts the rest)."""
    return _read_incidents(repo)[0]


def forged_incidents(repo: Repo) -> int:
    """Lines of the incident log no gitimprove process wrote: a tag that does not verify, or
    not the form of an incident."""
    return _read_incidents(repo)[1]


def _read_incidents(repo: Repo) -> tuple[list[dict[str, Any]], int]:
    try:
        lines = read_state(repo.improve_dir / INCIDENTS).decode("utf-8", "replace").splitlines()
    except OSError:
        return [], 0
    key = signing.load_key(repo.improve_dir, create=False)
    out, forged = [], 0
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            forged += 1
            continue
        shaped = (
            isinstance(obj, dict)
            and all(isinstance(obj.get(k), str) for k in ("ts", "run", "what"))
            and isinstance(obj.get("paths"), list)
        )
        if not shaped or (signing.FIELD in obj and (key is None or not signing.verify(obj, key))):
            forged += 1
        else:
            out.append(obj)
    return out, forged


def _survivors(repo: Repo, repair: bool) -> Finding:
    key = reaper.repo_key(repo.common_dir)
    prefix = reaper.run_prefix(key)
    alive = reaper.alive_with_prefix(prefix)
    stale = [
        pid
        for pid in alive
        if (t := reaper.token_of(pid)) is not None
        and (h := reaper.Token(t).harness_pid) is not None
        and not _alive(h)
    ]
    stale += [pid for pid in reaper.marked_orphans() if pid not in stale]
    if not stale:  # one that changes pid every millisecond is in no table of every process
        stale = sorted(reaper.hunt_marked(kill=False))
    if not stale:
        return Finding("processes", True, "no process of an interrupted run is alive")
    f = Finding(
        "processes",
        False,
        f"{len(stale)} process(es) of an interrupted run are still alive (pids "
        + ", ".join(map(str, stale[:10]))
        + ")",
        "git improve doctor --repair kills them (so does `git improve run --resume`)",
    )
    if repair:
        reaper.kill_survivors(key)
        f.repaired = True
    return f


def _alive(pid: int) -> bool:
    return pid_alive(pid)


def _incidents(repo: Repo, repair: bool) -> Finding:
    found, forged = _read_incidents(repo)
    if forged:
        f = Finding(
            "integrity",
            False,
            f"{forged} line(s) of .git/improve/{INCIDENTS} were not written by gitimprove "
            "(a tag that does not verify, or not an incident)"
            + (f"; {len(found)} incident(s) it logged" if found else ""),
            "something rewrote gitimprove's incident log: check what ran without the sandbox; "
            "`git improve doctor --repair` sets the log aside as reviewed",
        )
        if repair:
            _set_aside(repo, f)
        return f
    if not found:
        return Finding("integrity", True, "no run was stopped by a change outside the harness")
    last = found[-1]
    f = Finding(
        "integrity",
        False,
        f"{len(found)} run stop(s) because something outside the harness changed what it relies "
        f"on; last: run {last.get('run')} at {last.get('ts')}: {last.get('what')}: "
        + ", ".join(str(p) for p in (last.get("paths") or [])[:10]),
        "check those paths (git status, git for-each-ref, .git/config, .git/hooks; `git ls-files "
        "-v` marks a skip-worktree file S, an assume-unchanged one h), undo what you did not intend; then `git improve doctor --repair` marks them reviewed",
    )
    if repair:
        _set_aside(repo, f)
    return f


def _set_aside(repo: Repo, f: Finding) -> None:
    """`--repair` sets the incident log aside as reviewed, except while a run of this
    repository is under way: its watch of gitimprove's folder (git/strays.py) cannot tell
    that move from one its measured code made, and would undo it and blame the attempt."""
    if flocks.run_held(repo.improve_dir):
        f.fix = "a run is under way: run `git improve doctor --repair` again once it is done"
        return
    path = repo.improve_dir / INCIDENTS
    try:
        lines = read_state(path)
    except FileNotFoundError:
        return
    except OSError:  # not a regular file (a FIFO, a link): set aside as it is, never read
        os.replace(path, path.with_suffix(f".reviewed.{os.urandom(3).hex()}"))
        f.repaired = True
        return
    if lines and not lines.endswith(b"\n"):
        lines += b"\n"
    # appended to what earlier repairs set aside (never replacing it), then removed: an
    # interruption between the two leaves a line twice, never none
    append_state(path.with_suffix(".reviewed.jsonl"), lines)
    path.unlink()
    f.repaired = True


def _run_branches(repo: Repo) -> list[Finding]:
    runs = repo.markers(refs.RUNS_PREFIX, "run")
    if not runs:
        return []
    keeps: dict[str, set[str]] = {}
    for e in all_experiments(repo):
        if e.run and e.is_keep:
            keeps.setdefault(e.run, set()).add(e.commit)
    # Only runs this repository ran are judged: a run synced from another clone has its
    # branch there (or here only as it was when last fetched), and its keeps arrive as notes.
    locks = repo.improve_dir / "locks"
    ran_here = {p.name[len("run-") : -len(".lock")] for p in locks.glob("run-*.lock")}
    out = []
    judged = 0
    for run, markers in sorted(runs.items()):
        base, tip = markers.get("base"), repo.ref_target(refs.run_branch(run))
        if run not in ran_here or tip is None:
            continue
        judged += 1
        on_branch: set[str] = set()
        unkept = []
        while tip is not None and tip != base:
            on_branch.add(tip)
            if tip not in keeps.get(run, set()):
                unkept.append(tip)
            parents = repo.commit(tip).parent_ids
            tip = str(parents[0]) if parents else None
        forged = sorted(keeps.get(run, set()) - on_branch)
        if unkept or forged:
            what = []
            if unkept:
                what.append(
                    f"improve/{run} holds {len(unkept)} commit(s) the loop did not keep ("
                    + ", ".join(c[:10] for c in unkept[:5])
                    + ")"
                )
            if forged:
                what.append(
                    f"{len(forged)} keep record(s) of run {run} are not on its branch ("
                    + ", ".join(c[:10] for c in forged[:5])
                    + ")"
                )
            out.append(
                Finding(
                    "run branches",
                    False,
                    "; ".join(what),
                    "something other than the loop wrote these refs or notes; inspect with "
                    f"`git log --first-parent improve/{run}` and `git notes --ref=improve show`",
                )
            )
    if not out:
        other = len(runs) - judged
        out.append(
            Finding(
                "run branches",
                True,
                f"{judged} run branch(es) hold only kept commits"
                + (f"; {other} run(s) from other clones not judged here" if other else ""),
            )
        )
    return out


def _local_runs(repo: Repo) -> set[object]:
    """The runs this repository ran itself (their base ref is here)."""
    prefix = "refs/improve/runs/"
    return {
        name[len(prefix) : -len("/base")]
        for name in repo.raw.references
        if name.startswith(prefix) and name.endswith("/base")
    }


def _key_replaced(
    repo: Repo, key: signing.Key | None, found: dict[str, list[dict[str, Any]]], none_ok: bool
) -> Finding | None:
    """The key file is not the key the records were signed with (a FIFO, a folder, other
    bytes, when no record verifies and some fail): say so, rather than call every honest
    record forged."""
    kind = state_kind(repo.improve_dir / KEY_FILE)
    ids = {signing.key_id_of(r) for lines in found.values() for r in lines} - {None}
    if kind is None and not (none_ok and ids and (key is None or key.id not in ids)):
        return None
    what = f"a {kind}" if kind is not None else "a key no record was signed with"
    return Finding(
        "signatures",
        False,
        f".git/improve/{KEY_FILE} is {what}, not the key this repository's records were signed "
        f"with ({', '.join(sorted(str(i) for i in ids))}): the key was replaced (an agent "
        "without the sandbox?), which says nothing against the records; they cannot be checked",
        f"move .git/improve/{KEY_FILE} aside and put back the original key from a backup if "
        "you have one (runs write a new key otherwise; older records then show as signed in "
        "another clone)",
    )


def _signatures(repo: Repo) -> Finding | None:
    """Every record checked against its integrity tag (state/signing.py)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for commit, data in iter_notes(repo):
        lines = parse_note(data.decode("utf-8", errors="replace")).lines
        if lines:
            found[commit] = lines
    if not found:
        return None
    key = signing.load_key(repo.improve_dir, create=False)
    v = signing.classify(found, key)
    local = {r.get("run") for lines in found.values() for r in lines} & _local_runs(repo)
    suspect = not v.verified and (bool(v.forged) or (bool(v.foreign) and bool(local)))
    replaced = _key_replaced(repo, key, found, suspect)
    if replaced is not None:
        return replaced
    parts = [f"{v.verified} record(s) written by this repository's harness verify"]
    if v.foreign:
        parts.append(f"{v.foreign} signed in another clone")
    if v.masked:
        parts.append(f"{v.masked} signed, then masked by a secrets repair")
    if v.unsigned:
        parts.append(f"{v.unsigned} unsigned (imports, hook records, runs from before signing)")
    if not v.forged:
        return Finding("signatures", True, "; ".join(parts))
    shown = ", ".join(f"{c[:10]} ({why})" for c, why in v.forged[:5])
    return Finding(
        "signatures",
        False,
        f"{len(v.forged)} record(s) the harness did not write: {shown}; " + "; ".join(parts),
        "something other than the loop wrote these notes; inspect them with "
        "`git notes --ref=improve show <commit>` and do not trust those results",
    )


def _witnessed_refs(repo: Repo) -> Finding | None:
    """gitimprove's refs against where gitimprove last left them (git/witness.py)."""
    current = {}
    for name in repo.raw.references:
        if witness.watched(name):
            target = repo.ref_target(name)
            if target is not None:
                current[name] = target
    if not current:
        return None
    stale = witness.stale(repo.improve_dir, current)
    if not stale:
        return Finding(
            "refs", True, f"{len(current)} gitimprove ref(s) are where gitimprove left them"
        )
    return Finding(
        "refs",
        False,
        f"{len(stale)} gitimprove ref(s) moved outside gitimprove: " + "; ".join(stale[:5]),
        "something other than gitimprove wrote these refs; inspect them with `git log <ref>` "
        "and put back what you did not intend (`git update-ref <ref> <commit>`)",
    )


def _outstanding(repo: Repo, repair: bool) -> Finding | None:
    """Snapshots left by an agent call whose run was killed before it compared them
    (git/pending.py), with what differs now; `--repair` accepts them."""
    found = pending.outstanding(repo)
    if not found:
        return None
    paths = [p for item in found for p in item.changes]
    if not paths:
        f = Finding(
            "watch",
            True,
            f"{len(found)} agent call(s) of a killed run left a snapshot: nothing changed since",
        )
    else:
        runs = ", ".join(sorted({item.run for item in found}))
        f = Finding(
            "watch",
            False,
            f"your repository changed while an agent of run {runs} worked and the run was "
            f"killed before it could look: " + ", ".join(paths[:10]),
            pending.HINT,
        )
    if repair:
        pending.accept(found)
        f.repaired = True
    return f


def checks(repo: Repo, repair: bool) -> list[Finding]:
    survivors = _survivors(repo, repair)  # killed (with --repair) before anything is compared
    watched = _outstanding(repo, repair)
    sig = _signatures(repo)
    moved = _witnessed_refs(repo)
    packed = _packed_refs(repo, repair)
    return [
        survivors,
        _incidents(repo, repair),
        *([watched] if watched else []),
        *_run_branches(repo),
        *([moved] if moved else []),
        *([sig] if sig else []),
        _objects(repo, repair),
        *([packed] if packed else []),
    ]


def _packed_refs(repo: Repo, repair: bool) -> Finding | None:
    """A `packed-refs` holding what git would not write (git/watch.py): a line git dies on
    (every git command fails), or one that carries what no ref holds."""
    from gitimprove.git.watch import packed_refs_problem

    try:
        odd = packed_refs_problem(repo, repair=repair)
    except OSError:
        return None
    if odd is None:
        return None
    f = Finding(
        "packed-refs",
        False,
        f".git/packed-refs holds what git would not write ({odd})",
        "git improve doctor --repair (writes it again as git does, every ref kept)",
    )
    f.repaired = repair
    return f


def _objects(repo: Repo, repair: bool) -> Finding:
    """Loose objects that do not hold what their names say (an agent without a sandbox can
    plant one under the name of a blob the harness is about to write)."""
    bad = objects.bad_loose_objects(repo)
    if not bad:
        return Finding("objects", True, "every loose object holds what its name says")
    f = Finding(
        "objects",
        False,
        f"{len(bad)} loose object(s) do not hold what their names say: "
        + ", ".join(f".git/objects/{n[:2]}/{n[2:]}" for n in bad[:5]),
        "git improve doctor --repair (moves them to .git/improve/quarantine/)",
    )
    if repair:
        objects.quarantine(repo, bad)
        f.repaired = True
    return f
