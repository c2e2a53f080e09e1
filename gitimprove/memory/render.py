"""MEMORY.md, a view: newest session summaries and approved learnings first, at most
`memory.max_lines` lines, pruned to 90% of that so an agent can append."""

from __future__ import annotations

from typing import Any

from gitimprove.git.repo import Repo
from gitimprove.memory import entries, sessions, signals


def learnings(repo: Repo, *, bad: list[entries.BadEntry] | None = None) -> list[dict[str, Any]]:
    """Approved learnings: TOML-ish front matter (key = "value" lines) and a body."""
    out = entries.markdown(repo, "learnings", bad=bad)
    return sorted(out, key=lambda m: str(m.get("created", "")), reverse=True)


def render(
    repo: Repo,
    *,
    max_lines: int = 200,
    ttl_days: int = 14,
    bad: list[entries.BadEntry] | None = None,
    include_spool: bool = True,
) -> str:
    """MEMORY.md; entries that cannot be read are skipped, counted in a last line, and
    listed in `bad` for the caller to show. Signals still in the spool are listed masked,
    unless not `include_spool` (masking them is the flush's cost)."""
    skipped: list[entries.BadEntry] = []
    keep = max(20, int(max_lines * 0.9))
    lines = [
        "# MEMORY",
        "",
        "Rebuilt by `git improve memory` from the improve/memory branch; edit through `git improve reflect`.",
        "",
    ]
    learned = learnings(repo, bad=skipped)
    lines.append("## Learnings")
    if learned:
        for lrn in learned:
            first = str(lrn["body"]).splitlines()[0] if lrn["body"] else ""
            lines.append(
                f"- {first} ({lrn.get('category', 'general')}, {str(lrn.get('created', ''))[:10]})"
            )
    else:
        lines.append("- (none approved yet; run `git improve reflect`)")
    lines += ["", "## Recent sessions"]
    summ = sessions.summaries(repo, bad=skipped)
    if summ:
        for s in summ:
            types = (
                ", ".join(f"{k} {v}" for k, v in (s.get("commit_types") or {}).items())
                or "no commits"
            )
            files = ", ".join((s.get("files_most_modified") or [])[:3])
            lines.append(
                f"- {str(s.get('ended', ''))[:16]} {len(s.get('commits') or [])} commits ({types})"
                + (f"; files: {files}" if files else "")
                + (f"; stop: {s.get('stop_reason')}" if s.get("stop_reason") else "")
            )
    else:
        lines.append("- (none yet)")
    pending = [
        g
        for g in signals.groups(
            signals.all_signals(repo, include_spool=include_spool, bad=skipped),
            ttl_days=ttl_days,
        )
        if g.status == "captured"
    ]
    lines += ["", "## Captured, not yet reviewed"]
    if pending:
        for g in reversed(pending):
            lines.append(
                f"- [{g.first.get('type')}] {str(g.first.get('content'))[:160]} (x{len(g.signals)})"
            )
    else:
        lines.append("- (nothing pending)")
    skipped = entries.not_quarantined(repo, skipped)
    if bad is not None:
        bad.extend(skipped)
    if skipped:
        lines += [
            "",
            f"({len(skipped)} memory entries could not be read; see `git improve doctor`)",
        ]
    if len(lines) > max_lines:
        lines = [
            *lines[: keep - 1],
            f"- … pruned to {keep} lines; see `git improve reflect --list`",
        ]
    return "\n".join(lines) + "\n"
