"""Secrets never reach git: one redactor for every text that becomes part of a git object.

`gitimprove.git.repo.Repo.write_blob` and `Repo.create_commit` pass everything they store
through `redact_blob` / `redact` (note lines, memory entries, imported rows, commit messages),
so a field added later cannot bypass it. Code that shortens captured text first (a tool
error's first 500 characters, an output's tail) shortens with `clip` / `clip_tail`, which mask
before they cut, so a secret straddling the cut leaves nothing behind.

The rules are gitleaks' default set, ported as data (`resources/secrets/gitleaks.json`,
made by `scripts/gen_secret_rules.py`), plus provider formats it lacks (`providers.py`) and
gitimprove's context rules (`context.py`). A
secret becomes `[REDACTED:<rule id>:<4 hex digits of its SHA-256>]`, so two mentions of one
secret stay recognisable without revealing it.
"""

from __future__ import annotations

import re

from gitimprove.redaction import engine
from gitimprove.redaction.engine import MARKER as _MARKER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from gitimprove.redaction.engine import Rule, RuleSet, Span

# Masking a window this much larger than what is kept catches a secret straddling the cut
# (half of it lies past the cut: longer than any token; a PEM key's rule needs no END line).
MARGIN = 4096
# where a cut dropped a secret's marker that it would have split
CUT = "\u2026"
_rules: RuleSet | None = None


def ruleset() -> RuleSet:
    """gitleaks' rules and ours, loaded once per process (compiled only when needed)."""
    global _rules
    if _rules is None:
        from gitimprove.redaction import (
            argv,
            blocks,
            calls,
            cli,
            commands,
            comments,
            configs,
            context,
            dialects,
            drawn,
            dsn,
            echoes,
            formats,
            generated,
            glued,
            hashes,
            hcl,
            headers,
            holders,
            keys,
            languages,
            markup,
            nested,
            outputs,
            piped,
            positional,
            prose,
            providers,
            recovery,
            sections,
            sentences,
            shapes,
            tools,
            wallets,
        )
        from gitimprove.redaction.values import check_generic, check_keyed

        gitleaks = engine.load_gitleaks()
        for rule in gitleaks:
            if rule.id in engine.GENERIC_IDS:
                rule.check = check_generic
            elif rule.id == "curl-auth-user":
                rule.check = context.check_user_pair
            elif rule.id == "sourcegraph-access-token":
                rule.check = providers.check_sourcegraph
            elif rule.id == "facebook-access-token":  # its secret half random, as ours judges
                rule.check = providers.check_app_secret
            elif rule.near:  # `<identifier with keyword> = <secret>`
                rule.check = check_keyed
        _rules = engine.RuleSet(
            [
                *gitleaks,
                *providers.RULES,
                *tools.RULES,
                *keys.RULES,
                *context.RULES,
                *shapes.RULES,
                *positional.RULES,
                *calls.RULES,
                *hashes.RULES,
                *prose.RULES,
                *piped.RULES,
                *commands.RULES,
                *configs.RULES,
                *sections.RULES,
                *drawn.RULES,
                *recovery.RULES,
                *nested.RULES,
                *outputs.RULES,
                *dialects.RULES,
                *formats.RULES,
                *languages.RULES,
                *argv.RULES,
                *markup.RULES,
                *dsn.RULES,
                *cli.RULES,
                *holders.RULES,
                *sentences.RULES,
                *wallets.RULES,
                *echoes.RULES,
                *blocks.RULES,
                *hcl.RULES,
                *headers.RULES,
                *comments.RULES,
                *glued.RULES,
                *generated.RULES,
            ]
        )
    return _rules


def _marker() -> re.Pattern[str]:
    return engine.compiled(_MARKER, 0)


