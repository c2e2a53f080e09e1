"""Recovery and backup codes: the one-time codes an account prints when two-factor sign-in
is set up (`Recovery codes:` and a list of codes: five letters and digits, a dash and five
more; two groups of four digits; ten letters and digits). Each logs in once without the
second factor, so a list of them is a list of passwords.

They are told by the line that names them (`recovery codes`, `backup codes`, `scratch
codes`, `emergency codes`, a `recovery code` alone) and read on it and on the lines that
follow, up to the first line that holds none. A code is a run of letters and digits, 6 to
16 of them, with a digit in it, whole or in groups of one length (3 to 6) joined by `-`
(two groups of digits by a blank); so an ordinary id (`build-2024`, `release-notes`, a UUID) is no code, and nothing
reads as one without the line naming them.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import Rule, compiled

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_CODE = (
    r"(?<![\w-])(?:[A-Za-z0-9]{3,6}(?:-[A-Za-z0-9]{3,6}){1,3}|[0-9]{3,6} [0-9]{3,6}"
    r"|[A-Za-z0-9]{6,16})(?![\w-])"
)
# what may stand around a code on its line: numbering, bullets, commas, a checked box
_AROUND = r"[ \t>]*(?:[-*+•]|\d{1,2}[.)]|\[[ xX]?\])?[ \t,;|`\"']*"


def _code(token: str, *, listed: bool = False) -> bool:
    """Whether `token` reads as a code: on a line of the list (`listed`) one digit will do
    (`nbsd3uusbs`), as long as another code of the list has its length."""
    groups = re.split(r"[- ]", token)
    if len({len(g) for g in groups}) != 1:
        return False  # `build-2024`: a name and a number, not a code's equal groups
    flat = "".join(groups)
    if not 6 <= len(flat) <= 16 or not any(c.isdigit() for c in flat):
        return False
    # (a word and a number: `v2`, `utf8`, `sha256sum` are no codes)
    return listed or flat.isdigit() or sum(c.isdigit() for c in flat) >= 2 or len(groups) > 1


def _codes(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """The codes on the naming line, then on each line of codes after it (up to two lines
    before the list may hold something else: a rule, "Keep them safe:")."""
    base = m.start("body")
    before, listed = 2, False
    strict: list[tuple[int, int]] = []
    lenient: list[tuple[int, int]] = []  # one digit: a code when another has its length
    for n, line in enumerate(compiled(r"[^\n]*\n?", 0).finditer(m.group("body"))):
        text = line.group()
        found = [c for c in compiled(_CODE, 0).finditer(text) if _code(c.group(), listed=n > 0)]
        rest = compiled(_CODE, 0).sub("", text).strip()
        if n > 0 and compiled(_AROUND, 0).fullmatch(rest) is None:
            found = []  # a sentence, not a line of the list
        if not found:
            if listed or (n > 0 and before == 0):
                break
            before -= n > 0
            continue
        listed = True
        for c in found:
            at = (base + line.start() + c.start(), base + line.start() + c.end())
            (strict if _code(c.group()) else lenient).append(at)
    lengths = [b - a for a, b in strict + lenient]
    yield from strict
    yield from (s for s in lenient if lengths.count(s[1] - s[0]) > 1)


RULES: list[Rule] = [
    Rule(
        "recovery-code",
        # the line naming them, then up to 120 lines of at most 200 characters
        r"(?i)\b(?:recovery|backup|scratch|emergency|one[ -]time[ \t]+backup)[ \t_-]+"
        r"(?:verification[ \t]+|login[ \t]+|sign[ -]?in[ \t]+)?codes?\b"
        # (read ahead, not taken: a second list's naming line inside it starts its own)
        r"(?=(?P<body>[^\n]{0,200}(?:\n[^\n]{0,200}){0,120}))",
        ("recovery", "backup", "scratch", "emergency"),
        expand=_codes,
    ),
]
