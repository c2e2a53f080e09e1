"""Credentials a command line takes by position or by an odd flag, read from a table.

Many tools take a password as a plain argument (`rabbitmqctl add_user bob <pw>`, `mc alias
set <alias> <url> <access key> <secret key>`, `net use \\\\host\\share <pw> /user:…`,
`mysqladmin password <pw>`) or behind a flag whose name does not say so (`ipmitool -P`,
`sqlcmd -P`, `7z -p<pw>`, `sc config … password= <pw>`). Each is a row of `COMMANDS`: the
command's words, then where its credentials stand. The rule for a row is only compiled when
its keyword occurs in a text, and a row is data: a new tool is a new line, not new code.

A row (`Cmd`):
- `words`: the program and its subcommand words (`"rabbitmqctl add_user"`); options may come
  between them (`rabbitmqctl -n rabbit@h add_user`);
- `at`: positions of credentials among the arguments after the words (options and their
  values do not count), 0-based;
- `after`: an argument (a regex) after which the credentials stand, counted by `at` from it
  (`net use`'s `\\\\host\\share`, `nmcli … password`);
- `opts`: options whose value is a credential: `-P` (the next argument, or `-P=<v>`),
  `/pass:` or `password=` (attached, or the next argument), `-p*` (attached only: `-p<pw>`);
- `takes`: the command's other options that take a value (so it is not read as a position);
- `slash`: `/x` arguments are options (Windows commands), not positions;
- `public`: values that are well-known defaults, not secrets (SNMP's `public`).
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import is_value, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class Cmd:
    __slots__ = ("after", "at", "opts", "public", "slash", "takes", "words")

    def __init__(
        self,
        words: str,
        at: tuple[int, ...] = (),
        *,
        after: str = "",
        opts: str = "",
        takes: str = "",
        slash: bool = False,
        public: tuple[str, ...] = (),
    ) -> None:
        self.words = tuple(words.split())
        self.at = at if at or not after else (0,)
        self.after = after
        self.opts = tuple(opts.split())
        self.takes = tuple(takes.split())
        self.slash = slash
        self.public = public


_SNMP = "-c -A -X"  # the community; SNMPv3 authentication and privacy passphrases
_SNMP_DEFAULTS = ("public", "private")
COMMANDS: tuple[Cmd, ...] = (
    # message brokers, object stores
    Cmd("rabbitmqctl add_user", (1,), takes="-n --node -t --timeout"),
    Cmd("rabbitmqctl change_password", (1,), takes="-n --node -t --timeout"),
    Cmd("rabbitmqctl authenticate_user", (1,), takes="-n --node -t --timeout"),
    Cmd("mc alias set", (3,)),
    Cmd("mc config host add", (3,)),
    Cmd("mc admin user add", (2,)),
    Cmd("mosquitto_pub", opts="-P"),
    Cmd("mosquitto_sub", opts="-P"),
    Cmd("mosquitto_passwd", takes="-U", at=(2,)),
    # Windows
    Cmd("net use", after=r"\\{2,4}[^\\\s]+\\.*", slash=True, opts="/password: /p:"),
    Cmd("sc config", opts="password="),
    Cmd("sc.exe config", opts="password="),
    Cmd("sc create", opts="password="),
    Cmd("sc.exe create", opts="password="),
    Cmd("wmic", slash=True, opts="/password:"),
    Cmd("winrs", slash=True, opts="-p: /p: -password: /password:"),
    Cmd("runas", slash=True, opts="/password:"),
    Cmd("cmdkey", slash=True, opts="/pass: /password:"),
    Cmd("schtasks", slash=True, opts="/rp"),
    # databases
    Cmd("mysqladmin", after="password"),
    Cmd("sqlcmd", opts="-P"),
    Cmd("bcp", opts="-P"),
    Cmd("isql", (2,)),
    Cmd("osql", opts="-P"),
    Cmd("influx", opts="-p --password"),
    Cmd("couchbase-cli", opts="-p --password"),
    # hardware, network and VPN
    Cmd("ipmitool", opts="-P"),
    Cmd("snmpwalk", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmpbulkwalk", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmpget", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmpgetnext", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmpbulkget", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmpset", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmptable", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmptrap", opts=_SNMP, public=_SNMP_DEFAULTS),
    Cmd("snmpusm", opts="-A -X"),
    Cmd("nmcli", after=r"(?i)password|psk|wifi-sec\.psk|802-11-wireless-security\.psk"),
    Cmd("wpa_passphrase", (1,)),
    Cmd("openconnect", opts="--passwd-on-stdin"),
    Cmd("ldappasswd", opts="-s -w -a"),
    Cmd("ldapmodify", opts="-w"),
    Cmd("ldapadd", opts="-w"),
    Cmd("ldapdelete", opts="-w"),
    # remote desktops: `xfreerdp /p:<pw>`, `rdesktop -p <pw>` (`-p -` reads it from stdin)
    Cmd("xfreerdp", slash=True, opts="/p: /password: /gp: /gateway-password:"),
    Cmd("wlfreerdp", slash=True, opts="/p: /password:"),
    Cmd("sdl-freerdp", slash=True, opts="/p: /password:"),
    Cmd("rdesktop", opts="-p", takes="-u -d -g -a -k -T -r -x"),
    Cmd("vncviewer", opts="-passwd -password"),
    Cmd("sshpass", opts="-p*"),
    # archives and keys
    Cmd("7z", opts="-p*"),
    Cmd("7za", opts="-p*"),
    Cmd("7zz", opts="-p*"),
    Cmd("unrar", opts="-p*"),
    Cmd("rar", opts="-p* -hp*"),
    Cmd("unzip", opts="-P"),
    Cmd("jarsigner", opts="-storepass -keypass"),
    # accounts and secret stores
    Cmd("vault login", (0,), takes="-method -path -address -namespace"),
    Cmd("dscl", after="-passwd", at=(1, 2)),
    Cmd("security add-generic-password", opts="-w"),
    Cmd("security add-internet-password", opts="-w"),
    Cmd("security unlock-keychain", opts="-p"),
    Cmd("security create-keychain", opts="-p"),
    Cmd("sysadminctl", opts="-password -adminPassword -newPassword -oldPassword"),
    Cmd("poetry config", after=r"http-basic\.[\w.-]+", at=(1,)),
    Cmd("poetry config", after=r"pypi-token\.[\w.-]+"),
    Cmd("npm config set", after=r"[^\s=]*(?i:_auth\w*|_password|token)"),
    Cmd("yarn config set", after=r"(?i)npmAuthToken|npmAuthIdent|_auth\w*"),
    Cmd("pnpm config set", after=r"[^\s=]*(?i:_auth\w*|_password|token)"),
    Cmd("git config", after=r"(?i)[\w.-]*\.(?:password|token|secret)"),
    Cmd("conda config", after=r"(?i)[\w.-]*(?:password|token)"),
    # registries and platforms one logs in to with `-u <user> -p <password>`
    Cmd("oc login", opts="-p --password"),
    Cmd("cf login", opts="-p"),
    Cmd("cf auth", (1,)),
    Cmd("podman login", opts="-p --password"),
    Cmd("buildah login", opts="-p --password"),
    Cmd("nerdctl login", opts="-p --password"),
    Cmd("skopeo login", opts="-p --password"),
    Cmd("oras login", opts="-p --password"),
    Cmd("crane auth login", opts="-p --password"),
    Cmd("helm registry login", opts="-p --password"),
    Cmd("az acr login", opts="-p --password"),
    Cmd("twine upload", opts="-p --password"),
    Cmd("twine register", opts="-p --password"),
    Cmd("hdbsql", opts="-p"),
    Cmd("cypher-shell", opts="-p --password"),
    Cmd("p4", opts="-P"),
    Cmd("db2 connect", after=r"(?i)using"),
    Cmd("pdftk", after=r"(?i)(?:user|owner)_pw"),
    # secret stores and tokens given to a platform's command line
    Cmd("az keyvault secret set", opts="--value"),
    Cmd("databricks secrets put", opts="--string-value"),
    Cmd("databricks secrets put-secret", opts="--string-value"),
    Cmd("vault operator unseal", (0,)),
    Cmd("snyk auth", (0,)),
    Cmd("doctl auth init", opts="-t --access-token"),
    Cmd("codecov", opts="-t --token"),
    Cmd("tailscale up", opts="--authkey --auth-key"),
    Cmd("tailscale login", opts="--authkey --auth-key"),
    Cmd("netlify", opts="--auth"),
)

# one argument: a quoted string (its content is the value) or a run of non-blanks
_ARG = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|(?P<bare>(?:[^\s"'|;&`]|\\ )+))"""
# the rest of one command: not past a line break, a pipe, `;` or `&`
_REST = r"""(?:[^\n|;&"']|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')*"""


