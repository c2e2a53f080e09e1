"""Reading a transcript that may hold lines of any size, in bounded chunks.

`complete_lines` yields each complete line from the file's position with the offset after
it; a line longer than MAX_LINE comes back empty (skipped, never held whole), and
`state.skipping` remembers being inside one across calls, while it is still being written.
One call reads at most MAX_PASS bytes, so a hook stays quick; the rest waits for the next.
`state` is the miner's watermark (`State`: `offset`, `skipping`, and what the detectors carry
across passes), updated as lines are read; it is saved atomically and read back tolerantly
(a field of the wrong type falls back to its default).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field

from gitimprove.util import reader
from gitimprove.util.files import atomic_write
from gitimprove.util.seal import seal, unseal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, BinaryIO


@dataclass
class State:
    offset: int = 0
    turn: int = 0
    awaiting_redirect: bool = False
    interrupted_after: str = ""
    tools_since_prompt: int = 0
    last_failed_tool: str = ""  # the tool and its command (normalized) that failed last
    fail_streak: int = 0
    edit_counts: dict[str, int] = field(default_factory=dict)
    search_streak: int = 0
    tool_names: dict[str, list[Any]] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)  # what the agent ran or touched since
    child: bool | None = None
    mined_at: float = 0.0
    skipping: bool = False  # inside a line longer than MAX_LINE: skip to its end

    @classmethod
    def load(cls, path: str) -> State:
        try:
            with open(path, "rb") as fh:
                data = reader.loads(unseal(fh.read()), max_bytes=16 << 20, max_depth=8)
        except OSError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        defaults = cls()
        for name, value in list(known.items()):
            if type(value) is not type(getattr(defaults, name)) and not (
                name == "child" and isinstance(value, bool)
            ):
                del known[name]  # a field of the wrong type falls back to its default
        state = cls(**known)
        state.offset = max(0, state.offset)
        return state

    def save(self, path: str) -> None:
        """Written whole (a temporary file renamed), sealed: the watch of gitimprove's folder
        tells it from a file of the same form that no hook wrote (util/keys.py)."""
        folder = os.path.dirname(path)
        self.tool_names = dict(list(self.tool_names.items())[-200:])
        body = (json.dumps(asdict(self)) + "\n").encode()
        rel = f"{os.path.basename(folder)}/{os.path.basename(path)}"
        atomic_write(path, seal(os.path.dirname(folder), rel, body), durable=False)


def watermark_path(improve_dir: str, session: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", session)[:100] or "unknown"
    return os.path.join(improve_dir, "watermarks", f"{safe}.json")


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
