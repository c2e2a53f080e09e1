"""A short generated password under a name that only may name a credential (`DEPLOY_KEY`,
`db_key`, WordPress' `AUTH_KEY` and `LOGGED_IN_SALT`): letters, digits and a password's
symbols in runs that read as no name are a secret; a word, a name, a version, a path (a
Windows one too), a reference, an expression or code under the same names is not."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact
from gitimprove.redaction.engine import compiled
from tests.masked import assert_masked

# symbols a password may hold where it stands quoted, and where it stands bare (a shell or
# YAML line: no `$`, `&`, `;` or `|`, which the shell reads as syntax)
QUOTED = "!@#$%^&*+=?~"
BARE = "!@#%^*+=?~"
RNG = random.Random(1414)


@pytest.fixture(autouse=True)
def _same_fakes() -> None:
    """Each test draws the same fakes whatever ran before it (in this process or not)."""
    RNG.seed(1414)


def _password(n: int, symbols: str = QUOTED) -> str:
    """A generated password of `n` characters starting with a letter: letters of both cases,
    digits and symbols, no two neighbours of one class (as a password manager's look)."""
    classes = (string.ascii_lowercase, string.ascii_uppercase, string.digits, symbols)
    out = [RNG.choice(string.ascii_letters)]
    last = 0 if out[0].islower() else 1
    while len(out) < n:
        k = RNG.choice([c for c in range(4) if c != last])
        out.append(RNG.choice(classes[k]))
        last = k
    t = "".join(out)
    if all(any(c in cls for c in t) for cls in classes):
        return t
    return _password(n, symbols)


def _one_case(n: int) -> str:
    """Lower-case letters, digits and symbols in short runs (`x7k!p2q#m9`)."""
    out = []
    while len(out) < n:
        out += [RNG.choice("bcdfghjkmnpqrstvwxz"), RNG.choice("23456789")]
        out += [RNG.choice("bcdfghjkmnpqrstvwxz"), RNG.choice(BARE)]
    return "".join(out[:n]).rstrip(BARE) + "7"


KEYED = [
    "DEPLOY_KEY: {s}",
    "  deploy_key: '{s}'",
    'db_key = "{s}"',
    "$key = '{s}';",
    "define('AUTH_KEY', '{s}');",
    "define( 'SECURE_AUTH_KEY',  '{s}' );",
    "define('LOGGED_IN_SALT', '{s}');",
    'define("DB_PASSWORD", "{s}");',
    "export STRIPE_KEY='{s}'",
    'LICENSE_KEY="{s}"',
    '{{"auth": "{s}", "user": "svc"}}',
    "cookie_salt = '{s}'",
    'webhook_key: "{s}"',
    '<add key="AuthKey" value="{s}" />',
    "set DEPLOY_KEY={s}",
    "java -Ddb_key={s} -jar app.jar",
    "db_key\t{s}",
    "| auth | {s} |",
    "ENV DEPLOY_KEY={s}",
    "[deploy]\nkey = {s}",
    "  - DEPLOY_KEY={s}",
    "signing_salt: {s}",
]


@pytest.mark.parametrize("template", KEYED, ids=range(len(KEYED)))
def test_a_short_password_with_symbols_under_a_key_name_is_masked(template: str) -> None:
    bare = "'" not in template and '"' not in template
    for n in (8, 10, 14, 20, 32):
        secret = _password(n, BARE if bare else QUOTED)
        assert_masked(template.format(s=secret), secret)
    one_case = _one_case(12)
    assert_masked(template.format(s=one_case), one_case)


def test_the_examples_of_the_issue_are_masked() -> None:
    # (written backwards: the file itself holds no password under a key name)
    for template, backwards in (
        ("DEPLOY_KEY: {}", "lMH09s@5pw6nJp"),
        ("DEPLOY_KEY={}", "jk7HJ2rQ*60"),
        ('db_key = "{}"', "Lp#2Tr!7qX"),
        ("define('AUTH_KEY', '{}');", "tlaS#dr0W!y3k"),
        ("define('DB_PASSWORD', '{}');", "tlaS#dr0W!y3k"),
        ("DEPLOY_KEY: {}", "?=!+=oa%9Z"),  # short runs, a digit, symbols
        ("DEPLOY_KEY: {}", "3z?LVZ*gzqxX"),  # four consonants together
        ("auth: {}", "k+2weKgvYqY"),  # a hump with no vowel
        ("DEPLOY_KEY={}", "uJ2y=4HWT"),  # a pair whose name no one says
        ("-Dauth={} -jar app.jar", "G~V2RUjfG2B!"),  # `!` first: no YAML tag
        ('db_key = "{}"', "9m#q2p!k7x"),
    ):
        secret = backwards[::-1]
        assert_masked(template.format(secret), secret)


def _alnum(n: int) -> str:
    """Letters of both cases and digits at random, with four letters no word has together."""
    while True:
        t = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(n))
        kinds = all(any(f(c) for c in t) for f in (str.isupper, str.islower, str.isdigit))
        if kinds and compiled(r"[b-df-hj-np-tv-z]{4}", 0).search(t):
            return t