class _Arg:
    __slots__ = ("end", "start", "text")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.start = start
        self.end = end


def _args(text: str, start: int, end: int) -> list[_Arg]:
    out = []
    for m in compiled(_ARG, 0).finditer(text, start, end):
        g = "dq" if m.group("dq") is not None else "sq" if m.group("sq") is not None else "bare"
        out.append(_Arg(m.group(g), m.start(g), m.end(g)))
    return out


def _is_option(cmd: Cmd, arg: str) -> bool:
    return (arg.startswith("-") and len(arg) > 1) or (cmd.slash and arg.startswith("/"))


def _opt_value(cmd: Cmd, args: list[_Arg], n: int) -> tuple[_Arg | None, bool]:
    """The credential an option at `args[n]` gives, and whether it takes the next
    argument."""
    a = args[n]
    nxt = args[n + 1] if n + 1 < len(args) else None
    for opt in cmd.opts:
        if opt.endswith("*"):
            head = opt[:-1]
            if a.text.startswith(head) and len(a.text) > len(head):
                return _Arg(a.text[len(head) :], a.start + len(head), a.end), False
            continue
        if a.text == opt or (a.text.lower() == opt.lower() and opt[-1] in ":="):
            return nxt, True
        attached = opt if opt[-1] in ":=" else opt + "="
        if a.text.lower().startswith(attached.lower()) and len(a.text) > len(attached):
            return _Arg(a.text[len(attached) :], a.start + len(attached), a.end), False
    return None, a.text in cmd.takes


