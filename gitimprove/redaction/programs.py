"""Compiled rule patterns kept between processes, so a hook does not parse them again.

Python parses and compiles every pattern anew in each process: for the ~60 rules a short
tool error wakes, that is most of a hook's time. What `re` hands to `_sre.compile` (the
pattern's program: a list of integers, its flags and groups) is kept here, by pattern and
flags, in one `marshal` file per interpreter in the user's cache folder
(`$XDG_CACHE_HOME/gitimprove/sre-<python tag>`), built as patterns are first used and
written when the process ends.

The file is a cache and never trusted further than that:

- it is read only when its header names this very interpreter (version, `_sre.MAGIC`,
  code size), its body matches the checksum beside it, it belongs to the user and no one
  else can write it; anything else (another Python, a damaged or foreign file, a changed
  signature of `_sre.compile`) compiles the pattern the ordinary way;
- a program is looked up by the exact pattern text and flags, never by a hash alone;
- it lives outside the repository's git directory: an agent in the sandbox sees the home
  folder read-only (its `XDG_CACHE_HOME` is private), and an agent without the sandbox runs
  as you and could as well change gitimprove's own code; the cache gives it nothing more.

`GITIMPROVE_REGEX_CACHE=0` turns it off.
"""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_VERSION = 1
_LIMIT = 4096  # programs in the file (the rules need ~350)
_loaded: dict[tuple[str, int], bytes] | None = None
_new: dict[tuple[str, int], bytes] = {}


def compile_pattern(regex: str, flags: int) -> re.Pattern[str]:
    """`re.compile(regex, flags)`, from the kept program when there is one."""
    if os.environ.get("GITIMPROVE_REGEX_CACHE") == "0":
        return re.compile(regex, flags)
    key = (regex, int(flags))
    try:
        raw = _programs().get(key)
        if raw is not None:
            return _from_program(regex, raw)
        pattern, raw = _compile(regex, key[1])
        if not _new:
            import atexit

            atexit.register(save)
        _new[key] = raw
        return pattern
    except Exception:  # another Python's internals or a damaged entry: the ordinary way
        return re.compile(regex, flags)


def _from_program(regex: str, raw: bytes) -> re.Pattern[str]:
    import _sre  # type: ignore[import-not-found]
    import marshal

    flags, code, groups, groupindex, indexgroup = marshal.loads(raw)
    compiled: re.Pattern[str] = _sre.compile(regex, flags, code, groups, groupindex, indexgroup)
    return compiled


def _compile(regex: str, flags: int) -> tuple[re.Pattern[str], bytes]:
    """What `re._compiler.compile` does, keeping the arguments it gives `_sre.compile`."""
    import marshal
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(regex, flags)
    code = [int(c) for c in _compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, n in groupindex.items():
        indexgroup[n] = name
    args = (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex)
    raw = marshal.dumps((*args, tuple(indexgroup)))
    return _from_program(regex, raw), raw


def path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gitimprove", f"sre-{sys.implementation.cache_tag}")


def _header() -> bytes:
    import _sre

    return f"gitimprove-sre {_VERSION} {_sre.MAGIC} {_sre.CODESIZE} {sys.version}".encode()


def _digest(body: bytes) -> bytes:
    import zlib  # against damage (a cut write, a bad disk), not a forger: see above

    return b"%08x" % zlib.crc32(body)


def _programs() -> dict[tuple[str, int], bytes]:
    global _loaded
    if _loaded is None:
        _loaded = _read(path())
    return _loaded


def _read(file: str) -> dict[tuple[str, int], bytes]:
    """The programs in `file`; nothing when it is missing, foreign or damaged."""
    try:
        with open(file, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return {}
            data = fh.read()
        header, digest, body = data.split(b"\n", 2)
        if header != _header() or digest != _digest(body):
            return {}
        import marshal

        table: Any = marshal.loads(body)
        if not isinstance(table, dict):
            return {}
        return {
            k: v
            for k, v in table.items()
            if isinstance(k, tuple)
            and len(k) == 2
            and isinstance(k[0], str)
            and isinstance(k[1], int)
            and isinstance(v, bytes)
        }
    except (OSError, ValueError, EOFError, TypeError):
        return {}


def save() -> None:
    """Add the programs this process compiled to the file (merged with what another process
    may have written meanwhile; written whole, then renamed into place)."""
    if not _new:
        return
    file = path()
    try:
        import marshal
        import tempfile

        table = _read(file)
        if len(table) + len(_new) > _LIMIT:  # patterns made at run time must not grow it forever
            table = {}
        table.update(_new)
        body = marshal.dumps(table)
        folder = os.path.dirname(file)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".sre-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_header() + b"\n" + _digest(body) + b"\n" + body)
            os.replace(tmp, file)
        except BaseException:
            os.unlink(tmp)
            raise
        _new.clear()
    except Exception:  # a cache that cannot be written is only slower next time
        pass
