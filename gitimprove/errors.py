"""One exception hierarchy. The CLI boundary maps these to exit codes (cli.main)."""

from __future__ import annotations

from gitimprove.util.gitdir import is_object_name


class GitImproveError(Exception):
    """A failure the user can act on. `hint` says what to do next."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nhint: {self.hint}"
        return self.message


_command: list[str] = []  # the subcommand the user ran (cli.main), for the words of a hint


def ran(name: str | None) -> None:
    """Remember the subcommand the user ran (`run`, `init`, `measure`, …)."""
    _command[:] = [name] if name else []


def again() -> str:
    """How to go on once the machine lets the command write again: `run --resume` for a
    stopped run, otherwise the very command the user ran, again."""
    name = _command[0] if _command else None
    if name == "run":
        return "`git improve run --resume`"
    if name is None:
        return "run the command again"
    return f"run `git improve {name}` again"


class NotARepositoryError(GitImproveError):
    """Not inside a usable git repository."""


class ConfigError(GitImproveError):
    """`.gitimprove.toml` or `improve.*` git config is invalid."""


class MetricError(GitImproveError):
    """The metric command printed nothing that parses as a number."""

    def __init__(self, message: str, output: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.output = output

    def __str__(self) -> str:
        lines = self.output.rstrip().splitlines()[-20:]
        shown = "\n".join(f"  | {line}" for line in lines) if lines else "  (nothing)"
        text = f"{self.message}\nit printed:\n{shown}"
        return f"{text}\nhint: {self.hint}" if self.hint else text


class ImportFormatError(GitImproveError):
    """A results file that cannot be imported as a whole."""


class ConflictError(GitImproveError):
    """A compare-and-swap ref update kept losing against other writers."""


class UnknownCommitError(GitImproveError):
    """A revision that does not name a commit."""


_REFUSED_WRITES = (
    "No space left on device",
    "Read-only file system",
    "Disk quota exceeded",
    "Permission denied",
    "Too many open files",
    "Input/output error",
)


def from_environment(exc: BaseException) -> GitImproveError | None:
    """The machine refused something (a full disk, a read-only or unwritable `.git`, no file
    handles left): a failure the user acts on, not a bug of ours. None for anything else."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    corrupt = corrupt_object(exc)
    if corrupt is not None:
        return GitImproveError(
            f"the object {corrupt} in your repository does not hold what its name says "
            "(something outside git wrote it, e.g. an agent without a sandbox)",
            hint="`git improve doctor --repair` moves it aside, then run the command again",
        )
    damaged = damaged_object(exc)
    if damaged is not None:
        return GitImproveError(
            f"the object {damaged} of your repository is missing or damaged (something "
            "outside git removed or rewrote it, e.g. an agent without a sandbox)",
            hint="`git fsck` names what is damaged or missing; restore it from another clone or "
            f"a backup, then {again()}",
        )
    reason = next((w for w in _REFUSED_WRITES if w in text), None)
    if reason is None:
        return None
    where = getattr(exc, "filename", None)
    return GitImproveError(
        f"the file system refused: {reason}" + (f" ({where})" if where else f" ({text})"),
        hint=f"free some space or make the repository writable, then {again()} (every record "
        "is written whole or not at all; `git improve doctor` checks them)",
    )


def corrupt_object(exc: BaseException) -> str | None:
    """The name of the object whose content does not match its name, when `exc` is git's
    "object hash mismatch" (a loose object planted or damaged); None otherwise."""
    text = str(exc)
    if "hash mismatch" not in text or type(exc).__name__ != "GitError":
        return None
    name = text.split(":", 1)[0].strip()
    return name if is_object_name(name) else None


# what libgit2 says when an object it must read is gone or its bytes are not an object
_DAMAGED = (
    "failed to inflate",
    "object not found",
    "failed to parse",
    "corrupt",
    "packfile",
    "bad object",
    "invalid object",
)


def damaged_object(exc: BaseException) -> str | None:
    """The name of an object the repository no longer holds whole — a `KeyError` naming it
    (pygit2's "not found") or libgit2's error reading it; None otherwise."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        name = exc.args[0]
        return name if is_object_name(name) else None
    if type(exc).__name__ != "GitError":
        return None
    text = str(exc)
    lowered = text.lower()
    if not any(w in lowered for w in _DAMAGED):
        return None
    import re

    found = re.search(r"\b(?:[0-9a-f]{64}|[0-9a-f]{40})\b", text)
    return found.group(0) if found else f"named nowhere ({text[:200]})"
