"""What a REPL or a debugger echoed: an expression naming a credential, then its value.

`>>> os.environ['API_TOKEN']` then `'…'`, `(Pdb) p self.password` then `'…'`, IPython's
`In [3]: api_key` then `Out[3]: '…'`, gdb's `(gdb) p password` then `$1 = 0x55… "…"`,
node's `> process.env.DB_PASSWORD`, irb's and pry's `=> "…"`, R's `[1] "…"`, jshell's
`token ==> "…"`, Scala's `val res0: String = …`, redis-cli's `127.0.0.1:6379> GET api_token`:
the value is printed with no name beside it, on the line after the prompt. The prompts are a
table (`PROMPTS`); the expression is read for the last name in it (an attribute, a key in
quotes, a variable), and its echo is masked when that name names a credential and the
echo, stripped of the REPL's decoration, is one value that reads as one
(`assignment_is_secret`, as `name = "value"` would be judged). `len(secret)` (`32`),
`token.type` (`'NAME'`) and `type(password)` (`<class 'str'>`) print nothing secret.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import assignment_is_secret, key_strength

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# (keyword, prompt): what starts a line a REPL or a debugger reads
PROMPTS: tuple[tuple[str, str], ...] = (
    (">>>", r">>>"),
    ("in [", r"In[ \t]\[\d+\]:"),
    ("(pdb", r"\(Pdb\+*\)"),
    ("ipdb>", r"ipdb>"),
    ("(gdb)", r"\(gdb\)"),
    ("(lldb)", r"\(lldb\)"),
    ("irb(", r"irb\([^)\n]{0,40}\)[:\d]*>"),
    ("pry(", r"(?:\[\d+\][ \t]+)?pry\([^)\n]{0,40}\)>"),
    ("iex(", r"iex\(\d+\)>"),
    ("scala>", r"scala>"),
    ("julia>", r"julia>"),
    ("ghci>", r"ghci>"),
    ("prelude>", r"Prelude>"),
    ("jshell>", r"jshell>"),
    ("php >", r"php[ \t]>"),
    ("db<", r"DB<\d+>"),
    ("(byebug)", r"\(byebug\)"),
    ("(rdbg)", r"\(rdbg\)"),
    ("dlv)", r"\(dlv\)"),
    ("redis", r"redis[\w.:-]{0,40}>"),
    ("6379>", r"[\w.-]{1,60}:\d{2,5}>"),
    (">", r">"),
)
# a debugger's or a client's command before the expression
_COMMAND = (
    r"(?:(?:p|pp|print|po|puts|echo|display|expr|expression|call|inspect|dump|x|say"
    r"|frame[ \t]+variable|GET|HGET[ \t]+\S+|CONFIG[ \t]+GET)[ \t]+)?"
)
# the expression: code with no blank outside its quotes
_EXPR = r"""(?P<expr>(?:[^\s'"]|'[^'\n]{0,200}'|"[^"\n]{0,200}"){1,300}?)[;]?"""
# the REPL's decoration of a value: `Out[3]: `, `=> `, `$1 = `, `[1] `, `res0: String = `
_DRESS = (
    r"(?:Out\[\d+\]:[ \t]*|=>[ \t]*|[\w$]+[ \t]+==>[ \t]*|(?:\([^)\n]{1,60}\)[ \t]*)?\$\d+[ \t]*="
    r"[ \t]*(?:0x[0-9a-f]+[ \t]+)?|(?:val[ \t]+)?res\d+:[ \t]*[\w\[\]]+[ \t]*=[ \t]*|\[1\][ \t]*"
    r"|ans[ \t]*=[ \t]*|-[ \t]*:[ \t]*\w+[ \t]*=[ \t]*|(?:\d+\)[ \t]*))?"
)
_VALUE = r"""(?:[bru]?"(?P<dq>[^"\n]{1,500})"|[bru]?'(?P<sq>[^'\n]{1,500})'|(?P<bare>[^\s'"<>(\[{][^\s'"]{0,499}))"""
_NAMES = r"[A-Za-z_][\w-]*"
_SKIP = frozenset({"p", "pp", "print", "po", "puts", "echo", "get", "env", "environ", "os"})


def _name(expr: str) -> str | None:
    """The name an expression reads: its last key in quotes or its last identifier
    (`os.environ['API_TOKEN']`, `self.password`, `process.env.DB_PASSWORD`)."""
    found = [n for n in compiled(_NAMES, 0).findall(expr) if n.lower() not in _SKIP]
    return found[-1] if found else None


def _echo(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    name = _name(m.group("expr"))
    if name is None or key_strength(name) is None:
        return
    if m.group("prompt") == ">":
        # `>` also quotes a message and redirects a command: it starts its line or follows a
        # label (`failed: > …`) unless the expression is code (a call, an index), and the
        # expression must name a credential outright
        line = m.string.rfind("\n", 0, m.start()) + 1
        before = m.string[line : m.start("prompt")].rstrip()
        code = any(c in m.group("expr") for c in "([") or m.group(0).rstrip().endswith("]")
        if key_strength(name) != "strong" or (before and not before.endswith(":") and not code):
            return
    g = "dq" if m.group("dq") is not None else "sq" if m.group("sq") is not None else "bare"
    value = m.group(g)
    if assignment_is_secret(name, value, quoted=g != "bare", env_style=False):
        yield m.span(g)


def _keywords() -> tuple[str, ...]:
    return tuple(k for k, _ in PROMPTS)


_PROMPT = r"(?P<prompt>" + "|".join(p for _, p in PROMPTS) + r")"
RULES: list[Rule] = [
    Rule(
        "repl-echo",
        r"(?m)(?:^|(?<=[ \t]))[ \t]*"
        + _PROMPT
        + r"[ \t]*"
        + _COMMAND
        + _EXPR
        # (the echo is looked at, not taken: it may be the next prompt's line)
        + r"(?=[ \t]*\r?\n[ \t]*"
        + _DRESS
        + _VALUE
        + r"(?=[ \t\r.,;:)\]]|$))",
        _keywords(),
        needs=("\n",),
        priority=CONTEXT,
        expand=_echo,
    )
]