@pytest.mark.parametrize("template", ["DEPLOY_KEY={s}", "auth: {s}", "db_key = {s}"])
def test_a_generated_password_without_symbols_under_a_key_name_is_masked(template: str) -> None:
    for n in (9, 10, 12, 14):
        secret = _alnum(n)
        assert_masked(template.format(s=secret), secret)


def test_a_wordpress_salt_with_blanks_is_masked() -> None:
    alphabet = string.ascii_letters + string.digits + "!@#$%^&*()-_[]{}<>~+=,.;:/?| "
    for name in ("AUTH_KEY", "NONCE_SALT", "LOGGED_IN_KEY"):
        salt = "".join(RNG.choice(alphabet) for _ in range(64)).replace("'", "").strip()
        salt = "Qz7" + salt.replace("\\", "") + "k9#"
        assert_masked(f"define( '{name}', '{salt}' );", salt)


PASS = [
    "DEPLOY_KEY: deploy-prod",
    "key: value",
    "AUTH_KEY: ${AUTH_KEY}",
    "AUTH_KEY: ${{ secrets.AUTH_KEY }}",
    'key = os.environ["X"]',
    "key: /etc/ssl/private/server.key",
    "key: 12345678",
    "version_key: 1.2.3-beta",
    "key: v2.0.1+build.5",
    "key: Ctrl+Shift+F5",
    "hotkey: Alt+F4",
    "sort_key = arr[0]+arr[1]",
    "key = hashlib.sha256(b).hexdigest()",
    "cache_key = user1@example.com",
    "key: 2024-01-01T10:00:00Z",
    "key: ./build/out-1.2/x86_64",
    "define('AUTH_KEY', 'put your unique phrase here');",
    "primary_key: id",
    "key: k8s-node-01",
    "AUTH_KEY=${AUTH_KEY:?set it}",
    "key: '%(name)s-%(id)d'",
    "key: a1b2c3d4e5",
    "partition_key: user#123#2024",
    "cache_key: python@3.11",
    "key: node@18.2",
    "sort_key: 'id2,name3'",
    "signature: 'sha256=abc123'",
    "key: 'a=1&b=2'",
    "key: '#ff00aa'",
    "key: 'Win+Shift+S3'",
    "key: 'Q1 2024!'",
    "key: 'A*B+C=D1'",
    "formula_key = X1*Y2+Z3",
    "auth: 'Bearer ${TOKEN}'",
    "key: build+g1a2b3c",
    "cache_key: Linux-x86_64+cu118",
    "group_key: team@acme.io",
    "key: user@host:22",
    "shortcut_key: Cmd+Option+I",
    "key: 'Hello@World1'",
    "key: 'Id+Name+X1'",
    "cache_key: Go@1.21+Rc1",
    "toolchain_key: node@18.2.0+x64",
    "image_key: nginxV2Alpine3",
    "key = iPhone14ProMax",
    "key: k8sNodeV1",
    "cache_key: sha256WithRSA",
    "DEPLOY_KEY=mp4Video",
    "key: tcpDump2",
    "key: libSSL3Dev",
    "key: 'MySQL8+InnoDB'",
    "key: 'Dr+Smith+2nd'",
    "key: 'Go@1.21+Rc1'",
    "cache_key: 'ISO8601+UTC'",
    "key: 'EC2+RDS+VPC'",
    "java -Dfile.encoding=UTF-8 -Dlog.level=debug -jar a.jar",
    "db_password: !Ref DbPasswordParameter",
    "password: !vault |",
    "DEPLOY_KEY=Python311",
    "cat <<EOF > .env\nDB_HOST=localhost\nDB_PORT=5432\nDEPLOY_KEY=deploy-prod\nEOF",
    # paths: where a key is kept, not the key (Windows ones too, also JSON-escaped)
    "key: C:\\Users\\me\\.ssh\\key2.pem",
    "private_key: C:\\Users\\me\\.ssh\\key2.pem",
    "ssh_key=D:/keys/deploy-2.pem",
    '{"private_key": "C:\\\\Users\\\\me\\\\.ssh\\\\key2.pem"}',
    "api_key: C:\\Users\\Me\\AppData\\Local\\Temp\\k3yF1le.json",
    "ssh_key: \\\\fs01\\keys\\id_rsa2",
    "private_key: ./certs/key2.pem",
    "private_key: certs/prod/deploy-2.key",
    "secret_file = C:\\ProgramData\\app\\secret2.txt",
]


