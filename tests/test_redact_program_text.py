"""Credentials in program text and in what programs print: a command given as a list of
arguments in any language, wallet keys, a REPL's or a debugger's echo, a generator's output,
more languages' assignments; and the ordinary code and prose around them, left unchanged."""

from __future__ import annotations

import base64
import json
import re

import pytest

from gitimprove.redaction import redact, redact_blob, spans
from gitimprove.redaction.wallets import b58check
from tests.secret_corpus import ALNUM, HEX, Gen
from tests.secret_corpus_program import wif, xprv
from tests.secret_corpus_review import seed_words

_G = Gen(1414)
PW = _G.password()
TOK = _G.s(ALNUM, 32)
HEX64 = _G.s(HEX, 64)
WIF = wif(_G, False)
WIFC = wif(_G, True)
XPRV = xprv(_G)
B64PW = base64.b64encode(PW.encode()).decode()
NSEC = "nsec1" + "".join(_G.rng.choice("qpzry9x8gf2tvdw0s3jn54khce6mua7l") for _ in range(58))
KEYPAIR = ",".join(str(_G.rng.randrange(256)) for _ in range(64))
SEED = seed_words(_G, 12).split()

LEAKS: list[tuple[str, str]] = [
    # a command as a list of arguments: brackets, a call's parentheses, an array's braces
    (f'Runtime.getRuntime().exec(new String[]{{"sshpass", "-p", "{PW}", "ssh", "h"}});', PW),
    (f'system("sshpass", "-p", "{PW}", "scp", "a", "b:");', PW),
    (f'exec.Command("mysql", "-uroot", "-p{PW}", "shop")', PW),
    (f'Command::new("mysql").args(["-u", "root", "-p{PW}"])', PW),
    (f'new ProcessBuilder("redis-cli", "-a", "{PW}", "ping")', PW),
    (f'spawn("deploy", "--api-key", "{TOK}")', TOK),
    (f'execFile("twine", ["upload", "--password", "{PW}"])', PW),
    # wallet keys
    (f"imported {WIF} into the wallet", WIF),
    (f"{WIFC}", WIFC),
    (f"WIF: 5H{TOK[:30]}{TOK[:19]}", f"5H{TOK[:30]}{TOK[:19]}"),
    (f"backup: {XPRV}", XPRV),
    (f"cast send --private-key 0x{HEX64} 0xdead", HEX64),
    (f'"privateKey": "0x{HEX64}"', HEX64),
    (f"the wallet private key is {HEX64}.", HEX64),
    (f"ETH_SIGNING_KEY={HEX64}", HEX64),
    (f"NOSTR_NSEC={NSEC}", NSEC),
    (f"solana keypair: [{KEYPAIR}]", KEYPAIR),
    # a seed phrase in a list, joined by hyphens or pipes, or a YAML list's items
    ('"mnemonic": [' + ", ".join(f'"{w}"' for w in SEED) + "]", SEED[5]),
    (f"words = {SEED!r}", SEED[5]),
    ("seed: " + "-".join(SEED), "-".join(SEED[3:7])),
    ("mnemonic:\n" + "".join(f"  - {w}\n" for w in SEED), "\n  - ".join(SEED[3:7])),
    (" | ".join(SEED), " | ".join(SEED[3:7])),
    # a REPL's or a debugger's echo of an expression naming a credential
    (f">>> os.environ['API_TOKEN']\n'{TOK}'\n>>> exit()", TOK),
    (f">>> secret\n'{PW}'", PW),
    (f"(Pdb) p self.password\n'{PW}'\n(Pdb) c", PW),
    (f"In [3]: api_key\nOut[3]: '{TOK}'", TOK),
    (f'(gdb) p password\n$1 = 0x5555555592a0 "{PW}"', PW),
    (f"> process.env.DB_PASSWORD\n'{PW}'", PW),
    (f'irb(main):001> ENV["SECRET_KEY_BASE"]\n=> "{TOK}"', TOK),
    (f'> Sys.getenv("API_KEY")\n[1] "{TOK}"', TOK),
    (f'jshell> token\ntoken ==> "{TOK}"', TOK),
    (f'scala> sys.env("DB_PASSWORD")\nval res0: String = {PW}', PW),
    (f'127.0.0.1:6379> GET api_token\n"{TOK}"', TOK),
    (f"(lldb) po apiToken\n{TOK}", TOK),
    # what a generator printed
    (f"$ python -c 'import secrets; print(secrets.token_urlsafe(32))'\n{TOK}\n", TOK),
    (f"$ head -c 32 /dev/urandom | base64\n{TOK}+/Q=\n", TOK),
    (f"$ bin/rails secret\n{HEX64}{HEX64}\n", HEX64),
    (f"$ wg genkey\n{TOK}Ab9+/Qx=\n", TOK),
    (f"$ openssl rand -hex 32\n{HEX64}\n", HEX64),
    # … shown by Claude Code after `⎿`, or written on the command's own line
    (f"● Bash(openssl rand -hex 32)\n  ⎿  {HEX64}", HEX64),
    (f"Bash(aws configure get aws_secret_access_key)\n  ⎿  {TOK}AbCd/9+x", TOK),
    (f"openssl rand -hex 32 → {HEX64}", HEX64),
    (f"$ openssl rand -hex 32  # {HEX64}", HEX64),
    (f"output of `openssl rand -base64 32`: {TOK}=", TOK),
    # containers and tables that name what they hold
    (f'[credentials.prod]\nvalue = "{TOK}"\n', TOK),
    (f'[servers.alpha.auth]\nuser = "bob"\nkey = "{PW}"\n', PW),
    (f'[[secrets]]\nname = "gh"\nvalue = "{TOK}"\n', TOK),
    (f'credentials = {{ prod = "{TOK}", ci = "{TOK}" }}', TOK),
    (f"production:\n  database:\n    credentials:\n      main: {PW}  # rotated\n", PW),
    (f"tokens:\n  github: {TOK}\n", TOK),
    (f"x:\n  secrets:\n    a: b\n  tokens:\n    gh: {TOK}\n", TOK),
    (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n"
        f"stringData:\n  username: app\n  connection: {PW}\n",
        PW,
    ),
    (f"kind: Secret\ntype: Opaque\ndata:\n  user: YXBw\n  conn: {B64PW}\n", B64PW),
    # here-documents into a secret's file or an env file
    (f"cat <<EOF > /run/secrets/db_password\n{PW}\nEOF", PW),
    (f"tee ~/.vault_pass <<'EOF'\n{PW}\nEOF\n", PW),
    (f"cat > .env <<'EOF'\nAPP_NAME=shop\nMAILER={TOK}\nEOF", TOK),
    # more languages' assignments
    (f'password <- "{PW}"', PW),
    (f'api_key <<- "{TOK}"', TOK),
    (f'{{password, "{PW}"}}', PW),
    (f'{{:api_key, <<"{TOK}">>}}', TOK),
    # a value wrapped across short lines
    (f'API_KEY = ("{TOK[:16]}"\n           "{TOK[16:]}")', TOK[16:]),
    (f'token = "{TOK[:16]}" \\\n    "{TOK[16:]}"', TOK[16:]),
    (f'password: "{TOK[:16]}\n  {TOK[16:]}"', TOK[16:]),
    (f'"api_key": "{TOK[:10]}\n{TOK[10:20]}\n{TOK[20:]}"', TOK[10:20]),
    (f'SECRET_KEY = """\n{TOK}\n"""', TOK),
    (f"password = '''{PW}'''", PW),
]

