"""`git improve reflect` (seed 003's /reflect): turn captured signals into approved learnings.

1 gather captured signals (near-duplicates grouped, recurrence across sessions raising
confidence), 2 drop what CLAUDE.md (global and project), approved learnings and proposals
already say, 3 classify scope (project/global), kind (agent-side/project-side) and category,
4-6 present oldest first and write each answer at once (a backup before CLAUDE.md changes),
7 mark the signals promoted or dismissed with events. Nothing is applied unasked.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitimprove.errors import GitImproveError
from gitimprove.git import memory
from gitimprove.git.repo import Repo
from gitimprove.memory import entries, render, signals
from gitimprove.memory.spool import entry_name
from gitimprove.redaction import clip, redact
from gitimprove.util.clock import host_id, utc_now

TARGETS = ("project", "global", "proposal")
PROJECT_SIDE = {"project_friction", "discovery", "failure"}
SECTION = "## Learnings (git improve reflect)"
LIST_TTL_DAYS = 14  # how old a captured signal `reflect` still shows


@dataclass
class Candidate:
    id: str
    type: str
    content: str
    context: str
    category: str
    scope: str
    kind: str
    confidence: int
    sessions: int
    first_seen: str
    signal_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def claude_md_paths(work_tree: Path | None) -> dict[str, Path]:
    home = Path(os.environ.get("HOME", str(Path.home())))
    paths = {"global": home / ".claude" / "CLAUDE.md"}
    if work_tree is not None:
        dotclaude = work_tree / ".claude" / "CLAUDE.md"
        paths["project"] = (
            dotclaude
            if dotclaude.exists() and not (work_tree / "CLAUDE.md").exists()
            else work_tree / "CLAUDE.md"
        )
    return paths


def _known_texts(repo: Repo) -> list[str]:
    texts: list[str] = []
    for path in claude_md_paths(repo.work_tree).values():
        try:
            texts += [
                ln.strip("-* \t")
                for ln in path.read_text(encoding="utf-8").splitlines()
                if ln.strip()
            ]
        except OSError:
            pass
    for lrn in render.learnings(repo):
        texts.append(str(lrn.get("body", "")))
    for proposal in entries.markdown(repo, "proposals"):
        texts += [ln for ln in str(proposal.get("body", "")).splitlines() if ln.strip()]
    return texts


def _scope(g: signals.Group) -> str:
    content = str(g.first.get("content", ""))
    source = g.first.get("source") if isinstance(g.first.get("source"), dict) else {}
    project_specific = (
        bool(source and source.get("file"))  # about a file of this project
        or "/" in content
        or "`" in content
        or any(w in content.lower() for w in ("this project", "this repo", "in this codebase"))
    )
    return (
        "global" if g.first.get("category") == "preference" and not project_specific else "project"
    )


def candidates(
    repo: Repo,
    *,
    ttl_days: int = LIST_TTL_DAYS,
    bad: list[entries.BadEntry] | None = None,
    drop_known: bool = True,
) -> tuple[list[Candidate], int]:
    """Candidates oldest first, and how many were dropped as already known (signals that
    cannot be read go to `bad`). `drop_known=False` keeps those too: a candidate the user
    was shown stays reachable after another one like it was applied."""
    signals.flush(repo)
    known = _known_texts(repo) if drop_known else []
    out = []
    dropped = 0
    for g in signals.groups(signals.all_signals(repo, bad=bad), ttl_days=ttl_days):
        if g.status != "captured" or g.first.get("type") == "summary":
            continue
        content = str(g.first.get("content", ""))
        if any(
            signals.similar(content, k, 0.6) or content.strip().lower() in k.lower()
            for k in known
            if k
        ):
            dropped += 1
            continue
        out.append(
            Candidate(
                id=g.id,
                type=str(g.first.get("type")),
                content=content,
                context=str(g.first.get("context", "")),
                category=str(g.first.get("category", "preference")),
                scope=_scope(g),
                kind="project-side" if g.first.get("type") in PROJECT_SIDE else "agent-side",
                confidence=g.confidence,
                sessions=len(g.sessions),
                first_seen=str(g.first.get("ts", "")),
                signal_ids=[str(s["id"]) for s in g.signals],
            )
        )
    return out, dropped


def _find(repo: Repo, cid: str) -> Candidate:
    """The captured candidate `cid` names (its id or one of its signals'). What is already
    known is not dropped here: applying one of the listed candidates puts its words in
    CLAUDE.md and the learnings, and a listed candidate that resembles it must still be
    found when its turn comes."""
    # the list's own view first: the candidate as it was shown, with every signal in it (a
    # wider view brings old signals back, which can group the shown ones otherwise); then
    # the wider one, for an id listed before its signals left the view
    for ttl in (LIST_TTL_DAYS, 10_000):
        cands, _ = candidates(repo, ttl_days=ttl, drop_known=False)
        for c in cands:
            if c.id == cid or cid in c.signal_ids:
                return c
    raise GitImproveError(
        f"no captured signal {cid!r} is waiting for review", hint="see `git improve reflect --list`"
    )


def _backup(repo: Repo, path: Path) -> Path | None:
    if not path.exists():
        return None
    folder = repo.common_dir / "improve" / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = utc_now().replace(":", "").replace("-", "")
    dest = folder / f"{path.name}.{stamp}.{host_id()}"
    # its bytes alone, into a file made anew: an extended attribute or a mode bit copied with
    # them (`copy2`) would make the backup a stray of gitimprove's folder (git/strays.py), and
    # a link planted under the name would have the copy written wherever it points
    data = path.read_bytes()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(dest, flags, 0o644)
    except FileExistsError:
        dest.unlink()  # a link is removed, never followed
        fd = os.open(dest, flags, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return dest


def _append_claude_md(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if SECTION not in text:
        text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + SECTION + "\n"
    text = text.rstrip("\n") + "\n" + line + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _front_matter(**meta: Any) -> str:
    return "+++\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in meta.items()) + "+++\n"


def apply(repo: Repo, cid: str, to: str) -> dict[str, Any]:
    if to not in TARGETS:
        raise GitImproveError(
            f"--to {to!r} is not a target", hint="use project, global or proposal"
        )
    c = _find(repo, cid)
    now = utc_now()
    result: dict[str, Any] = {"id": c.id, "to": to}
    if to == "proposal":
        body = _front_matter(
            kind="proposal",
            created=now,
            category=c.category,
            signals=c.signal_ids,
            confidence=c.confidence,
        )
        content, context = redact(c.content), redact(c.context)  # mask before any cut
        body += f"# {clip(content, 80)}\n\n{content}\n\nContext: {context}\n"
        path = entry_name("proposals", "md", now, host_id())
        memory.add_entries(repo, {path: body}, message=f"gitimprove: proposal from {c.id}")
        target = f"improve/memory:{path}"
    else:
        md = claude_md_paths(repo.work_tree)[to]
        backup = _backup(repo, md)
        _append_claude_md(md, f"- {redact(c.content)}")
        result["backup"] = str(backup) if backup else None
        target = str(md)
        lrn = (
            _front_matter(
                created=now,
                category=c.category,
                scope=to,
                to=target,
                signals=c.signal_ids,
                confidence=c.confidence,
            )
            + c.content
            + "\n"
        )
        memory.add_entries(
            repo,
            {entry_name("learnings", "md", now, host_id()): lrn},
            message=f"gitimprove: learning from {c.id}",
        )
    signals.add_event(repo, c.signal_ids, "promoted", to=target)
    result["target"] = target
    return result


def dismiss(repo: Repo, cid: str) -> dict[str, Any]:
    c = _find(repo, cid)
    signals.add_event(repo, c.signal_ids, "dismissed")
    return {"id": c.id, "dismissed": c.signal_ids}
