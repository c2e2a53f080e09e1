"""The agent's OS sandbox (`[agent] sandbox`): bubblewrap where it is available, else Landlock.

With `bwrap` the agent sees the file system read-only, a private `/tmp`, its own workspace
read-write, and nothing of the user's repository: the work tree and the git directory are
hidden under empty tmpfs mounts, and only the object directories the workspace's clone borrows
from (`git clone --shared` alternates) come back, read-only, so the agent's own git still
works. The agent runs in its own pid namespace that dies with the harness
(`--unshare-pid --die-with-parent`); the network is shared.

Without bwrap (`landlock`, what `auto` falls back to), the agent and the measured code run as
without a sandbox, under their supervisor, which puts them in a Landlock domain
(util/supervise.py): they read what you can but the run's folder (`.git/improve`, carved out
of the reads but for their own workspace or checkout, the objects the clone borrows and the
files their command names: `choose` says why not the whole repository) and your `~/.ssh` and
git's credential files, and write only beneath
their workspace or checkout, a temporary folder of their own, the session files of their row in
`agents/homes.py` that name no command, the agent's home of the call (`homes.private_home`) and
the devices bwrap's `/dev` holds, and, from Landlock ABI 6, signal only their own processes and reach no
abstract unix socket. See docs/integrity.md.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitimprove.agents import seccomp
from gitimprove.errors import ConfigError
from gitimprove.loop.lookup import fresh_caches
from gitimprove.util import proc, supervise

MODES = ("auto", "bwrap", "landlock", "none")

# Variables naming sockets outside the sandbox (an ssh-agent, tmux, D-Bus, docker, a display):
# unset inside it; the seccomp filter refuses AF_UNIX sockets anyway (agents/seccomp.py).
SOCKET_VARS = (
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "TMUX", "TMUX_PANE", "STY",
    "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "CONTAINER_HOST",
    "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "XAUTHORITY", "PULSE_SERVER",
    "SYSTEMD_EXEC_PID", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
)  # fmt: skip

CONTAINED = (
    "agents and the code they measure write only their workspace or checkout, a temporary "
    "folder of their own and an agent's history and login files"
)
SCOPED = "; they signal only their own processes and reach no abstract unix socket of yours"
NOT_SCOPED = (
    "; they can still signal any process of yours and reach your abstract unix sockets "
    "(Landlock ABI {abi} scopes neither: 6 does)"
)
NOT_HIDDEN = (
    "; they read nothing of the run's folder (.git/improve) but their own, nor your ~/.ssh and "
    "git's credential files, yet they read your repository and the rest of your home folder "
    "and reach your servers' unix socket files"
)
NOT_PROTECTED = (
    "without a sandbox the agent runs with your permissions: it can read and write your "
    "repository, its .git, your home folder and anything else you can; the loop still detects "
    "changes to your refs, .git/config, hooks and work tree (the run stops), never measures a "
    "file it did not commit, and kills every process it left, but it cannot prevent the writes"
)

_probe: dict[str, bool] = {}


def _listening_paths() -> set[str] | None:
    """The paths of the unix sockets a server listens on now (`/proc/net/unix`: a socket file
    whose server is gone is not there), or None where the kernel does not list them."""
    try:
        lines = Path("/proc/net/unix").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    out = set()
    for line in lines.splitlines()[1:]:
        fields = line.split(None, 7)
        with contextlib.suppress(ValueError, IndexError):
            if len(fields) == 8 and int(fields[3], 16) & 0x10000:  # __SO_ACCEPTCON
                out.add(fields[7])
    return out


def _listening(path: str, listed: set[str] | None) -> bool:
    """Whether a server accepts connections on the unix socket `path`: listed by the kernel
    (`_listening_paths`), never connected to; where it lists nothing, by a connection."""
    try:
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            return False
    except OSError:
        return False
    if listed is not None:
        return path in listed or os.path.realpath(path) in listed
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.2)
            sock.connect(path)
    except OSError:
        return False
    return True


def _sockets(folder: Path, listed: set[str] | None, limit: int = 20) -> list[str]:
    """The sockets of `folder` a server listens on (at most `limit` looked at)."""
    try:
        names = sorted(os.listdir(folder))[:limit]
    except OSError:
        return []
    return [os.fspath(folder / n) for n in names if _listening(os.fspath(folder / n), listed)]


def _live_pid_file(*paths: str) -> bool:
    """Whether one of the pid files names a live process (a daemon that is running)."""
    for path in paths:
        with contextlib.suppress(OSError, ValueError):
            pid = int(Path(path).read_text(encoding="ascii").split()[0])
            if pid > 0 and Path(f"/proc/{pid}").exists():
                return True
    return False


def reachable_servers() -> list[str]:
    """Your servers that start a program on request, found now: what such a program runs as is
    no descendant of the agent (no supervisor finds or kills it, it carries neither token nor
    mark) and can outlive the run. Each tmux server (`$TMUX_TMPDIR` or `/tmp`, `tmux-<uid>/`,
    and the one `TMUX` names) and screen session that listens, the session bus
    (`systemd-run --user`), docker or podman, and the `at` and cron daemons when they run."""
    uid, user = os.getuid(), os.environ.get("USER") or str(os.getuid())
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{uid}"
    out, listed = [], _listening_paths()
    tmux = _sockets(Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{uid}", listed)
    named = os.environ.get("TMUX", "").split(",")[0]
    if named and named not in tmux and _listening(named, listed):
        tmux.append(named)
    out += [f"the tmux server at {path}" for path in tmux]
    screens = Path(os.environ.get("SCREENDIR") or f"/run/screen/S-{user}")
    out += [f"the screen session {path}" for path in _sockets(screens, listed)]
    bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    bus_path = bus.partition("unix:path=")[2].split(",")[0] or os.path.join(runtime, "bus")
    if _listening(bus_path, listed):
        out.append(f"the session bus at {bus_path} (systemd-run --user)")
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        out.append(f"docker at {host} (DOCKER_HOST)")
    for path in (host.removeprefix("unix://") if host.startswith("unix://") else "",
                 "/var/run/docker.sock", os.path.join(runtime, "docker.sock"),
                 os.path.join(runtime, "podman", "podman.sock")):  # fmt: skip
        if path and _listening(path, listed):
            out.append(f"{'podman' if 'podman' in path else 'docker'} at {path}")
    if shutil.which("at") and _live_pid_file("/run/atd.pid", "/var/run/atd.pid"):
        out.append("the at daemon (at now)")
    if shutil.which("crontab") and _live_pid_file("/run/crond.pid", "/var/run/crond.pid"):
        out.append("the cron daemon (crontab)")
    return list(dict.fromkeys(out))


def login_keys(workdir: Path) -> list[Path]:
    """The ssh folders of the home (`~/.ssh`, of `$HOME` and of the user's own home), hidden in
    the sandbox: the network is shared, so a key the agent could read there would log it in to
    an ssh server of this machine (`ssh localhost …`), outside the sandbox. A folder holding
    the workspace is left as it is."""
    homes = {os.path.expanduser("~")}
    with contextlib.suppress(KeyError, OSError):
        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    out = []
    for home in sorted(homes):
        folder = Path(home, ".ssh")
        if not folder.is_dir() or folder.is_symlink():
            continue
        folder = folder.resolve()
        if folder == workdir or folder in workdir.parents:
            continue
        out.append(folder)
    return out


def push_credentials() -> list[Path]:
    """The files from which git takes your credentials for a remote over HTTPS, hidden in the
    sandbox (an empty file in their place): git's `store` helper's `~/.git-credentials` and
    `$XDG_CONFIG_HOME/git/credentials`, and the `~/.netrc` git's HTTP transport reads. The
    network is shared and a clone of your project names where it is hosted, so a token read
    there would push to your remote, outside the sandbox; a workspace has no remote and needs
    none. Keys in `~/.ssh` are hidden with the folder (`login_keys`); a token written into
    `~/.gitconfig` (an `http.extraHeader`, a URL with a password) stays readable."""
    homes = {os.path.expanduser("~")}
    with contextlib.suppress(KeyError, OSError):
        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    config = os.environ.get("XDG_CONFIG_HOME") or ""
    names = [os.path.join(config, "git", "credentials")] if os.path.isabs(config) else []
    for home in sorted(homes):
        names += [os.path.join(home, n) for n in (".git-credentials", ".netrc", "_netrc")]
        names.append(os.path.join(home, ".config", "git", "credentials"))
    out = []
    for name in dict.fromkeys(names):
        with contextlib.suppress(OSError):
            real = Path(name).resolve()
            if stat.S_ISREG(os.stat(real).st_mode):
                out.append(real)
    return list(dict.fromkeys(out))


def server_paths(workdir: Path) -> tuple[list[Path], list[Path]]:
    """Where your servers that start a program on request listen (`reachable_servers`), to
    hide in the sandbox whatever its seccomp filter does (a machine with no filter allows
    unix sockets): the folders (the runtime folder of the session bus, systemd and docker
    rootless, the screen folder, a tmux folder outside /tmp, which the private /tmp hides) and
    the socket files (docker's, podman's, `DOCKER_HOST`'s) that exist. A folder holding the
    workspace is left as it is."""
    uid = os.getuid()
    folders = [
        os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{uid}",
        "/run/screen",
        os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", f"tmux-{uid}"),
        os.path.dirname(os.environ.get("TMUX", "").split(",")[0]),
    ]
    host = os.environ.get("DOCKER_HOST", "")
    files = ["/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock"]
    files += [host.removeprefix("unix://")] if host.startswith("unix://") else []
    tmp = Path("/tmp")
    hidden = []
    for folder in dict.fromkeys(Path(f) for f in folders if os.path.isabs(f)):
        real = folder.resolve()
        if not folder.is_dir() or real == tmp or tmp in real.parents or real == Path("/"):
            continue
        if real != workdir and real not in workdir.parents:
            hidden.append(real)
    sockets = []
    for name in dict.fromkeys(files):
        with contextlib.suppress(OSError):
            real = Path(name).resolve()
            if stat.S_ISSOCK(os.stat(real).st_mode) and not any(
                h == real or h in real.parents for h in hidden
            ):
                sockets.append(real)
    return hidden, sockets


def bwrap_usable(path: str | None = None) -> bool:
    """Whether bubblewrap is installed and can create its namespaces here (cached)."""
    exe = path or shutil.which("bwrap")
    if exe is None:
        return False
    if exe not in _probe:
        res = proc.run(
            [
                exe,
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-pid",
                "--die-with-parent",
                "true",
            ],
            timeout=20,
        )
        _probe[exe] = res.ok
    return _probe[exe]


@dataclass(frozen=True)
class Sandbox:
    """How agent processes are started: `mode` is "bwrap", "landlock" or "none"."""

    mode: str
    exe: str = ""
    hide: tuple[Path, ...] = ()  # the user's work tree and git directories
    objects: tuple[Path, ...] = ()  # the user's object directories a workspace borrows
    message: str = ""
    tmp_size: int = 0  # bytes of each private /tmp and /dev/shm (0: the kernel's half of RAM)

    @property
    def active(self) -> bool:
        """bwrap: the agent sees nothing of the user's repository, in a mount namespace of its
        own (Landlock refuses reads of the run's folder alone, `contained`)."""
        return self.mode == "bwrap"

    @property
    def contained(self) -> bool:
        """Landlock: writes only beneath what `wrap` is given as writable, reads nothing of
        `hide` but that, the objects its clone borrows and what it is given as readable."""
        return self.mode == "landlock"

    def _hidden(self, path: Path) -> bool:
        return any(h == path or h in path.parents for h in self.hide)

    def wrap(
        self,
        argv: Sequence[str] | str,
        *,
        shell: bool,
        workdir: Path,
        readable: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        overlays: Sequence[tuple[Path, Path]] = (),
        measure: bool = False,
    ) -> tuple[list[str] | str, bool]:
        """(argv, shell) for `proc.run`: the command inside the sandbox, or unchanged.

        `measure` is for the metric and the guard (the candidate's code): only `workdir` is
        writable (the home folder too is read-only, caches go to the private /tmp). Under
        Landlock, `workdir` and `writable` (the caller's own temporary folder among them) are
        writable; `overlays` is for bwrap alone: under Landlock the caller gives the agent a
        home of its own instead (agents/homes.py `private_home`)."""
        if self.contained:  # what bwrap hides is carved out of the reads (util/supervise.py)
            restore_alternates(workdir, self.objects)
            kept = [*self.objects, *readable, *command_paths(argv, shell)]
            return supervised(
                argv, shell=shell, writable=[workdir, *writable], hide=self.hide, readable=kept
            ), False
        if not self.active:  # the measured code too: nothing of it outlives a kill -9 of ours
            return supervised(argv, shell=shell), False
        # private /tmp and /dev/shm bounded (`[agent] tmp_size`): a tmpfs is half the RAM
        # otherwise, and filling it starves the machine; the tmpfs mounts that hide the
        # repository hold nothing but mount points
        size = ["--size", str(self.tmp_size)] if self.tmp_size and sized(self.exe) else []
        tiny = ["--size", str(1 << 20)] if size else []
        args = [
            self.exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            *size, "--tmpfs", "/tmp", *size, "--tmpfs", "/dev/shm",
        ]  # fmt: skip
        tmp, named = Path("/tmp"), command_paths(argv, shell)
        # A file the agent's command names in /tmp keeps its folder (a plan, a state file),
        # read-only: a writable one would let the agent replace what runs later from it (the
        # metric's interpreter in a virtualenv under /tmp). The repository, even inside that
        # folder, is hidden again just below. A file right in /tmp (`/tmp/agent.sh`) is bound
        # alone, read-only: binding /tmp itself would undo the private /tmp.
        for folder in dict.fromkeys(p.parent for p in named if tmp in p.parents):
            if folder != tmp:
                args += ["--ro-bind", str(folder), str(folder)]
        for path in dict.fromkeys(p for p in named if p.parent == tmp and p.is_file()):
            args += ["--ro-bind", str(path), str(path)]
        for folder in self.hide:
            args += [*tiny, "--tmpfs", str(folder)]
        for folder in login_keys(workdir):
            args += [*tiny, "--tmpfs", str(folder)]
        folders, sockets = server_paths(workdir)
        for folder in folders:
            args += [*tiny, "--tmpfs", str(folder)]
        for path in sockets:
            args += ["--ro-bind", "/dev/null", str(path)]
        for path in push_credentials():  # where a tmpfs above hides it, it is gone already
            hidden = [*self.hide, *folders, tmp, Path("/dev/shm")]
            if not any(h == path or h in path.parents for h in hidden):
                args += ["--ro-bind", "/dev/null", str(path)]
        seen: set[Path] = set()
        # The objects the clone borrows come from the harness's own list (`objects`), never
        # from the workspace's alternates file, which the agent can write.
        restore_alternates(workdir, self.objects)
        for path in [*self.objects, *readable, *named]:
            # only what a tmpfs above hides needs binding; the rest is visible read-only
            under = self._hidden(path) or (
                any(f == path or f in path.parents for f in folders) and not path.is_socket()
            )
            if under and path.exists() and path not in seen:
                seen.add(path)
                args += ["--ro-bind", str(path), str(path)]
        args += ["--bind", str(workdir), str(workdir)]
        for path in writable:
            if path.exists():
                args += ["--bind", str(path), str(path)]
        for source, dest in overlays:  # a private copy, writable, over a file of the home
            args += ["--bind", str(source), str(dest)]
        if measure:
            # The command is the pid namespace's init: when it exits the kernel kills every
            # process left in it before anyone sees the exit, so nothing that waits for the
            # benchmark's end (a double-forked grandchild holding its stdout) writes after it.
            args += ["--setenv", "XDG_CACHE_HOME", "/tmp/.cache", "--as-pid-1"]
            # build caches set by name too (a user's GOCACHE would be read-only, or shared)
            for name, value in fresh_caches("/tmp/.cache").items():
                args += ["--setenv", name, value]
        for name in SOCKET_VARS:
            args += ["--unsetenv", name]
        args += [
            # A user namespace without capabilities: root outside is powerless inside (no
            # umount of the tmpfs that hides the repository, no remount of / read-write),
            # and, where bwrap can, no nested user namespace to get them back.
            "--unshare-user", "--cap-drop", "ALL", *disable_userns(self.exe),
            "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session",
            "--setenv", "TMPDIR", "/tmp", "--chdir", str(workdir),
        ]  # fmt: skip
        bpf = seccomp.filter_file(measure=measure)
        if bpf is not None:  # bwrap reads the filter from fd 9, opened by a shell on the file
            args = ["/bin/sh", "-c", 'exec "$@" 9<"$0"', bpf, *args, "--seccomp", "9"]
        args.append("--")
        if shell or isinstance(argv, str):
            return [*args, "/bin/sh", "-c", str(argv)], False
        return [*args, *argv], False


SUPERVISOR = Path(__file__).resolve().parent.parent / "util" / "supervise.py"
# the temporary folders the harness makes for each agent call (agents/base.py) and each
# metric and guard run (loop/context.py): under Landlock each command's own is writable, every
# other one hidden, a sibling's too (bwrap gives each its private /tmp)
SCRATCH = ("gitimprove-state-", "gitimprove-cache-", "gitimprove-metric-", "gitimprove-guard-")


def supervised(
    argv: Sequence[str] | str,
    *,
    shell: bool,
    writable: Sequence[Path] | None = None,
    hide: Sequence[Path] = (),
    readable: Sequence[Path] = (),
) -> list[str]:
    """The agent's command under the per-attempt supervisor (util/supervise.py): its whole
    process tree dies when it exits and when the harness dies, even by `kill -9`. With
    `writable`, in a Landlock domain that writes only beneath those paths and reads nothing
    beneath `hide`, nor the harness's temporary folders (`SCRATCH`), but them and `readable`."""
    command = ["/bin/sh", "-c", argv] if shell or isinstance(argv, str) else list(argv)
    contain: list[str] = []
    if writable is not None:
        contain = ["--landlock"]
        temp = dict.fromkeys([tempfile.gettempdir(), "/tmp", "/var/tmp"])
        like = [Path(folder, prefix) for folder in temp for prefix in SCRATCH]
        for flag, paths in (("--write", writable), ("--hide", hide), ("--read", readable),
                            ("--hide-like", like)):  # fmt: skip
            for path in dict.fromkeys(paths):
                contain += [flag, os.fspath(path)]
    return [sys.executable, "-I", "-S", str(SUPERVISOR), str(os.getpid()), *contain, "--",
            *command]  # fmt: skip


def landlock_state() -> tuple[int, str]:
    """(the kernel's Landlock ABI, "" when it is enough to contain writes, else why not)."""
    abi = supervise.landlock_abi()
    if abi == 0:
        return 0, "this kernel has no Landlock (Linux 5.13+, enabled in the LSM list)"
    if abi < supervise.LANDLOCK_ABI_NEEDED:
        return abi, (
            f"Landlock ABI {abi} cannot refuse a truncate ({supervise.LANDLOCK_ABI_NEEDED} "
            "can: Linux 6.2+)"
        )
    return abi, ""


def choose(
    mode: str,
    hide: Sequence[Path],
    objects: Path | None = None,
    *,
    tmp_size: int = 0,
    state: Path | None = None,
) -> Sandbox:
    """The sandbox for `[agent] sandbox = mode`; `bwrap` that cannot run, or `landlock` that
    this kernel lacks, is an error; `auto` takes bwrap, else Landlock, else none. bwrap hides
    `hide`; Landlock carves only `state` (the run's folder, `.git/improve`) and the files
    `login_keys` and `push_credentials` name out of the reads: it refuses a read rather than
    hiding the file, and the build tools a command runs in its
    workspace or checkout (inside the repository) read what they find in the folders above it
    (a `Cargo.toml`, a `go.work`, `.git`), where bwrap shows them nothing."""
    if mode not in MODES:
        raise ConfigError(
            f"agent.sandbox = {mode!r} is not allowed; use one of: auto, bwrap, landlock, none"
        )
    exe = shutil.which("bwrap") if mode in ("auto", "bwrap") else None
    if exe is not None and bwrap_usable(exe):
        return Sandbox(
            "bwrap",
            exe,
            tuple(dict.fromkeys(p.resolve() for p in hide)),
            tuple(borrowed_chain(objects.resolve())) if objects is not None else (),
            "sandbox: bwrap (agents see a read-only system, a private /tmp and their own "
            "workspace; your repository is hidden; Landlock is not added: bwrap's own mount "
            "and pid namespaces already keep their writes and signals in)",
            tmp_size,
        )
    if mode == "bwrap":
        why = "is not installed" if exe is None else "cannot create its namespaces here"
        raise ConfigError(
            f'agent.sandbox = "bwrap" but bubblewrap {why}',
            hint='install it (apt-get install bubblewrap), or set [agent] sandbox = "landlock" '
            'or "none"',
        )
    abi, lacking = landlock_state() if mode != "none" else (0, "")
    if mode == "landlock" and lacking:
        raise ConfigError(
            f'agent.sandbox = "landlock" but {lacking}',
            hint='set [agent] sandbox = "bwrap" (apt-get install bubblewrap) or "none"',
        )
    servers = reachable_servers()
    unreached = (
        "; nor can it find or kill a program the agent has one of your servers start, "
        "which is not its descendant and can outlive the run: " + ", ".join(servers)
        if servers
        else ""
    )
    if mode in ("auto", "landlock") and not lacking:
        why = "bubblewrap is not available; " if mode == "auto" else ""
        scoped = SCOPED if abi >= supervise.LANDLOCK_ABI_SCOPED else NOT_SCOPED.format(abi=abi)
        message = f"sandbox: landlock ({why}Landlock ABI {abi}: {CONTAINED}{scoped}){NOT_HIDDEN}"
        # the run's folder, and, as bwrap empties them, your login keys and push credentials
        hidden: list[Path] = []
        if state is not None:
            hidden = [state.resolve(), *login_keys(state.resolve()), *push_credentials()]
        return Sandbox(
            "landlock",
            hide=tuple(dict.fromkeys(hidden)),
            objects=tuple(borrowed_chain(objects.resolve())) if objects is not None else (),
            message=message + unreached,
        )
    if mode == "auto":
        reason = f"bubblewrap is not available, nor Landlock: {lacking}"
    else:
        reason = 'agent.sandbox = "none": no bubblewrap, no Landlock'
    return Sandbox("none", message=f"sandbox: none ({reason}); {NOT_PROTECTED}{unreached}")


def sized(exe: str) -> bool:
    """Whether this bwrap takes `--size` for a tmpfs (0.7+; cached)."""
    key = exe + " --size"
    if key not in _probe:
        res = proc.run(
            [exe, "--ro-bind", "/", "/", "--size", "4096", "--tmpfs", "/tmp", "true"], timeout=20
        )
        _probe[key] = res.ok
    return _probe[key]


def disable_userns(exe: str) -> list[str]:
    """`--disable-userns` where this bwrap has it (0.8+), else nothing (cached)."""
    key = exe + " --disable-userns"
    if key not in _probe:
        res = proc.run(
            [exe, "--ro-bind", "/", "/", "--unshare-user", "--disable-userns", "true"], timeout=20
        )
        _probe[key] = res.ok
    return ["--disable-userns"] if _probe[key] else []


def restore_alternates(workdir: Path, objects: Sequence[Path]) -> None:
    """Put back the clone's alternates as the harness made them (the first of `objects`):
    whatever the agent wrote there, its git borrows only what the sandbox binds."""
    if not objects:
        return
    info = workdir / ".git" / "objects" / "info"
    for part in (workdir / ".git", workdir / ".git" / "objects", info):
        if part.is_symlink() or (part.exists() and not part.is_dir()):
            return  # not a clone any more: the tree is hashed from its files anyway
    if not info.is_dir():
        return
    target = info / "alternates"
    if target.is_symlink() or target.is_dir():
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f"{objects[0]}\n")


def borrowed_chain(objects: Path) -> list[Path]:
    """`objects` and the object directories it borrows in turn (the user's own alternates)."""
    return [objects, *_alternates_of(objects)]


def _alternates_of(start: Path) -> list[Path]:
    out: list[Path] = []
    todo = [start]
    while todo:
        objects = todo.pop()
        try:
            lines = (objects / "info" / "alternates").read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            path = Path(os.path.normpath(objects / line)).resolve()
            if path not in out:
                out.append(path)
                todo.append(path)
    return out


def command_paths(argv: Sequence[str] | str, shell: bool) -> list[Path]:
    """Absolute paths named in the agent's command: they stay readable inside the sandbox."""
    if isinstance(argv, str):
        try:
            words = shlex.split(argv)
        except ValueError:
            words = argv.split()
    else:
        words = list(argv)
    out = []
    for word in words:
        if word.startswith("/") and "\0" not in word:
            path = Path(word)
            if path.exists():
                out.append(path)
    return out