def _sha256(data: bytes) -> Any:
    """SHA-256 from Python's own module where there is one: `hashlib` loads OpenSSL, which
    costs a hook more than the hashing of a few markers."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # 3.12+
        except ImportError:
            from hashlib import sha256
    return sha256(data)


# a key written as a hex number (32 digits or more), with or without its `0x`
_HEX_NUMBER = r"(?:0[xX])?[0-9a-fA-F]{32,}"


def marker(kind: str, secret: str) -> str:
    """What `secret` becomes: its kind and a short hash of the secret alone, so that one
    secret gives one marker wherever it appears (a line break and indentation inside it,
    where a terminal or a log wrapped it, or a CRLF line ending, do not count; nor, for a
    key in hex, a `0x` before it or the case of its digits)."""
    if "\n" in secret:
        secret = re.sub(r"\r?\n[ \t]*", "", secret)
    if engine.compiled(_HEX_NUMBER, 0).fullmatch(secret):
        # one number however it is written: `0x4c08…`, `4c08…`, `4C08…`
        secret = secret[2:].lower() if secret[:2] in ("0x", "0X") else secret.lower()
    digest = _sha256(secret.encode("utf-8", errors="surrogateescape")).hexdigest()
    return f"[REDACTED:{kind}:{digest[:4]}]"


def merge(found: Iterable[Span], text: str) -> list[Span]:
    """Non-overlapping spans in text order; overlaps join, named by the most specific rule.
    Spans touching an existing marker are dropped, so redacting twice changes nothing."""
    from gitimprove.redaction.engine import Span

    guarded = [m.span() for m in _marker().finditer(text)] if "[REDACTED:" in text else []
    out: list[Span] = []
    for s in sorted(found, key=lambda s: (s.start, -s.end, s.priority)):
        if any(s.start < b and a < s.end for a, b in guarded):
            continue
        if out and s.start < out[-1].end:
            last = out[-1]
            best = last if last.priority <= s.priority else s
            out[-1] = Span(last.start, max(last.end, s.end), best.kind, best.priority)
        else:
            out.append(s)
    return out


def spans(text: str, rules: Iterable[Rule] | None = None) -> list[Span]:
    if not text:
        return []
    rs = ruleset()
    found = rs.spans(text, rules)
    if "\n" in text and rules is None:
        from gitimprove.redaction import continued

        # a secret's rest alone on the next line
        merged = merge(found, text)
        more = continued.spans(rs, text, merged)
        return continued.extend(text, merge([*found, *more], text) if more else merged)
    return merge(found, text)


def apply(text: str, found: Iterable[Span]) -> str:
    from gitimprove.redaction.wraps import kept

    parts: list[str] = []
    pos = 0
    for s in found:
        # a secret wrapped across decorated lines (`app-1  | …`) keeps their line breaks
        # and decorations after its marker; the marker hashes the secret's characters alone
        chars, breaks = kept(text, s.start, s.end)
        parts += [text[pos : s.start], marker(s.kind, chars), breaks]
        pos = s.end
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


def redact(text: str) -> str:
    """`text` with every secret replaced by its marker."""
    if not text:
        return text
    try:
        return apply(text, spans(text))
    except Exception:  # a flaw in a rule must neither leak nor lose a record
        return _by_line(text)


# a long text is read in windows of about this many characters (`redact_windows`)
WINDOW = 32768


def _windows(text: str, size: int) -> Iterator[tuple[int, int]]:
    """Windows of about `size` characters covering `text`, each overlapping the one before
    by at least `MARGIN` (so a secret of up to `MARGIN` characters lies whole in one of
    them, with the text around it): cut at line breaks, or where a line is too long."""
    start, n = 0, len(text)
    while n - start > size:
        end = text.rfind("\n", start + size // 2, start + size) + 1 or start + size
        yield start, end
        # the next one starts at a line's start at least `MARGIN` before this one's end
        nxt = text.rfind("\n", end - 2 * MARGIN, end - MARGIN) + 1
        start = nxt or end - MARGIN
    yield start, n


def redact_windows(text: str, size: int = WINDOW) -> str:
    """`text` masked by the whole redactor read in overlapping windows (`_windows`): what
    any window finds is masked, so every secret a window holds whole with its context is;
    the time grows with the length alone (each window is bounded), however long the text.
    A text of up to `size` characters is masked as `redact` masks it."""
    from gitimprove.redaction.engine import Span

    if len(text) <= size:
        return redact(text)
    try:
        found = [
            Span(start + s.start, start + s.end, s.kind, s.priority)
            for start, end in _windows(text, size)
            for s in spans(text[start:end])
        ]
        return apply(text, merge(found, text))
    except Exception:  # (see `redact`)
        return _by_line(text)


def _by_line(text: str) -> str:
    """`text` masked line by line: what is left when masking it whole failed on a flaw of
    the redactor. A line that fails too is masked whole (its marker: `unmaskable`), so
    the record is kept and nothing in it leaks."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        try:
            masked = apply(body, spans(body)) if body else body
        except Exception:
            masked = marker("unmaskable", body)
        out.append(masked + line[len(body) :])
    return "".join(out)


