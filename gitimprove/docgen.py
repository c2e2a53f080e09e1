"""Generate docs/cli.md and the man page git-improve.1 from the commands' own --help.

`python -m gitimprove.docgen` writes both; `--check` exits 1 when either is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gitimprove import __version__
from gitimprove.cli import COMMANDS, HIDDEN, _build_group

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
MAN = ROOT / "gitimprove" / "resources" / "git-improve.1"


def _help(args: list[str]) -> str:
    group = _build_group()
    ctx_args = args
    with click.Context(
        group,
        info_name="git improve",
        terminal_width=88,
        max_content_width=88,
        help_option_names=["-h", "--help"],
    ) as ctx:
        if not ctx_args:
            return group.get_help(ctx)
        cmd = group.get_command(ctx, ctx_args[0])
        assert cmd is not None
        with click.Context(
            cmd,
            info_name=f"git improve {ctx_args[0]}",
            parent=ctx,
            terminal_width=88,
            max_content_width=88,
            help_option_names=["-h", "--help"],
        ) as sub:
            return cmd.get_help(sub)


def visible() -> list[str]:
    return [name for name in sorted(COMMANDS) if name not in HIDDEN]


def render_markdown() -> str:
    parts = [
        "# Command-line reference\n",
        "Generated from `--help` by `python -m gitimprove.docgen`; CI checks it is current.\n",
        "## git improve\n",
        "```\n" + _help([]).rstrip() + "\n```\n",
    ]
    for name in visible():
        parts.append(f"## git improve {name}\n")
        parts.append("```\n" + _help([name]).rstrip() + "\n```\n")
    return "\n".join(parts)


def _roff(text: str) -> str:
    out = []
    for line in text.splitlines():
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def render_man() -> str:
    lines = [
        f'.TH GIT-IMPROVE 1 "" "gitimprove {__version__}" "Git Manual"',
        ".SH NAME",
        "git-improve \\- optimize a metric with coding agents, remember across sessions, share through git",
        ".SH SYNOPSIS",
        ".B git improve",
        ".I command",
        "[options]",
        ".SH DESCRIPTION",
        ".nf",
        _roff(_help([])),
        ".fi",
        ".SH COMMANDS",
    ]
    for name in visible():
        lines += [f".SS git improve {name}", ".nf", _roff(_help([name])), ".fi"]
    lines += [
        ".SH FILES",
        ".TP",
        ".B .gitimprove.toml",
        "project configuration (committed)",
        ".TP",
        ".B refs/notes/improve",
        "one note per experiment commit",
        ".TP",
        ".B refs/heads/improve/memory",
        "the memory branch: signals, sessions, learnings, imports",
        ".TP",
        ".B <git-common-dir>/improve/",
        "workspaces, caches, locks and logs (never the source of truth)",
        ".SH EXIT STATUS",
        "0 success; 1 an error with a hint; 2 usage; 3 internal error (see improve/last-error.log); 130 interrupted.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    targets = {CLI_MD: render_markdown(), MAN: render_man()}
    if "--check" in argv:
        stale = [
            str(p.relative_to(ROOT))
            for p, text in targets.items()
            if not p.exists() or p.read_text(encoding="utf-8") != text
        ]
        if stale:
            sys.stderr.write("stale: " + ", ".join(stale) + " (run: python -m gitimprove.docgen)\n")
            return 1
        return 0
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
