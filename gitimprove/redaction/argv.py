"""Credentials in an argument list: a flag that takes a secret, then the next element.

A command is often written as a list rather than a line: Python's
`subprocess.run(['twine', 'upload', '--password', '<pw>'])`, a JSON or YAML `args: ["--token",
"<tok>"]` (Dockerfile `CMD`, a Kubernetes container), a block list (`- --token` / `- <tok>`),
or `/proc/<pid>/cmdline` with NUL bytes between arguments. The elements are read in order:
- `--<name>=<value>` and `--<name> <value>` where the name names a credential (`--password`,
  `--api-key`, `--client-secret`; `key_strength`), and the value is a value (not another
  flag, not a variable: in a list of quoted literals a bare element is code);
- a short or odd flag of a program the list starts with (`['mysql', '-p<pw>']`,
  `['rabbitmqadmin', '-p', '<pw>']`): the flags of the command table (`commands.py`) and
  `SHORT` below.
"""

from __future__ import annotations

import re

from gitimprove.redaction.commands import COMMANDS
from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import assignment_is_secret, is_value, key_strength, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# programs whose short flags take a password (`-p*`: attached only, `-p<pw>`)
SHORT: dict[str, tuple[str, ...]] = {
    "mysql": ("-p*",),
    "mysqldump": ("-p*",),
    "mysqladmin": ("-p*",),
    "mysqlimport": ("-p*",),
    "mysqlcheck": ("-p*",),
    "mariadb": ("-p*",),
    "mariadb-dump": ("-p*",),
    "rabbitmqadmin": ("-p",),
    "sshpass": ("-p",),
    "redis-cli": ("-a",),
    "mongo": ("-p",),
    "mongosh": ("-p",),
    "mongodump": ("-p",),
    "mongorestore": ("-p",),
    "mongoexport": ("-p",),
    "mongoimport": ("-p",),
    "smbclient": ("--password",),
    "keytool": ("-storepass", "-keypass", "-srcstorepass", "-deststorepass"),
    "openssl": ("-passin", "-passout", "-pass", "-k"),
}


def _program_flags() -> dict[str, tuple[str, ...]]:
    out = dict(SHORT)
    for cmd in COMMANDS:
        if cmd.opts:
            out[cmd.words[0]] = out.get(cmd.words[0], ()) + cmd.opts
    return out


_FLAGS: dict[str, tuple[str, ...]] | None = None
# flags naming a credential that take no value
_SWITCHES = frozenset("--" + w for w in words("secret secrets password-stdin token-stdin"))


class _El:
    __slots__ = ("end", "quoted", "start", "text")

    def __init__(self, text: str, start: int, end: int, quoted: bool) -> None:
        self.text = text
        self.start = start
        self.end = end
        self.quoted = quoted


def _secret_value(name: str, value: str) -> bool:
    if not value or value.startswith(("-", "$", "{", "<", "%")) or not is_value(value):
        return False
    return assignment_is_secret(name, value, quoted=True, env_style=True)


def walk(els: list[_El]) -> Iterable[tuple[int, int]]:
    """Where the credentials are in a list of arguments (the first may name the program)."""
    global _FLAGS
    if _FLAGS is None:
        _FLAGS = _program_flags()
    literal = any(e.quoted for e in els)  # then bare elements are variables, not values
    prog = els[0].text.rsplit("/", 1)[-1].removesuffix(".exe").lower() if els else ""
    flags = _FLAGS.get(prog, ())
    for n, e in enumerate(els):
        t = e.text
        nxt = els[n + 1] if n + 1 < len(els) else None
        usable = nxt is not None and (nxt.quoted or not literal)
        attached = False  # `-p<pw>`: the element is a flag and its value, nothing else
        for f in flags:
            if f.endswith("*"):
                head = f[:-1]
                if t.startswith(head) and len(t) > len(head) and t[len(head) :][:1] != "-":
                    value = t[len(head) :]
                    attached = True
                    if is_value(value) and not value.startswith(("$", "{")):
                        yield e.start + len(head), e.end
            elif t == f and usable and nxt is not None and _program_value(nxt.text):
                yield nxt.start, nxt.end
        if attached or not t.startswith("-") or t in _SWITCHES:
            continue
        name, eq, value = t.lstrip("-").partition("=")
        if not t.startswith("--") and not eq and not name.replace("-", "").isalpha():
            continue  # `-p{PW}`, `-kS3cr3t`: a short flag and its value, not a name
        if key_strength(name) is None:
            continue
        if eq:
            if _secret_value(name, value):
                yield e.end - len(value), e.end
        elif usable and nxt is not None and _secret_value(name, nxt.text):
            yield nxt.start, nxt.end


def _program_value(value: str) -> bool:
    return bool(value) and not value.startswith(("-", "$", "{", "<", "%")) and is_value(value)


