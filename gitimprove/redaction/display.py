"""Records shown, masked: what an older gitimprove stored unmasked stays so in the repository
until `git improve doctor --secrets --repair`; `log` (and its exports), `show`, `status`,
`memory`, `idea list`, `signal list` and `reflect` mask it before it reaches a terminal, a CI
log or a file.

A text shown goes through the whole redactor, whatever its length, as a record does when it
is stored: a text of up to `WHOLE` characters at once, a longer one in overlapping windows
(`redaction.redact_windows`: the time grows with the length alone). A long `log` (one record
a row) is masked a row at a time: each row goes through the whole redactor alone, as its
record did, and a row repeated is masked once; `log` also keeps the digests of the rows found
clean (`clean`), so that the next render (one more experiment) masks only the new rows.
"""

from __future__ import annotations

# a text this short is masked whole (about a tenth of a second at most): every rule sees it
# as it saw the record when it was stored, lines around a value included
WHOLE = 8192
# what a view says, once, when it masked something stored
STORED = (
    "records stored by an older gitimprove hold secrets: shown masked here; "
    "`git improve doctor --secrets --repair` masks them in the repository"
)


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
            if clean is not None and digest in clean:
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