def _found(cmd: Cmd, m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """Where the credentials of `cmd` are in the command line `m`."""
    end = m.end()
    opened = m.string[m.start() - 1 : m.start()] if m.start() else ""
    if opened in ("'", '"', "`"):  # a command in a string: `os.system("net use …")`
        close = m.string.find(opened, m.end("prog"))
        end = min(end, close) if close != -1 else end
    args = _args(m.string, m.end("prog"), end)
    command = _starts_command(m)
    words = list(cmd.words[1:])
    positions: list[_Arg] = []
    anchored = not cmd.after
    n = 0
    while n < len(args):
        a = args[n]
        if not anchored and not words and compiled(cmd.after, 0).fullmatch(a.text):
            anchored, positions = True, []
            n += 1
            continue
        value, skip = _opt_value(cmd, args, n)
        if value is not None or skip or _is_option(cmd, a.text):
            if value is not None and _secret(cmd, value.text, command):
                yield value.start, value.end
            n += 2 if skip else 1
            continue
        if words:
            if a.text.lower() != words[0].lower():
                return  # another subcommand
            words.pop(0)
        else:
            positions.append(a)
        n += 1
    if words or not anchored:
        return
    for at in cmd.at:
        if at < len(positions) and _secret(cmd, positions[at].text, command):
            yield positions[at].start, positions[at].end


# before a command on its line: nothing, a prompt, `sudo`, a quote or `(` opening a string
# given to a shell, `&&`, `RUN`, `exec`
_COMMAND_START = (
    r"(?i)(?:^|[$#>%]|&&|\|\||\bsudo(?:[ \t]+-\S+)*|\bRUN|\bexec|\bcmd(?:\.exe)?[ \t]+/c"
    r"|[`\"'(]|\bdo|\bthen|-c)[ \t]*$"
)


def _starts_command(m: re.Match[str]) -> bool:
    """Whether the program name starts a command (not a word in a sentence), so that a
    password of letters only may stand after it."""
    line = m.string.rfind("\n", 0, m.start()) + 1
    return compiled(_COMMAND_START, 0).search(m.string, line, m.start()) is not None


# words that continue a sentence about a command rather than give it a value
_PROSE = words(
    "a an the and or with without for to as is are was of in on by using via then from "
    "first here there this that it its your my their"
)


def _secret(cmd: Cmd, value: str, command: bool) -> bool:
    v = value.strip()
    if v.lower() in cmd.public or v in ("*", "-") or v.startswith(("$", "%", "<", "{")):
        return False
    if compiled(r"[\w.-]+=", 0).match(v) or "[REDACTED:" in v:
        return False  # `username=bob` is a setting, not a bare credential
    if v.lower() in _PROSE:
        return False  # `… add_user bob with a password`
    if not command and not any(not c.isalpha() for c in v):
        return False  # a plain word after a program named in a sentence is prose
    if not any(c.isalnum() for c in v) or compiled(r"(?i)x{3,}|\*{3,}", 0).fullmatch(v):
        return False  # a placeholder: `...`, `***`, `xxxx`
    return is_value(v) or (len(v) >= 3 and any(not c.isalpha() for c in v))


def _rule(first: str, cmds: list[Cmd]) -> Rule:
    prog = re.escape(first).replace(r"\.exe", "")

    def expand(m: re.Match[str]) -> Iterable[tuple[int, int]]:
        seen: set[tuple[int, int]] = set()
        for cmd in cmds:
            for span in _found(cmd, m):
                if span not in seen:
                    seen.add(span)
                    yield span

    # the prefilter: the program's name, or with its subcommand when the name is short
    keywords = {first.lower() if len(first) >= 4 else " ".join(c.words[:2]).lower() for c in cmds}
    return Rule(
        "cli-password",
        r"(?i)(?<![\w.-])(?P<prog>" + prog + r"(?:\.exe|\.bat|\.cmd)?)(?![\w.-])" + _REST,
        tuple(sorted(keywords)),
        priority=CONTEXT,
        expand=expand,
    )


def _rules() -> list[Rule]:
    by_prog: dict[str, list[Cmd]] = {}
    for cmd in COMMANDS:
        by_prog.setdefault(cmd.words[0], []).append(cmd)
    return [_rule(first, cmds) for first, cmds in by_prog.items()]


RULES: list[Rule] = _rules()
