"""HTTP's own carriers of credentials in a log: cookies, and a token of any characters.

`Set-Cookie: <name>=<value>; Path=/; HttpOnly` (its first pair is the cookie, the rest its
attributes) and `Cookie: a=1; sid=<value>` (every pair a cookie), as curl -v (`< `, `> `),
a browser's devtools or a proxy's log print them: a value is a secret when it reads as
generated (random letters and digits, or a password's mix of cases and symbols), or when
its name says it is a session or an authentication (`sid`, `session`, `auth`, `jwt`,
`remember_token`) and it is long. `theme=dark`, `lang=en` and the attributes pass.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import is_value, looks_random, mixed_case

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_ATTRIBUTES = frozenset(
    [
        "path",
        "domain",
        "expires",
        "max-age",
        "samesite",
        "secure",
        "httponly",
        "partitioned",
        "priority",
        "version",
        "comment",
    ]
)
_SESSION = r"(?i)sess|sid|auth|jwt|token|remember|login|identity|credential|secret|access"
_PAIR = r"(?P<name>[^\s=;,]{1,100}+)=(?P<value>[^\s;,\"\\]{1,4096}+)"


def generated(value: str) -> bool:
    """A value no one types as a word: random letters and digits, letters whose cases
    switch at random, or upper and lower case letters with a digit or a symbol, 10 or more
    (`pZZPKC!Bb3V9i`, not `Hello-World`)."""
    if looks_random(value) or mixed_case(value):
        return True
    letters = "".join(c for c in value if c.isalpha())
    return (
        len(value) >= 10
        and any(c.isupper() for c in letters)
        and any(c.islower() for c in letters)
        and any(c.isdigit() or c in "!#$%*@^~" for c in value)
        and compiled(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*\d{0,4}[!.]?", 0).fullmatch(value) is None
    )


def _cookies(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    first_only = m.group("set") is not None
    for n, p in enumerate(compiled(_PAIR, 0).finditer(m.string, m.start("pairs"), m.end())):
        if not (first_only and n > 0) and _is_cookie(p.group("name"), p.group("value")):
            yield p.span("value")


# a cookie string in code or a command: `.set('Cookie', ['sid=…'])`, `{'Cookie': 'a=1; sid=…'}`,
# `document.cookie = 'token=…'`, `curl -b 'sid=…'` / `--cookie`
_IN_CODE = (
    r"(?i)(?:\bcookie[\"'`]?[ \t]*[,:=][ \t]*\[?[ \t]*|\bcurl\b[^\n]{0,400}?[ \t](?:-b|--cookie)[ \t=]+)"
    r"(?P<q>[\"'`])(?P<pairs>[^\n\"'`]{1,8000})(?P=q)"
)
# a cookie set from its name and value in code: `res.cookie('sid', '…')`,
# `cookies={'sessionid': '…'}`, `page.setCookie({name: 'sid', value: '…'})`
_NAMED = (
    r"(?i)cookies?(?:\.\w{1,20})?[ \t]*[(=:][ \t]*[\[{(]?[ \t]*(?:[\"']?name[\"']?[ \t]*[:=][ \t]*)?"
    r"[\"'](?P<name>[\w.-]{1,64})[\"'][ \t]*[,:][ \t]*(?:[\"']?value[\"']?[ \t]*[:=][ \t]*)?"
    r"[\"'](?P<value>[^\"'\s]{6,4096})[\"']"
)


def _quoted_pairs(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    for p in compiled(_PAIR, 0).finditer(m.string, m.start("pairs"), m.end("pairs")):
        if _is_cookie(p.group("name"), p.group("value")):
            yield p.span("value")


def _is_cookie(name: str, value: str) -> bool:
    if name.lower() in _ATTRIBUTES or not is_value(value):
        return False
    named = compiled(_SESSION, 0).search(name) is not None
    return generated(value) or (named and len(value) >= 16 and not value.isalpha())


def _check_named(secret: str, m: re.Match[str]) -> bool:
    return _is_cookie(m.group("name"), secret)


RULES: list[Rule] = [
    Rule(
        "cookie",
        r"(?im)\b(?:(?P<set>set-)?cookie)[ \t]*:[ \t]*(?P<pairs>[^\n]{1,8000})",
        ("cookie",),
        priority=CONTEXT,
        expand=_cookies,
    ),
    Rule("cookie", _IN_CODE, ("cookie", "curl"), priority=CONTEXT, expand=_quoted_pairs),
    Rule("cookie", _NAMED, ("cookie",), priority=CONTEXT, groups=("value",), check=_check_named),
]