@pytest.mark.parametrize("text", PASS, ids=range(len(PASS)))
def test_words_names_versions_paths_and_code_under_a_key_name_pass(text: str) -> None:
    assert redact(text) == text


def _uniform(n: int) -> str:
    """A password generator's output: `n` characters drawn alike from letters, digits and
    symbols, with each class at least once (a letter or digit first)."""
    alphabet = string.ascii_letters + string.digits + BARE
    classes = (string.ascii_lowercase, string.ascii_uppercase, string.digits, BARE)
    while True:
        t = "".join(RNG.choice(alphabet) for _ in range(n))
        if t[0] not in BARE and all(any(c in cls for c in t) for cls in classes):
            return t


@pytest.mark.parametrize(("n", "most"), [(8, 0.02), (10, 0.015), (12, 0.01)])
def test_few_uniform_passwords_under_a_weak_name_are_missed(n: int, most: float) -> None:
    """Drawn uniformly, a short password's letters often fall in runs of one case or into a
    word; its case switches at random all the same, and its pairs are no word's."""
    drawn = [_uniform(n) for _ in range(500)]
    missed = [s for s in drawn if "[REDACTED:" not in redact(f"DEPLOY_KEY: {s}")]
    assert len(missed) <= most * len(drawn), (len(missed), missed[:20])


NAMES = [
    # names, words and versions joined as an ordinary value is (they switch case and class
    # as a password does, and read as words)
    "SalesResults-1.2",
    "strength2Check",
    "gRPCv2Api",
    "build10MutableMapping",
    "signature1Resize",
    "getDETACH256",
    "Release-2.4.1+Build7",
    "OrderService@v3",
    "UserProfile#2",
    "DataLoader+v2",
    "Team@Acme2024",
    "Node18+Alpine3",
    "ProjectAlpha-2.0",
    "Welcome@Home1",
    "SalesReport#Q3",
    "Python3.11+Django",
    "Build#1042+Linux",
    "x+Y=z2",
    "a*X+b=Y1",
    "2x+3y=Z7",
    "Math.PI*r^2",
    "eBay#2024+iPhone15",
    "parseJSON5File",
    "Log4jConfig",
    # short, every class, names joined by a symbol: words, acronyms, numbers, units, models
    "Game@1080p",
    "Web#64bit",
    "Home+4K+TV",
    "Pg@Aurora3",
    "Mac@M2Pro",
    "Id+Db+Q3",
    "eBay@Ltd2",
    "Dr+Smith+3rd",
]


@pytest.mark.parametrize("value", NAMES)
@pytest.mark.parametrize("template", ["DEPLOY_KEY: {v}", "bucket_key = '{v}'", "auth: {v}"])
def test_names_that_switch_case_and_class_under_a_weak_name_pass(template: str, value: str) -> None:
    text = template.format(v=value)
    assert redact(text) == text


WRAPPED = [
    'db_key = "{s}"',
    "define('AUTH_KEY', '{s}');",
    '  webhook_key: "{s}"',
    '{{"auth": "{s}", "user": "svc"}}',
    "$key = '{s}';",
]


@pytest.mark.parametrize("template", WRAPPED, ids=range(len(WRAPPED)))
def test_a_quoted_password_its_line_leaves_open_is_joined_at_any_cut(template: str) -> None:
    """A quoted value broken onto the next line (an editor's or a pane's wrap, any width):
    the open quote says the value goes on; its pieces alone are too short to judge."""
    for n in (10, 14):
        secret = _password(n)
        for cut in range(2, n - 1):
            for sep in ("\n", "\n    ", "\r\n"):
                text = template.format(s=secret[:cut] + sep + secret[cut:])
                out = redact(text)
                assert "[REDACTED:" in out, (text, out)
                left = out.replace(sep, "")
                for piece in (secret[:cut], secret[cut:]):
                    assert len(piece) < 4 or piece not in left, (text, out)