ORDINARY = [
    "use std::collections::HashMap;\nlet m: HashMap<String, Token::Kind> = HashMap::new();",
    "match token { Token::Ident(s) => s, Token::Keyword(k) => k, _ => panic!() }",
    "token: :bearer\nsecret: :none",
    "$password = $request->input('password');",
    'subprocess.run(["mysql", "-u", user, "-p" + password, "app"])',
    'exec.Command("git", "log", "--oneline", "-20")',
    'system("make", "-j4", "install");',
    'foo("--token", token, "--verbose")',
    # digests and addresses are not wallet keys
    f"sha256: {'4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e' * 2}  dist/app.tar.gz",
    f"public key: {'4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e' * 2}",
    f"commit {'4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e6f5a4b3c'}\nAuthor: Ann <ann@acme.io>",
    f"tx id: {'4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e' * 2}",
    "Block 0000000000000000000a3c9f4b2e1d8c7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c at height 812345",
    "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
    "send to 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa or bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/readme.md",
    ">>> len(secret)\n32",
    ">>> token.type\n'NAME'",
    ">>> type(password)\n<class 'str'>",
    ">>> api_key\nNone",
    "> the password is\nnot set yet",
    "(Pdb) p token_count\n1234",
    "$ openssl rand -hex 32 > key.txt\n$ ls\nkey.txt\n",
    "$ uuidgen\n3f2a9c0d-1e4b-4a6c-9d8e-7f6a5b4c3d2e\n",
    '[tool.poetry]\nname = "gitimprove"\nversion = "1.2.3"\n',
    '[secrets]\nbackend = "vault"\npath = "kv/app"\n',
    "kind: ConfigMap\ndata:\n  mode: production\n  level: debug\n",
    "kind: Secret\ndata:\n  tls.crt: {{ .Values.cert | b64enc }}\n",
    "kind: Secret\nstringData:\n  username: app\n  host: db.internal\n",
    f"cat <<EOF > .env\nAPP=shop\nSHA={'4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e6f5a4b3c'}\nEOF",
    "cat <<EOF > notes.txt\nAb3dEf6hIj9kLm2nOp5qRsT7\nEOF",
    "token <- getToken\nx <- c(1, 2)",
    "{token, Token}",
    'msg = "hello\nworld"',
    'doc = """\nDocstring here.\n"""',
    'password = ("a" if x else "b")',
    'help_text = ("Enter the password"\n             " for the account")',
    "data = [" + ",".join(str(n * 37 % 256) for n in range(64)) + "]",
    "The committee will abandon the plan and the ability to act, able about above.",
    "a well-known, low-cost, state-of-the-art design | see the wiki",
    "openssl rand -hex 32 # generates a random key for the session",
    "● Bash(git log --oneline)\n  ⎿  4f1c9a2 fix: token refresh",
    "echo $API_TOKEN # prints the token from your environment",
    "Kubernetes",
    "LGTM, merging",
    "KeyboardInterruptHandlerForTheMainLoopOfTheAppServer1",
]


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_each_leak_is_masked(text: str, secret: str) -> None:
    assert secret not in redact(text), text
    crlf = text.replace("\n", "\r\n")
    assert secret not in redact(crlf)
    stored = redact_blob(json.dumps({"error": text}).encode()).decode()
    assert secret not in json.loads(stored)["error"]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    found = [(s.kind, text[s.start : s.end]) for s in spans(text)]
    assert found == [], found


