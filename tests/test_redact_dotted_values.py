"""A generated password holding a dot (`<letters and digits>.<letters and digits>`) under a
password's name is a password, not an attribute path read from code (`settings.DB_PASSWORD`,
`self.k8sClient`), which stays as it is."""

from __future__ import annotations

import random
import string

import pytest

from gitimprove.redaction import redact

_ALNUM = string.ascii_letters + string.digits
# where such a password is written: an env file, a shell, YAML, .pypirc, JSON, a flag
_PLACES = [
    "DATABASE_PASSWORD={p}",
    "export PGPASSWORD={p}",
    "  db_password: {p}",
    "[private]\nusername = ci\npassword = {p}\n",
    '{{"password": "{p}"}}',
    "psql --password={p} -h db",
]
_REFERENCES = [
    "settings.DB_PASSWORD",
    "self.k8sClient.token",
    "cfg.p4ssw0rd",
    "x509.load_pem",
    "s3.accessKey2",
    "Secrets.MySQL8Password",
    "process.env.S3_SECRET",
    "ctx.obj.gRPCv2Api",
    "this.props.apiKey",
    "user.iPhone14ProMax",
]


def _dotted(rng: random.Random) -> str:
    """Two runs of letters of both cases and digits joined by a dot, 8 to 20 in all."""

    def run(n: int) -> str:
        while True:
            s = "".join(rng.choice(_ALNUM) for _ in range(n))
            if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
                return s

    n = rng.randint(8, 20)
    k = rng.randint(3, n - 3)
    return run(k) + "." + run(n - k)


@pytest.mark.parametrize("place", _PLACES, ids=range(len(_PLACES)))
def test_a_password_holding_a_dot_is_masked(place: str) -> None:
    rng = random.Random(place)
    drawn = [_dotted(rng) for _ in range(200)]
    missed = [p for p in drawn if p in redact(place.format(p=p))]
    # a password whose first part reads as a name (`Ab.x9Kd2Lq`) may pass, no more
    assert len(missed) <= 40, missed[:10]


@pytest.mark.parametrize("reference", _REFERENCES)
def test_an_attribute_path_under_a_password_name_stays(reference: str) -> None:
    for place in _PLACES:
        text = place.format(p=reference)
        assert redact(text) == text


_WORDS = [
    "crane",
    "velvet",
    "orbit",
    "maple",
    "tundra",
    "quartz",
    "ember",
    "falcon",
    "harbor",
    "pixel",
    "lunar",
    "cobalt",
]


