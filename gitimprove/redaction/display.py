"""Records shown, masked: what an older gitimprove stored unmasked stays so in the repository
until `git improve doctor --secrets --repair`; `log` (and its exports), `show`, `status`,
`memory` and `idea list` mask it before it reaches a terminal, a CI log or a file.

Every text shown goes through the whole redactor, whatever its length, as a record does when
it is stored: a text of up to `WHOLE` characters at once; a longer one in overlapping windows
(`redaction.redact_windows`, so the time grows with the length alone), or, for a view of one
record a line (`log` in every format), line by line, each line the record it shows.
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


def mask_lines(text: str, *, json_lines: bool = False, rows: bool = False) -> str:
    """`text` with every secret masked: each line a JSON document masked as stored (and
    still valid JSON) with `json_lines`, each line one record's row with `rows`, else the
    text as a whole (in windows when it is long)."""
    from gitimprove.redaction import redact, redact_blob, redact_windows

    if not text:
        return text
    if json_lines:  # each line a JSON document, masked as stored
        return "".join(
            redact_blob(line).decode("utf-8", "surrogateescape")
            for line in text.splitlines(keepends=True)
        )
    if "-----BEGIN" in text or len(text) <= WHOLE:  # (a private key spans lines)
        return redact(text)
    if rows:
        return "".join(map(redact, text.splitlines(keepends=True)))
    return redact_windows(text)
