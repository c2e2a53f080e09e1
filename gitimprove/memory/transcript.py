"""Reading a transcript that may hold lines of any size, in bounded chunks.

`complete_lines` yields each complete line from the file's position with the offset after
it; a line longer than MAX_LINE comes back empty (skipped, never held whole), and
`state.skipping` remembers being inside one across calls, while it is still being written.
One call reads at most MAX_PASS bytes, so a hook stays quick; the rest waits for the next.
`state` is the miner's watermark (`offset`, `skipping`), updated as lines are read.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO

CHUNK = 1 << 20  # read this much at a time
MAX_LINE = 8 << 20  # a longer transcript line is skipped, never held whole
MAX_PASS = 64 << 20  # mined per call; the rest waits for the next hook


def complete_lines(fh: BinaryIO, state: Any) -> Iterator[tuple[bytes, int]]:
    """(line, offset after it) for each complete line from the file's position, read in
    chunks; lines over MAX_LINE are skipped (state.skipping carries that across passes).
    Stops at a partial last line, or after MAX_PASS bytes."""
    offset = state.offset
    pending = b""
    read = 0
    while read < MAX_PASS:
        chunk = fh.read(CHUNK)
        if not chunk:
            break
        read += len(chunk)
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            piece = chunk[start : nl + 1]
            start = nl + 1
            if state.skipping:
                state.skipping = False
                offset += len(pending) + len(piece)
                pending = b""
                continue
            line = pending + piece
            pending = b""
            offset += len(line)
            if len(line) <= MAX_LINE:
                yield line, offset
            else:
                yield b"", offset
        rest = chunk[start:]
        if state.skipping:
            offset += len(rest)  # still inside the long line: drop it as it comes
        elif len(pending) + len(rest) > MAX_LINE:
            offset += len(pending) + len(rest)
            pending = b""
            state.skipping = True
        else:
            pending += rest
    state.offset = offset
