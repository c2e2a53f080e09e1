"""Records shown, masked: what an older gitimprove stored unmasked stays so in the repository
until `git improve doctor --secrets --repair`; `log` (and its exports), `show`, `status`,
`memory` and `idea list` mask it before it reaches a terminal, a CI log or a file.

A text shown goes through the whole redactor, whatever its length, as a record does when it
is stored: a text of up to `WHOLE` characters at once, a longer one in overlapping windows
(`redaction.redact_windows`: the time grows with the length alone). `log` alone, one record
a row and bound by its budget (ten thousand rows in a few tenths of a second, DESIGN §13),
sends a row of a long log through the redactor only when a cheap scan finds what a secret
needs around it (a credential's key before `=` or `:`, a URL's `://`, a private key's
header, or a run of 16 token characters holding a digit); a password in prose with none of
these (`the password is x`) is not looked for there; `doctor --secrets` finds it.
"""

from __future__ import annotations

from gitimprove.redaction.engine import compiled

# what a secret needs on its line: a credential's key before `=` or `:`, a scheme's word, a
# URL's user, a private key's header, or a long run of token characters mixing letters and
# digits (each looked for with `str.find` and one simple pattern: a log of ten thousand
# rows is scanned in a few hundredths of a second)
_KEY_WORDS: tuple[str, ...] = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred")
_KEY_WORDS += ("sig", "cookie", "session", "login")
_KEY_TAIL = r"[\w.-]{0,30}[\"']?[ \t]{0,3}[:=]"
_MARKS = ("bearer ", "basic ", "-----begin", "://")
_RUN = r"[A-Za-z0-9+/_=-]{16,}"

# a text this short is masked whole (about a tenth of a second at most): every rule sees it
# as it saw the record when it was stored, lines around a value included
WHOLE = 8192
# what a view says, once, when it masked something stored
STORED = (
    "records stored by an older gitimprove hold secrets: shown masked here; "
    "`git improve doctor --secrets --repair` masks them in the repository"
)


def _suspect_lines(text: str) -> set[int]:
    """The starts of the lines a secret may be on."""
    at: list[int] = []
    low = text.lower()
    tail = compiled(_KEY_TAIL, 0)
    for word in _KEY_WORDS + _MARKS:
        n = low.find(word)
        while n != -1:
            if word in _MARKS or tail.match(low, n + len(word)):
                at.append(n)
            n = low.find(word, n + 1)
    for m in compiled(_RUN, 0).finditer(text):
        run = m.group()
        if any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
            at.append(m.start())
    return {text.rfind("\n", 0, n) + 1 for n in at}


def mask_lines(text: str, *, json_lines: bool = False, rows: bool = False) -> str:
    """`text` with every secret masked (each JSON line stays valid JSON with `json_lines`);
    with `rows` (a `log`, one record a line), the lines of a long text that no secret can be
    on are kept without running the redactor."""
    from gitimprove.redaction import redact, redact_blob, redact_windows

    if not text:
        return text
    if json_lines and (len(text) <= WHOLE or not rows):  # each line a JSON document
        return "".join(
            redact_blob(line).decode("utf-8", "surrogateescape")
            for line in text.splitlines(keepends=True)
        )
    if "-----BEGIN" in text or len(text) <= WHOLE:  # (a private key spans lines)
        return redact_blob(text).decode("utf-8", "surrogateescape") if json_lines else redact(text)
    if not rows:
        return redact_windows(text)
    starts = _suspect_lines(text)
    if not starts:
        return text
    out, pos = [], 0
    for start in sorted(starts):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        line = text[start:end]
        out += [
            text[pos:start],
            redact_blob(line).decode("utf-8", "surrogateescape") if json_lines else redact(line),
        ]
        pos = end
    out.append(text[pos:])
    return "".join(out)