def _memorable(rng: random.Random) -> str:
    """A password manager's memorable password: words joined by dots, one capitalised, digits."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 4))]
    n = rng.randrange(len(words))
    words[n] = words[n].capitalize()
    return ".".join(words) + str(rng.randint(1, 9999))


# (an INI file's `password = …` reads as code's assignment, and a flag's value as an
# argument: a dotted value there may be a name, so they are left out)
_LITERAL_PLACES = [p for p in _PLACES if "psql" not in p and "[private]" not in p]


@pytest.mark.parametrize("place", _LITERAL_PLACES, ids=range(len(_LITERAL_PLACES)))
def test_a_memorable_password_of_dotted_words_is_masked(place: str) -> None:
    rng = random.Random(place)
    drawn = [_memorable(rng) for _ in range(100)]
    missed = [p for p in drawn if p in redact(place.format(p=p))]
    assert not missed, missed[:5]
    # (under any name of a credential: a secret's, a credentials' entry)
    other = place.replace("PASSWORD", "SECRET").replace("password", "credentials")
    missed = [p for p in drawn if p in redact(other.format(p=p))]
    assert not missed, missed[:5]


def test_letters_drawn_around_dots_are_masked_where_no_code_is() -> None:
    rng = random.Random(3)
    runs = ["".join(rng.choice(_ALNUM) for _ in range(3)) for _ in range(600)]
    drawn = [".".join(runs[n : n + 3]) for n in range(0, 600, 3)]
    missed = [p for p in drawn if p in redact(f'DB_PASSWORD="{p}"')]
    # (measured: 27 of 200 left, starting with a lower-case name or reading as names
    # together: `ux9.i53.yyD`, `aYA.Lub.yNL`; before: 49)
    assert len(missed) <= 35, missed[:10]


@pytest.mark.parametrize(
    "text",
    [
        "password = settings.db.password2",
        'password_key = "spring.datasource.password"',
        "DB_PASSWORD = config.vault.secret_v2",
        "token = Cobalt.velvet.cobalt30",
        # a format field whose expression calls or indexes: code, quoted or not
        """token = f'"{arg.rpartition(".")[2]}"'""",
        "password = \"{cfg.get('db')[0]}\"",
        "secret = '{parts[1].strip()}'",
    ],
)
def test_dotted_names_of_code_and_settings_stay(text: str) -> None:
    assert redact(text) == text


def _dotted_words(rng: random.Random) -> str:
    """Two to four short names joined by dots, no digit (`my.pass.word`, `a.b.c`)."""
    letters = string.ascii_lowercase
    return ".".join(
        "".join(rng.choice(letters) for _ in range(rng.randint(1, 6)))
        for _ in range(rng.randint(2, 4))
    )


# where a value is a literal, never code: an INI file's section, a flag given with `=`
_LITERAL_ONLY = [
    "[client]\nuser = ci\npassword = {p}\n",
    "[mysqld]\n# the replica's\npassword: {p}\nport = 3306\n",
    "[distutils]\nindex-servers = corp\n\n[corp]\nusername = ci\npassword = {p}\n",
    "psql --password={p} -h db app",
    "mysqldump --user=root --password={p} shop > shop.sql",
    "./deploy.sh --db-password={p} --env prod",
]


@pytest.mark.parametrize("place", _LITERAL_ONLY, ids=range(len(_LITERAL_ONLY)))
def test_dotted_names_are_a_password_in_an_ini_file_and_a_flag(place: str) -> None:
    rng = random.Random(place)
    drawn = [_dotted_words(rng) for _ in range(100)]
    drawn = [p for p in drawn if p.split(".")[-1] not in ("txt", "key", "env", "ini")]
    missed = [p for p in drawn if p in redact(place.format(p=p))]
    # (a value naming an object first, `env.x`, `app.b`, passes: an attribute path)
    assert len(missed) <= 8, missed


@pytest.mark.parametrize(
    "text",
    [
        "password = my.secret.word",  # (no section: Python's assignment of an attribute)
        "self.password = my.pass.word",
        "password = my.pass.word;",  # (a statement of a language that allows `pass` there)
        "    pass_name: builtins.str",  # (Python's annotation)
        "[db]\npassword = config.db.password\n",
        "[db]\nkey = self.key\n",
        "[app]\npassword_file = secrets/db.pass.txt\n",
        "psql --password=args.password",
        "--password=settings.db.password",
        "f'--password={args.password}'",
        "cmd = ['psql', '--password=' + cfg.db.pw]",
        "--password-file=db.pass.txt",
        "[tool.poetry]\nversion = 1.2.3\n",
        "def f():\n    password = my.secret.word\n",
    ],
)
def test_dotted_code_and_files_stay_in_ini_files_and_flags(text: str) -> None:
    assert redact(text) == text


# a configuration file's line with no section above it: told from code by the file named
# above it, an env file's `KEY=value`, or a value no Python code can write (`pass`)
_CONFIG_LINES = [
    "DB_PASSWORD={p}",
    "export PGPASSWORD={p}",
    "$ cat app.properties\ndb.url = jdbc:postgresql://db/app\ndb.password = {p}",
    "==> .env <==\npassword = {p}",
    "in settings.cfg:\npassword = {p}",
    "cat config/db.conf\n# the replica\npassword = {p}",
]


@pytest.mark.parametrize("place", _CONFIG_LINES, ids=range(len(_CONFIG_LINES)))
def test_dotted_names_are_a_password_on_a_configuration_files_line(place: str) -> None:
    rng = random.Random(place)
    drawn = [_dotted_words(rng) for _ in range(100)]
    drawn = [p for p in drawn if p.split(".")[-1] not in ("txt", "key", "env", "ini")]
    missed = [p for p in drawn if p in redact(place.format(p=p))]
    # (a value naming an object first, `env.x`, `app.b`, passes: an attribute path)
    assert len(missed) <= 8, missed


def test_a_dotted_value_no_python_writes_is_a_password() -> None:
    for text in ("password = my.pass.word", "  db_password = in.for.me", "passwd = an.if.else"):
        out = redact(text)
        assert "[REDACTED:password:" in out and ".word" not in out, out
