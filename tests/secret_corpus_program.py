"""More fakes for the corpus: credentials in program text (a command run as a list of
arguments in any language), wallet keys, a REPL's or a debugger's echo of a credential,
what a generator printed, and more languages' assignment syntax. Generated, never real."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

from tests.secret_corpus import ALNUM, HEX, Gen
from tests.secret_corpus_review import seed_words

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(raw: bytes) -> str:
    n = int.from_bytes(raw, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def b58check(payload: bytes) -> str:
    check = hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    return b58encode(payload + check)


def wif(g: Gen, compressed: bool) -> str:
    """A Wallet Import Format key of a random (never used) private key."""
    key = bytes(g.rng.randrange(256) for _ in range(32))
    return b58check(b"\x80" + key + (b"\x01" if compressed else b""))


def xprv(g: Gen) -> str:
    """A BIP-32 extended private key: version, depth, fingerprint, index, chain code, key."""
    body = bytes(g.rng.randrange(256) for _ in range(32 + 32))
    payload = bytes.fromhex("0488ade4") + b"\x00" * 9 + body[:32] + b"\x00" + body[32:]
    return b58check(payload)


def _quoted_list(words: str) -> str:
    return "[" + ", ".join(f'"{w}"' for w in words.split()) + "]"


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    head = t(ALNUM, 16)
    return [
        # a command run as a list of arguments, in any language
        (
            "java-exec-array",
            lambda s: (
                f'Runtime.getRuntime().exec(new String[]{{"sshpass", "-p", "{s}", "ssh", "db"}});'
            ),
            pw(),
        ),
        ("perl-system-list", lambda s: f'system("sshpass", "-p", "{s}", "scp", "a", "b:");', pw()),
        (
            "go-exec-command",
            lambda s: f'cmd := exec.Command("mysql", "-uroot", "-p{s}", "shop")',
            pw(),
        ),
        (
            "process-builder",
            lambda s: f'new ProcessBuilder("redis-cli", "-a", "{s}", "ping").start();',
            pw(),
        ),
        # wallet keys
        ("wallet-wif", lambda s: f"imported {s} into the hot wallet", wif(g, False)),
        ("wallet-wif-compressed", lambda s: f"key={s}", wif(g, True)),
        ("wallet-xprv", lambda s: f"backup: {s}", xprv(g)),
        ("wallet-hex-key", lambda s: f"cast send --private-key 0x{s} 0xdead", t(HEX, 64)),
        ("wallet-hex-prose", lambda s: f"The wallet's private key is {s}.", t(HEX, 64)),
        (
            "wallet-keypair-bytes",
            lambda s: f"~/.config/solana/id.json: [{s}]",
            ",".join(str(g.rng.randrange(256)) for _ in range(64)),
        ),
        ("seed-json-list", lambda s: f'"mnemonic": {s}', _quoted_list(seed_words(g, 12))),
        ("seed-hyphens", lambda s: f"seed: {s}", seed_words(g, 24).replace(" ", "-")),
        # a REPL's or a debugger's echo
        ("repl-environ", lambda s: f">>> os.environ['API_TOKEN']\n'{s}'\n", t(ALNUM, 32)),
        ("pdb-print", lambda s: f"(Pdb) p self.password\n'{s}'\n(Pdb) c", pw()),
        ("ipython-out", lambda s: f"In [7]: client_secret\nOut[7]: '{s}'", t(ALNUM, 30)),
        ("gdb-print", lambda s: f'(gdb) p password\n$1 = 0x55d0c2a0 "{s}"', pw()),
        ("irb-echo", lambda s: f'irb(main):003> ENV["SECRET_KEY_BASE"]\n=> "{s}"', t(HEX, 64)),
        ("r-echo", lambda s: f'> Sys.getenv("API_KEY")\n[1] "{s}"', t(ALNUM, 32)),
        # what a generator printed
        (
            "python-secrets-output",
            lambda s: f"$ python3 -c 'import secrets; print(secrets.token_hex(32))'\n{s}\n",
            t(HEX, 64),
        ),
        ("urandom-output", lambda s: f"$ head -c 24 /dev/urandom | base64\n{s}\n", t(ALNUM, 32)),
        ("rails-secret-output", lambda s: f"$ bin/rails secret\n{s}\n", t(HEX, 128)),
        ("claude-tool-output", lambda s: f"● Bash(openssl rand -hex 32)\n  ⎿  {s}\n", t(HEX, 64)),
        ("output-same-line", lambda s: f"openssl rand -base64 32 → {s}", t(ALNUM, 43) + "="),
        # containers and tables that name what they hold
        ("toml-section", lambda s: f'[credentials.prod]\nvalue = "{s}"\n', t(ALNUM, 32)),
        ("toml-nested-section", lambda s: f'[servers.alpha.auth]\nkey = "{s}"\n', pw()),
        ("toml-inline", lambda s: f'credentials = {{ ci = "{s}" }}', t(ALNUM, 30)),
        ("yaml-deep", lambda s: f"prod:\n  db:\n    credentials:\n      main: {s}\n", pw()),
        (
            "k8s-stringdata",
            lambda s: f"kind: Secret\nstringData:\n  user: app\n  connection: {s}\n",
            pw(),
        ),
        (
            "k8s-data",
            lambda s: f"apiVersion: v1\nkind: Secret\ndata:\n  conn: {s}\n",
            base64.b64encode(pw().encode()).decode(),
        ),
        # here-documents
        ("heredoc-secret-file", lambda s: f"cat <<EOF > /run/secrets/db_password\n{s}\nEOF", pw()),
        ("heredoc-env", lambda s: f"cat > .env <<'EOF'\nAPP=shop\nMAILER={s}\nEOF", t(ALNUM, 32)),
        # more languages' assignments
        ("r-assign", lambda s: f'api_key <- "{s}"', t(ALNUM, 32)),
        ("erlang-tuple", lambda s: f'{{password, "{s}"}}', pw()),
        # a value wrapped across short lines
        # (the secret is the part after the break, which must not stay either)
        ("wrapped-adjacent", lambda s: f'API_KEY = ("{head}"\n    "{s}")', t(ALNUM, 16)),
        ("wrapped-in-quotes", lambda s: f'password: "{head}\n  {s}"', t(ALNUM, 16)),
        ("triple-quoted", lambda s: f'SECRET_KEY = """\n{s}\n"""', t(ALNUM, 40)),
    ]