@pytest.mark.parametrize("template", ["DEPLOY_KEY={s}", "db_key: {s}", "-Dauth={s} -jar a.jar"])
def test_a_bare_password_broken_at_a_terminals_width_is_joined(template: str) -> None:
    for n in (9, 12, 16):
        secret = _password(n, BARE)
        for cut in (4, n // 2, n - 3):  # (a run of four or more fills the line)
            line = template.format(s=secret[:cut])
            head = line[: line.index(secret[:cut]) + cut]
            pad = " " * (80 - len(head))
            text = pad + template.format(s=secret[:cut] + "\n" + secret[cut:]) + "\n"
            out = redact(text)
            assert secret[:cut] + "\n" not in out and "\n" + secret[cut:] not in out, out


def test_a_short_tail_with_a_passwords_symbols_is_the_rest_of_the_value() -> None:
    """`DEPLOY_KEY=<10 characters>` then `<6 characters>` alone on the next line: letters,
    digits and a password's symbol there read as no line of its own."""
    done = 0
    while done < 20:
        secret = _password(16, BARE)
        tail = secret[10:]
        kinds = sum(any(f(c) for c in tail) for f in (str.isdigit, str.isupper, str.islower))
        if not any(c in BARE for c in tail) or kinds < 2 or "=" in tail.strip("="):
            continue  # (`x=y` on a line of its own is an assignment)
        done += 1
        text = f"DEPLOY_KEY={secret[:10]}\n{tail}\nnext: 1\n"
        out = redact(text)
        assert tail not in out and secret[:10] not in out and out.endswith("next: 1\n"), out


MODELS = [
    "iOS17+iPadOS",
    "Mac@M2Pro",
    "R2D2+C3PO",
    "Pixel8+Pro",
    "iPhone15+ProMax",
    "PS5+VR2",
    "M1Max/M2Ultra",
    "GPT4o+Claude3",
    "RTX4090@OC",
    # brands whose letters pair as words seldom do
    "Galaxy@S24Ultra",
    "Xbox@Series2",
    "Kindle#Oasis3",
    "Switch@OLED2",
    "Lumix@GH6",
]


@pytest.mark.parametrize("value", MODELS)
@pytest.mark.parametrize("template", ["DEPLOY_KEY: {v}", "key = {v}", "auth: {v}", "{v}"])
def test_product_and_model_names_joined_by_a_symbol_pass_under_a_weak_name(
    template: str, value: str
) -> None:
    text = template.format(v=value)
    assert redact(text) == text


def test_a_hand_wrapped_passwords_last_two_or_three_characters_are_its_rest() -> None:
    """`DB_PASSWORD=<head>` then the value's last two or three characters alone on the next
    line, mixing kinds (`Q7`, `k#`, `9Zk`, `v4` after a value of every kind): masked with the
    head as one secret. A tail of one kind or a number (`ok`, `42`) reads as a line of its
    own."""
    rnd = random.Random(5)
    done = 0
    while done < 30:
        secret = _password(rnd.randint(12, 16), BARE)
        cut = len(secret) - rnd.choice([2, 3])
        head, tail = secret[:cut], secret[cut:]
        kinds = sum(any(f(c) for c in tail) for f in (str.isdigit, str.isupper, str.islower))
        kinds += any(not c.isalnum() for c in tail)
        if kinds < 2 or not tail[0].isalnum() or "=" in tail:
            continue
        done += 1
        key = rnd.choice(["DB_PASSWORD=", "password: ", "DEPLOY_KEY=", "api_secret = "])
        out = redact(f"{key}{head}\n{tail}\nnext: 1\n")
        assert out.count("\n") == 2 and out.endswith("\nnext: 1\n") and tail not in out, out
    for tail in ("ok", "42", "fi", "};"):
        text = f"password = u8jzP!de0Igx\n{tail}\n"
        assert redact(text).endswith(f"]\n{tail}\n")
    for text in ("token = next_token\nA1\n", "key: value\nB2\n"):
        assert redact(text) == text


@pytest.mark.parametrize("tail", ["Oh", "Go", "No", "Up", "Is", "v4", "V7", "On"])
@pytest.mark.parametrize("template", ["DEPLOY_KEY={s}", "db_password: {s}", "auth={s}"])
def test_a_two_letter_tail_that_reads_as_a_word_after_a_generated_password(
    template: str, tail: str
) -> None:
    """A password wrapped by hand two characters before its end: the rest reads as a word
    or a version, but after a value mixing cases, digits and symbols it is the value's."""
    for _ in range(5):
        head = _password(10, BARE)
        while _kinds(head) < 4:
            head = _password(10, BARE)
        out = redact(template.format(s=head) + "\n" + tail + "\nnext: 1\n")
        assert head not in out and f"\n{tail}\n" not in out and out.endswith("\nnext: 1\n"), out


def test_a_word_of_one_case_after_a_password_is_a_line_of_its_own() -> None:
    for tail in ("ok", "OK", "42", "v2.1", "done"):
        out = redact("DEPLOY_KEY=" + _password(10, BARE) + "\n" + tail + "\n")
        assert out.endswith(f"\n{tail}\n"), out


def _kinds(value: str) -> int:
    kinds = (str.isdigit, str.isupper, str.islower)
    return sum(any(f(c) for c in value) for f in kinds) + any(not c.isalnum() for c in value)
