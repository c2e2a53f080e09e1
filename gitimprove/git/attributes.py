"""The `.gitattributes` files, read as git reads them, and the line ends git writes into a work
tree and stores in a blob by them: a measurement checkout holds each file as `git switch`
writes it into your work tree, and the tree hashed from an agent's files holds what `git add`
stores there (`text`/`eol` only: a `filter`, `ident` or `working-tree-encoding` is never
applied; loop/implicit.py puts a change that relies on one out of scope).

The rules are git's own (convert.c, `convert_attrs`, `crlf_to_worktree`, `crlf_to_git`), with
what outside the commit takes part in them (`LineEnds`): `core.autocrlf`, `core.eol` (native
is LF here), `core.safecrlf`, the system and global attributes files (below every
`.gitattributes`) and `.git/info/attributes` (above them). `-text` (or `binary`, or `-crlf`)
leaves the blob as it is both ways; `text` writes CRLF when `eol=crlf`, or, `eol` unset, when
`core.autocrlf` is true or `core.eol` is `crlf`; `text=auto` (and, with no attribute,
`core.autocrlf` true or `input`) converts only a file git takes for text (no NUL, no lone CR,
mostly printable) and, on checkout, only one with no CR at all. `git add` turns CRLF into LF
for text, but leaves a `text=auto` file alone when the blob at its path in the index already
holds CRLF; with `core.safecrlf = true` it refuses a file a checkout would not write back as
it was.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass

import pygit2

from gitimprove.git import trees
from gitimprove.git.repo import Repo

__all__ = [
    "Cleaner",
    "Converter",
    "LineEnds",
    "attributes_of",
    "blob_hash",
    "cleaner",
    "converter",
    "line_ends",
]

Converter = Callable[[str, bytes], bytes]
# what `git add` stores for (path, the file's bytes): the bytes, or why git refuses the file
Cleaner = Callable[[str, bytes], "bytes | str"]
Read = Callable[[str], "bytes | None"]


@dataclass(frozen=True)
class LineEnds:
    """What outside the commit chooses line ends: `core.autocrlf` (`false`, `true`, `input`),
    `core.eol` (`lf`, `crlf`), `core.safecrlf` (`false`, `warn`, `true`), and the attribute
    lines of the system and global attributes files (`below` every `.gitattributes`) and of
    `.git/info/attributes` (`above` them)."""

    autocrlf: str = "false"
    eol: str = "lf"
    safecrlf: str = "warn"
    below: bytes = b""
    above: bytes = b""

    def plain(self) -> bool:
        """Whether nothing outside the commit converts a file (then only a `.gitattributes`
        naming `text`, `eol` or `crlf` can)."""
        return self.autocrlf == "false" and not _LINE_ENDS.search(self.below + self.above)

    def crlf_text(self) -> bool:
        """git's `text_eol_is_crlf`: whether a `text` file with no `eol` gets CRLF."""
        if self.autocrlf != "false":
            return self.autocrlf == "true"
        return self.eol == "crlf"


PLAIN = LineEnds()


def _bool(value: str | None) -> bool:
    """git's `git_config_bool` (a value git refuses counts as false: git stops at it)."""
    if value is None:  # `[core] autocrlf` with no `=`
        return True
    word = value.strip().lower()
    if word in ("true", "yes", "on"):
        return True
    try:
        return int(word, 0) != 0
    except ValueError:
        return False


def _setting(repo: Repo, name: str) -> tuple[bool, str | None]:
    """(whether it is set, its value) for a git config setting, the highest level's."""
    try:
        return True, repo.raw.config[name]
    except (KeyError, ValueError, pygit2.GitError):
        return False, None


# the largest attributes file read; git's own limit is 100 MB, none this large is real
_MAX_ATTRIBUTES = 1 << 20