_Q = r"""[bru]{0,2}(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)')"""
_EL = _Q + r"""|(?P<bare>[^\s,\[\]()"'{}]+)"""
_ITEMS = (
    r"""[ \t\r\n]*(?:(?:[bru]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|[^\s,\[\]()"'{}]+)"""
    r"""[ \t\r\n]*,[ \t\r\n]*){1,200}(?:[bru]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|[^\s,\[\]()"'{}]+)[ \t\r\n]*,?[ \t\r\n]*"""
)
# a list in brackets; in parentheses or braces only the arguments of a call or an array
# literal (`system("sshpass", "-p", …)`, `exec.Command("psql", …)`, `new String[]{…}`,
# Perl's `qw(…)` is read by words below), whose first element is a quoted program name
_FIRST = r"""(?=[ \t\r\n]*[bru]{0,2}["'])"""
_LIST = (
    r"\["
    + _ITEMS
    + r"\]|(?<=[\w\]>])\("
    + _FIRST
    + _ITEMS
    + r"\)|(?<=[\w\]>])\{"
    + _FIRST
    + _ITEMS
    + r"\}"
)


def _elements(text: str, start: int, end: int) -> list[_El]:
    out = []
    for m in compiled(_EL, 0).finditer(text, start, end):
        g = "dq" if m.group("dq") is not None else "sq" if m.group("sq") is not None else "bare"
        out.append(_El(m.group(g), m.start(g), m.end(g), g != "bare"))
    return out


def _list(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    els = _elements(m.string, m.start() + 1, m.end() - 1)
    if els and els[0].text.startswith("-"):
        # the arguments without the program, named just before them on the line:
        # `Command::new("mysql").args(["-p…"])`, `execFile("twine", ["upload", …])`
        line = m.string.rfind("\n", 0, m.start()) + 1
        named = compiled(r"""["']([\w./-]{1,80})["'][^"'\n]{0,40}$""", 0).search(
            m.string, max(line, m.start() - 200), m.start()
        )
        if named is not None:
            els.insert(0, _El(named.group(1), named.start(1), named.end(1), True))
    return walk(els)


# NUL between arguments: raw, or as an escape (`\0`, `\x00`, `\u0000`) or caret notation
_NUL = r"(?:\x00|\\0(?![0-7])|\\x00|\\u0000|\^@)"
_ARG = r"(?:[^\x00\s\\^]|\\(?!0|x00|u0000)|\^(?!@))*+"
# from the first NUL on (a match starts only at a NUL, and an argument is read once: linear);
# the program's name before it is found by `_nul`
_NULS = _NUL + _ARG + r"(?:" + _NUL + _ARG + r")+"
_NUL_MARKS = ("\x00", "\\0", "\\x00", "\\u0000", "^@")
# how far back the first argument (the program) may start
_PROGRAM = 256


def _first(text: str, end: int) -> int:
    """Where the argument ending at `end` starts: after a blank, a quote, a NUL or the start
    of the text (`b'mysql\\x00-p…'` names `mysql`)."""
    start = end
    while start > max(0, end - _PROGRAM) and not (
        text[start - 1].isspace() or text[start - 1] in "\x00\"'"
    ):
        start -= 1
    return start


def _nul(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    text = m.string
    els = []
    pos = start = _first(text, m.start())
    for sep in compiled(_NUL, 0).finditer(text, m.start(), m.end()):
        end = sep.start()
        if text[end] == "\\" and text[end - 1 : end] == "\\":
            end -= 1  # escaped twice (`\\x00` in source code): the backslash is the escape's
        if end > pos:
            els.append(_El(text[pos:end], pos, end, True))
        pos = sep.end()
    end = m.end()
    if start and text[start - 1] in "\"'" and text[end - 1 : end] == text[start - 1]:
        end -= 1  # the list is a quoted string: its closing quote is not an argument's
    if pos < end:
        els.append(_El(text[pos:end], pos, end, True))
    return walk(els)


# a YAML block list: `- --token` then `- <tok>` on the next line, at the same indentation
_BLOCK = (
    r"(?m)^(?P<ind>[ \t]*)-[ \t]+(?:\"(?:[^\"\n])*\"|'[^'\n]*'|[^\s\"'#]+)[ \t]*\r?\n"
    r"(?:(?P=ind)-[ \t]+(?:\"(?:[^\"\n])*\"|'[^'\n]*'|[^\s\"'#]+)[ \t]*(?:\r?\n|$))+"
)
_ITEM = r"""(?m)^[ \t]*-[ \t]+(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'#]+))"""


def _block(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    els = []
    for i in compiled(_ITEM, 0).finditer(m.string, m.start(), m.end()):
        g = "dq" if i.group("dq") is not None else "sq" if i.group("sq") is not None else "bare"
        els.append(_El(i.group(g), i.start(g), i.end(g), True))
    return walk(els)


def _keywords() -> tuple[str, ...]:
    progs = {p.lower() for p in SHORT} | {c.words[0].lower() for c in COMMANDS if c.opts}
    return ("pass", "pwd", "token", "secret", "key", "auth", "cred", *sorted(progs))


RULES: list[Rule] = [
    Rule("credential", _LIST, _keywords(), needs=(",",), priority=CONTEXT, expand=_list),
    Rule(
        "credential",
        _NULS,
        _NUL_MARKS,
        priority=CONTEXT,
        expand=_nul,
    ),
    Rule("credential", _BLOCK, _keywords(), needs=("- ",), priority=CONTEXT, expand=_block),
]
