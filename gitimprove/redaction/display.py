"""Records shown, masked: what an older gitimprove stored unmasked stays so in the repository
until `git improve doctor --secrets --repair`; `log` (and its exports), `show`, `status`,
`memory`, `idea list`, `signal list` and `reflect` mask it before it reaches a terminal, a CI
log or a file.

A text shown goes through the whole redactor, whatever its length, as a record does when it
is stored: a text of up to `WHOLE` characters at once, a longer one in overlapping windows
(`redaction.redact_windows`: the time grows with the length alone). A long `log` (one record
a row) is masked a row at a time: each row that could hold a secret (`_suspect`: a word a
credential's key, a scheme or a header needs, wherever it is in the row, prose included, or a
run of 16 token characters that is not a lowercase hex digest) goes through the whole redactor
alone, as its record did, and a row repeated is masked once; `log` also keeps the digests of
the rows found clean (`clean`), so that the next render (one more experiment) masks only the
new rows. Most rows hold none of these: ten thousand are checked in a few hundredths of a
second, where the whole redactor on each would take seconds (DESIGN §13's cold `log`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# a text this short is masked whole (about a tenth of a second at most): every rule sees it
# as it saw the record when it was stored, lines around a value included
WHOLE = 8192
# what a view says, once, when it masked something stored
STORED = (
    "records stored by an older gitimprove hold secrets: shown masked here; "
    "`git improve doctor --secrets --repair` masks them in the repository"
)


# what a secret needs on its row, looked for anywhere in it (lowercased): a credential's key
# word (in an assignment or in prose: "the password is …"), a scheme or header word, a URL,
# a user@host, a private key's header, a flag or a call that carries a password (`mysql -p…`,
# `sudo -S`, `redis-cli -a`, `/p:`, `IDENTIFIED BY`), a wallet's words or key
_WORDS: tuple[str, ...] = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred")
_WORDS += ("sig", "cookie", "session", "login", "bearer", "basic", "private", "-----begin")
_WORDS += ("://", "@", "pin", "psk", "salt", "seed", "mnemonic", "phrase", "wallet", "id.json")
_WORDS += ("-p", " -a", "'-a'", '"-a"', " -k", " -s", " -u", "/p:", "--user", "identified")
_WORDS += ("add_user", "add-mask", "pdo(", "algolia", "密码", "пароль")
# (a guard's "pass" in its own column of a row is no key: "pass" must not end a cell)
_ANY_WORD = "|".join(re.escape(w) for w in _WORDS).replace("pass", r"pass(?![\t\n]|$)", 1)
# a provider's token: 16 token characters or more, a digit and a letter among them, and not
# a commit's or a content's full name (40 or 64 lowercase hex digits: never masked alone);
# a `.pgpass` line (host:port:database:user:password); a key as a list of 32+ bytes
_RUN = r"[A-Za-z0-9+/_=.~-]{16,}"
_DIGEST = r"[0-9a-f]{40}|[0-9a-f]{64}"
_SHAPES = r":\d{2,5}:[^:\s]*:[^:\s]*:|\[\s*\d{1,3}(?:\s*,\s*\d{1,3}){31}"
# a drawn password wherever it stands (after `log in (admin / `, in `net use` or `schtasks /rp`):
# a word of 8 characters or more mixing lower and upper case letters and digits
_WORD = r"[^\s'\"(),;\[\]{}<>|`]{8,}"


def _suspect(row: str) -> bool:
    """Whether a secret could be on `row` (a row with none of `_WORDS`, `_SHAPES`, a `_RUN` nor
    a mixed `_WORD` holds nothing the redactor masks)."""
    from gitimprove.redaction.engine import compiled

    if compiled(_ANY_WORD, 0).search(row.lower()) or compiled(_SHAPES, 0).search(row):
        return True
    digest = compiled(_DIGEST, 0)
    for m in compiled(_RUN, 0).finditer(row):
        run = m.group()
        if _has(run, str.isdigit) and _has(run, str.isalpha) and not digest.fullmatch(run):
            return True
    return any(
        _has(word, str.isdigit) and _has(word, str.islower) and _has(word, str.isupper)
        for word in (m.group() for m in compiled(_WORD, 0).finditer(row))
    )


def _has(text: str, kind: Callable[[str], bool]) -> bool:
    return any(kind(c) for c in text)


def mask_lines(
    text: str, *, json_lines: bool = False, rows: bool = False, clean: set[bytes] | None = None
) -> str:
    """`text` with every secret masked: with `json_lines`, each line alone (each stays valid
    JSON); with `rows` (a `log`, one record a line), a long text a row at a time. `clean`
    holds the digests (`row_digest`) of rows the redactor left as they were: those are kept
    without running it again, and the rows found clean are added."""
    from gitimprove.redaction import redact, redact_windows

    if json_lines or (rows and len(text) > WHOLE and "-----BEGIN" not in text):
        return _by_row(text, json_lines=json_lines, clean=clean)
    if "-----BEGIN" in text or len(text) <= WHOLE:  # (a private key spans lines)
        return redact(text)
    return redact_windows(text)


def row_digest(row: str) -> bytes:
    """What `clean` keeps of a row (never the row: only rows holding no secret are kept)."""
    import hashlib

    return hashlib.blake2b(row.encode("utf-8", "surrogateescape"), digest_size=16).digest()


def _by_row(text: str, *, json_lines: bool, clean: set[bytes] | None) -> str:
    """Each line of `text` through the whole redactor alone, a line repeated masked once."""
    from gitimprove.redaction import redact, redact_blob

    done: dict[str, str] = {}
    out = []
    for line in text.splitlines(keepends=True):
        masked = done.get(line)
        if masked is None:
            digest = row_digest(line) if clean is not None else b""
            if (clean is not None and digest in clean) or not _suspect(line):
                masked = line
            elif json_lines:
                masked = redact_blob(line).decode("utf-8", "surrogateescape")
            else:
                masked = redact(line)
            if clean is not None and masked == line:
                clean.add(digest)
            done[line] = masked
        out.append(masked)
    return "".join(out)
