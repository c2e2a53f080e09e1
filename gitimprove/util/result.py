"""What a command did (`proc.run` returns it)."""

from __future__ import annotations

from collections.abc import Sequence

TAIL_CHARS = 4000


class Result:
    """What a command did. (A plain class, not a dataclass: a cold `log` runs git through
    this module and must not pay for importing dataclasses.)"""

    __slots__ = (
        "argv", "late", "over", "raw", "returncode", "seconds", "stderr", "stdout", "timed_out",
    )  # fmt: skip

    def __init__(
        self,
        argv: Sequence[str] | str,
        returncode: int,
        stdout: str,
        stderr: str,
        seconds: float,
        timed_out: bool = False,
        raw: bytes = b"",  # stdout as the command wrote it (file names that are not UTF-8)
        over: str = "",  # which stream went over the output limit (its middle is left out)
        late: int = 0,  # bytes its stdout received after the command exited (never read)
    ) -> None:
        self.argv, self.returncode, self.stdout, self.stderr = argv, returncode, stdout, stderr
        self.seconds, self.timed_out, self.raw, self.over = seconds, timed_out, raw, over
        self.late = late

    def __repr__(self) -> str:
        return f"Result({self.argv!r}, returncode={self.returncode}, timed_out={self.timed_out})"

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, chars: int = TAIL_CHARS) -> str:
        """The end of the output, secrets masked before the cut (it is often stored)."""
        from gitimprove.redaction import clip_tail

        text = self.stdout + (("\n" + self.stderr) if self.stderr else "")
        return clip_tail(text, chars)