def _read_small(path: str) -> bytes:
    """A regular file's first bytes (b"" when absent, not regular, or unreadable), read
    without blocking on a FIFO put in its place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, _MAX_ATTRIBUTES)
    except OSError:
        return b""
    finally:
        os.close(fd)


def line_ends(repo: Repo) -> LineEnds:
    """The settings your own git checks files out and adds them with in this repository:
    `core.*` from your configuration (as the harness's repository reads it), `/etc/gitattributes`
    (unless `GIT_ATTR_NOSYSTEM`), the global attributes file (`core.attributesFile`, else
    `$XDG_CONFIG_HOME/git/attributes`) and `.git/info/attributes`."""
    autocrlf = "false"
    found, value = _setting(repo, "core.autocrlf")
    if found:
        autocrlf = "input" if (value or "").lower() == "input" else str(_bool(value)).lower()
    eol = (_setting(repo, "core.eol")[1] or "").lower()
    found, value = _setting(repo, "core.safecrlf")
    safecrlf = "warn"
    if found:
        safecrlf = "warn" if (value or "").lower() == "warn" else str(_bool(value)).lower()
    home = os.environ.get("HOME") or os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    named = _setting(repo, "core.attributesFile")[1]
    if named:
        named = os.path.join(home, named[2:]) if named.startswith("~/") else named
    below = b""
    if os.environ.get("GIT_ATTR_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        below = _read_small("/etc/gitattributes")
    below += b"\n" + _read_small(named or os.path.join(xdg, "git", "attributes"))
    above = _read_small(os.fspath(repo.common_dir / "info" / "attributes"))
    return LineEnds(autocrlf, "crlf" if eol == "crlf" else "lf", safecrlf, below, above)


def attribute_lines(data: bytes | None) -> list[tuple[str, list[str]]]:
    out = []
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            out.append((words[0], words[1:]))
    return out


def attributes_of(
    path: str, read: Read, *, exact: bool = False, ends: LineEnds = PLAIN
) -> dict[str, str | bool]:
    """The attributes the `.gitattributes` files (root first, then each folder down to the
    file's) give `path`, after those of the system and global files and before those of
    `.git/info/attributes` (`ends`), macros of the root's (and those files') `[attr]` lines
    expanded; a pattern is matched the way git does, a little more widely (`*` may cross a
    `/`: a judge errs on the safe side), or with `exact` as git does (to write a file as git
    writes it)."""
    macros: dict[str, list[str]] = {"binary": ["-diff", "-merge", "-text"]}
    for data in (ends.below, read(".gitattributes"), ends.above):
        for pattern, words in attribute_lines(data):
            if pattern.startswith("[attr]"):
                macros[pattern[6:]] = words
    state: dict[str, str | bool] = {}

    def apply(words: list[str], depth: int) -> None:
        for word in words:
            name, eq, value = word.lstrip("-!").partition("=")
            if word[0] == "!":
                state.pop(name, None)
            else:
                state[name] = False if word[0] == "-" else (value if eq else True)
            if word[0] not in "-!" and name in macros and depth < 8:
                apply(macros[name], depth + 1)

    parts = path.split("/")
    sources: list[tuple[int, bytes | None]] = [(0, ends.below)] if ends.below.strip() else []
    for depth in range(len(parts)):
        folder = "/".join(parts[:depth])
        sources.append((depth, read(f"{folder}/.gitattributes" if folder else ".gitattributes")))
    if ends.above.strip():
        sources.append((0, ends.above))
    for depth, data in sources:
        rel = "/".join(parts[depth:])
        for pattern, words in attribute_lines(data):
            if pattern.startswith("[attr]"):
                continue
            anchored = "/" in pattern.rstrip("/")
            pattern = pattern.lstrip("/")
            subject = rel if anchored else parts[-1]
            if exact:
                if _wildmatch(pattern).fullmatch(subject):
                    apply(words, 0)
            elif fnmatch.fnmatchcase(subject, pattern.replace("**/", "*")) or fnmatch.fnmatchcase(
                subject, pattern
            ):
                apply(words, 0)
    return state


@functools.lru_cache(maxsize=1024)
def _wildmatch(pattern: str) -> re.Pattern[str]:
    """git's wildmatch with FNM_PATHNAME as a regular expression: `*` and `?` never match a
    `/`, `**/` matches any folders (none too), a trailing `/**` everything below, a class
    `[...]` (`!` or `^` negates it) one character but `/`, a backslash the next literally."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            body = "".join("\\" + ch if ch in "\\[&~|" else ch for ch in body)
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error:  # a class git reads otherwise: nothing matches
        return re.compile(r"(?!)")


# a `.gitattributes` that names none of these leaves line ends alone (a macro that sets one
# is defined in the root's, which then names it)
_LINE_ENDS = re.compile(rb"text|eol|crlf")
_LONE_LF = re.compile(rb"(?<!\r)\n")
# what git counts as printable: every byte from space up but DEL, and BS, HT, ESC, FF
_PRINTABLE = bytes([*range(32, 127), *range(128, 256), *b"\b\t\x1b\x0c\r\n"])


@dataclass
class _Stats:
    """git's `text_stat` of a file (`gather_stats`)."""

    lonecr: int
    lonelf: int
    crlf: int
    binary: bool

    @classmethod
    def of(cls, data: bytes) -> _Stats:
        crlf = data.count(b"\r\n")
        cr, lf = data.count(b"\r"), data.count(b"\n")
        return cls(cr - crlf, lf - crlf, crlf, _binary(data, cr, lf))


def _binary(data: bytes, cr: int, lf: int) -> bool:
    """git's `convert_is_binary`: a lone CR or a NUL anywhere, or more than one byte in 128
    not printable (a final ^Z not counted). CR and LF count as neither."""
    if cr != data.count(b"\r\n") or b"\0" in data:
        return True
    nonprintable = len(data.translate(None, _PRINTABLE))
    printable = len(data) - cr - lf - nonprintable
    return (printable >> 7) < nonprintable - data.endswith(b"\x1a")


def _action(attrs: dict[str, str | bool], ends: LineEnds) -> str:
    """git's `convert_attrs`: `binary`, `input` (LF), `crlf`, `auto` (by `core.autocrlf` and
    `core.eol`), `auto-input` or `auto-crlf`."""

    def check(value: str | bool | None) -> str | None:
        return {True: "text", False: "binary", "input": "input", "auto": "auto"}.get(value)

    action = check(attrs.get("text")) or check(attrs.get("crlf"))
    if action != "binary":
        eol = attrs.get("eol")
        if eol in ("lf", "crlf"):
            action = (
                f"auto-{'input' if eol == 'lf' else eol}"
                if action == "auto"
                else ("input" if eol == "lf" else "crlf")
            )
    if action == "text":
        action = "crlf" if ends.crlf_text() else "input"
    if action is None:
        action = {"true": "auto-crlf", "input": "auto-input"}.get(ends.autocrlf, "binary")
    return action


def _writes_crlf(action: str, ends: LineEnds) -> bool:
    """git's `output_eol(...) == EOL_CRLF`."""
    if action == "auto":
        return ends.crlf_text()
    return action in ("crlf", "auto-crlf")


def _will_add_cr(stats: _Stats, action: str, ends: LineEnds) -> bool:
    """git's `will_convert_lf_to_crlf`: whether a checkout writes CRLF for LF."""
    if not _writes_crlf(action, ends) or not stats.lonelf:
        return False
    return not action.startswith("auto") or not (stats.lonecr or stats.crlf or stats.binary)


def to_work_tree(attrs: dict[str, str | bool], data: bytes, ends: LineEnds = PLAIN) -> bytes:
    """`data` as git writes it into a work tree under `attrs` and `ends` (line ends only)."""
    action = _action(attrs, ends)
    if not data or not _writes_crlf(action, ends) or b"\n" not in data:
        return data
    if not _will_add_cr(_Stats.of(data), action, ends):
        return data
    return _LONE_LF.sub(b"\r\n", data)


def to_git(
    attrs: dict[str, str | bool], data: bytes, ends: LineEnds, indexed: bytes | None
) -> bytes | str:
    """What `git add` stores for a file holding `data` under `attrs` and `ends`, the blob at
    its path in the index holding `indexed`: the bytes, or why git refuses to add it
    (`core.safecrlf = true`)."""
    action = _action(attrs, ends)
    if action == "binary" or not data or (b"\r" not in data and ends.safecrlf != "true"):
        return data
    stats = _Stats.of(data)
    convert = stats.crlf > 0
    auto = action.startswith("auto")
    if auto:
        if stats.binary:
            return data
        if indexed and b"\r" in indexed:
            held = _Stats.of(indexed)
            convert = convert and not (held.crlf and not held.binary)
    if ends.safecrlf == "true":
        after = _Stats(stats.lonecr, stats.lonelf, stats.crlf, stats.binary)
        if convert:
            after.lonelf, after.crlf = after.lonelf + after.crlf, 0
        if _will_add_cr(after, action, ends):
            after.crlf, after.lonelf = after.crlf + after.lonelf, 0
        if stats.crlf and not after.crlf:
            return "git add refuses it: CRLF would be replaced by LF (core.safecrlf)"
        if stats.lonelf and not after.lonelf:
            return "git add refuses it: LF would be replaced by CRLF (core.safecrlf)"
    if not convert:
        return data
    return data.replace(b"\r", b"") if auto else data.replace(b"\r\n", b"\n")


def _chain_converts(path: str, read: Read, plain: bool) -> bool:
    """Whether anything may convert `path`'s line ends: settings that are not `plain`
    (`LineEnds.plain`), or a `.gitattributes` on its way down naming `text`, `eol` or `crlf`."""
    if not plain:
        return True
    parts = path.split("/")
    for depth in range(len(parts)):
        data = read("/".join([*parts[:depth], ".gitattributes"]))
        if data is not None and _LINE_ENDS.search(data):
            return True
    return False


_FILES = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)


def tree_reader(repo: Repo, tree: pygit2.Tree | None) -> Read:
    """The bytes of a file of `tree` by its path, executable or not (None for anything else:
    a link, a folder, a submodule), cached."""
    found: dict[str, bytes | None] = {}
    at = trees.entries(repo, tree)  # each folder read once

    def read(path: str) -> bytes | None:
        if path not in found:
            data = None
            entry = at(path)
            if entry is not None and entry.filemode in _FILES:
                blob = repo.raw[entry.id]
                if isinstance(blob, pygit2.Blob):
                    data = blob.data
            found[path] = data
        return found[path]

    return read


def converter(repo: Repo, tree: pygit2.Tree, ends: LineEnds | None = None) -> Converter:
    """How to write each file of `tree` (path, blob data) as git's checkout would in this
    repository, by the tree's own `.gitattributes` files and `ends` (your settings:
    `line_ends`); the data itself wherever git writes the blob as is."""
    ends = line_ends(repo) if ends is None else ends
    read, plain = tree_reader(repo, tree), ends.plain()

    def convert(path: str, data: bytes) -> bytes:
        if not _chain_converts(path, read, plain):
            return data
        return to_work_tree(attributes_of(path, read, exact=True, ends=ends), data, ends)

    return convert


def cleaner(
    repo: Repo, read: Read, index: pygit2.Tree | None, ends: LineEnds | None = None
) -> Cleaner:
    """What `git add` would store for each file (path, its bytes) in this repository, the
    `.gitattributes` files given by `read` (a work tree's, falling back to the index's, as git
    reads them to add a file) and the index holding `index` (the tree the files were
    checked out from)."""
    ends = line_ends(repo) if ends is None else ends
    held, plain = tree_reader(repo, index), ends.plain()

    def clean(path: str, data: bytes) -> bytes | str:
        if not _chain_converts(path, read, plain):
            return data
        attrs = attributes_of(path, read, exact=True, ends=ends)
        return to_git(attrs, data, ends, held(path))

    return clean


def blob_hash(data: bytes) -> str:
    """The id git gives a blob holding `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