def _name_marker(m: re.Match[str]) -> str:
    """`[REDACTED:github-pat:3f2a]` as a file name part: `REDACTED-github-pat-3f2a` (no `:`,
    `[` or `]`, which some file systems and shells refuse or expand)."""
    return "-".join(m.group(0)[1:-1].split(":"))


def redact_path(path: str) -> str:
    """A tree entry path with every secret in it masked, still a valid path: a name a remote
    or a hook chose (`signals/2026/11/ghp_….json`) travels with the tree like a blob does."""
    masked = redact(path)
    if masked == path:
        return path
    parts = [p for p in _marker().sub(_name_marker, masked).split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or _name_marker(_marker().search(masked))  # type: ignore[arg-type]


def _cut_outside_marker(text: str, cut: int, *, keep_head: bool) -> int:
    """Move a cut that would split a marker to the marker's edge (dropping it)."""
    # (a marker starting just before the cut counts: its `[` alone on the kept side)
    start = text.rfind("[REDACTED:", max(0, cut - 64), cut + len("[REDACTED:") - 1)
    if start == -1:
        return cut
    m = _marker().match(text, start)
    if m is None or m.end() <= cut:
        return cut
    return start if keep_head else m.end()


def window(text: str, limit: int, *, tail: bool = False) -> tuple[str, bool]:
    """What `clip(text, limit)` (`clip_tail` with `tail`) looks at, and whether `text` is
    longer than that: the first (last) `limit` plus a margin characters. No rule runs, so a
    hook keeps this much unmasked and the flush gives the very same result with
    `clip_window` (DESIGN §13: the hot hooks do not mask)."""
    n = limit + MARGIN
    if len(text) <= n:
        return text, False
    return (text[-n:] if tail else text[:n]), True


def _masked(window: str, limit: int, *, head: bool, longer: bool) -> str:
    """The part of a text a cut at `limit` can keep, masked, from its `window`: only a
    window of `limit` plus a margin is scanned, so the time is bounded whatever the size of
    the text. The window of a longer text is masked, then cut half a margin past `limit` (or
    at the end of a secret straddling that point), so that a secret split by the window's
    own edge stays out of what is kept."""
    if not longer:
        return redact(window)
    from gitimprove.redaction.engine import Span

    found = spans(window)
    if head:
        cut = limit + MARGIN // 2
        for s in found:
            if s.start < cut < s.end:
                cut = s.end
        return apply(window[:cut], [s for s in found if s.end <= cut])
    cut = len(window) - (limit + MARGIN // 2)
    for s in reversed(found):
        if s.start < cut < s.end:
            cut = s.start
    kept = [Span(s.start - cut, s.end - cut, s.kind, s.priority) for s in found if s.start >= cut]
    return apply(window[cut:], kept)


def clip_window(window_: str, limit: int, longer: bool, *, tail: bool = False) -> str:
    """`clip` (`clip_tail` with `tail`) of a text given by its `window` and whether the
    text was longer: with `win, longer = window(text, n)`, `clip_window(win, n, longer)` is
    `clip(text, n)`."""
    if not longer or len(window_) > limit + MARGIN:  # a whole text, or more than a window
        window_, longer = window(window_, limit, tail=tail)
    masked = _masked(window_, limit, head=not tail, longer=longer)
    if len(masked) <= limit:
        return masked
    # a marker the cut would split is dropped, and `…` says where: the text up to the
    # secret is kept and a reader sees that it went on
    if tail:
        at = _cut_outside_marker(masked, len(masked) - limit, keep_head=False)
        return (CUT if at > len(masked) - limit else "") + masked[at:]
    at = _cut_outside_marker(masked, limit, keep_head=True)
    return masked[:at] + (CUT if at < limit else "")


def clip(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, masked before the cut."""
    win, longer = window(text, limit)
    return clip_window(win, limit, longer)


def clip_tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text`, masked before the cut."""
    win, longer = window(text, limit, tail=True)
    return clip_window(win, limit, longer, tail=True)


def redact_blob(data: bytes | str) -> bytes:
    """The bytes of a blob about to be stored, masked (JSON and JSONL stay valid)."""
    from gitimprove.redaction.documents import redact_document

    raw = data.encode("utf-8") if isinstance(data, str) else data
    text = raw.decode("utf-8", errors="surrogateescape")
    try:
        out = redact_document(text)
    except Exception:  # (see `redact`)
        out = _by_line(text)
    return raw if out == text else out.encode("utf-8", errors="surrogateescape")