def test_a_wif_key_needs_its_checksum_or_a_word_naming_it() -> None:
    """A run of base58 of a WIF key's length is a key when its checksum holds; without one
    (an identifier that happens to have the shape) only beside a word naming a wallet key."""
    assert b58check(WIF) and b58check(WIFC)
    broken = WIF[:-1] + ("2" if WIF[-1] != "2" else "3")
    assert not b58check(broken)
    assert redact(f"id {broken} seen") == f"id {broken} seen"
    assert broken not in redact(f"private key: {broken}")


@pytest.mark.parametrize(
    "before",
    [
        "gh auth login --with-token <<< github_pat_" + "Ab1" * 27,  # a here-string, not a document
        "std::cout << value << std::endl;",  # a `<<` that starts no here-document
        "x = a << b",
        "python3 <<EOF\nprint(1)\nEOF",
    ],
)
def test_a_here_document_after_another_use_of_shift_is_still_masked(before: str) -> None:
    secret = "zPrpTYqIAspfUa7HUo1WifhUv23JqP33"
    text = f"{before}\ncat > .env <<'EOF'\nAPP=shop\nMAILER={secret}\nEOF"
    assert secret not in redact(text)


def test_a_colon_inside_a_commands_arguments_is_not_its_output() -> None:
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"
    text = f"aws secretsmanager get-secret-value --secret-id {arn}"
    assert redact(text) == text


def test_a_list_of_short_quoted_words_takes_linear_time() -> None:
    """A YAML-like list of short quoted names (Python's `__slots__`) is no seed phrase and
    no catastrophe: the seed-phrase pattern takes each word with its separator whole."""
    import time

    from gitimprove.redaction import formats

    names = ["version", "isutcnt", "isstdcnt", "leapcnt", "timecnt", "typecnt", "charcnt"]
    text = "    __slots__ = [\n" + "".join(f'        "{n}",\n' for n in names) + "    ]\n"
    start = time.perf_counter()
    re.compile(formats._RUN).search(text + "x_1")
    assert time.perf_counter() - start < 0.5  # exponential before: 1.8 s on these 7 names
    assert redact(text) == text
