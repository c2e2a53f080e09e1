"""The fifth review's leak classes: each shape masked as text, with CRLF line endings and
inside a stored JSON record, and the ordinary look-alikes of each class left unchanged."""

from __future__ import annotations

import json
import random

import pytest

from gitimprove.redaction import redact, redact_blob
from gitimprove.redaction.argv import SHORT
from gitimprove.redaction.formats import SEED_MIN, bip39_words
from gitimprove.redaction.languages import LANGUAGES

PW = "Vb7#qTz2mLx9w"
PW2 = "hK4-pRw8nZq2"
TOK = "r8Kq2Zp9Lx4Wv7Nb3Mt6Yc1FgH5"
TOK2 = "Q2mZx8Lk4Tr9Wv3Nb7Pc1Yd6"
UUID = "3f9a2c71-4b8d-4e6f-9a1b-7c2d3e4f5a6b"

LEAKS: list[tuple[str, str]] = [
    # markup
    (f"**Password:** {PW}", PW),
    (f"- **Admin password**: `{PW}`", PW),
    (f"__API key__ = {TOK}", TOK),
    (f"| API token | {TOK} |", TOK),
    (f"| Service | Value |\n|---|---|\n| DB password | {PW} |\n| Region | eu |", PW),
    (f"| `DEPLOY_TOKEN` | `{TOK}` |", TOK),
    (f"Set `DB_PASSWORD` to `{PW}` before starting.", PW),
    (f"`client_secret` is `{TOK}`", TOK),
    (f"Password\n: {PW}\n", PW),
    (f"Deploy token\n\n:   {TOK}", TOK),
    (f":password: {PW}", PW),
    (f"<dt>Password</dt>\n<dd>{PW}</dd>", PW),
    (f"<th>API token</th><td>{TOK}</td>", TOK),
    # argument lists
    (f"subprocess.run(['mysql', '-u', 'root', '-p{PW}', 'app'])", PW),
    (f"subprocess.check_call(['twine', 'upload', '--password', '{PW}', 'dist/*'])", PW),
    (f'["--password", "{PW}"]', PW),
    (f'cmd = ["deploy", "--api-key={TOK}"]', TOK),
    (f"mysql\0-uroot\0--password\0{PW}\0app\0", PW),
    (f"$ cat /proc/4242/cmdline\nrabbitmqadmin\\0-p\\0{PW}\\0list\\0queues", PW),
    (f'args: ["--token", "{TOK}"]', TOK),
    (f'CMD ["server", "--client-secret", "{TOK}"]', TOK),
    (f"args:\n  - --auth-token\n  - {TOK}\n", TOK),
    (f"(redis-cli, ['redis-cli', '-a', '{PW}', 'ping'])", PW),
    # connection strings
    (f'db, err := sql.Open("mysql", "root:{PW}@tcp(db:3306)/app")', PW),
    (f'dsn := "svc:{PW}@unix(/run/mysqld/mysqld.sock)/app?parseTime=true"', PW),
    (f"sqlplus app/{PW}@//db:1521/ORCLPDB1", PW),
    (f"connect('scott/{PW}@db.acme.io:1521/ORCL')", PW),
    (f"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={PW};", PW),
    (f"Driver={{ODBC Driver 18}};Server=db;UID=sa;PWD={PW};", PW),
    # CI
    (f"##vso[task.setvariable variable=deployToken;issecret=true]{TOK}", TOK),
    (f'Write-Host "##vso[task.setsecret]{TOK}"', TOK),
    (f"echo '##vso[task.setvariable variable=ApiKey]{TOK}'", TOK),
    (f'buildkite-agent meta-data set "deploy-token" "{TOK}"', TOK),
    (f"buildkite-agent secret set npm {TOK}", TOK),
    (f"echo ::add-mask::{TOK}", TOK),
    # commands
    (f"rabbitmqadmin -u admin -p {PW} list queues", PW),
    (f"rabbitmqadmin --username=admin --password={PW} list users", PW),
    (f"pulumi config set --secret dbPassword {PW}", PW),
    (f"pulumi config set apiToken {TOK}", TOK),
    (f"reg add HKLM\\Software\\Acme /v ApiKey /t REG_SZ /d {TOK} /f", TOK),
    (f'reg add "HKCU\\Software\\Acme" /d "{TOK}" /v DeployToken /f', TOK),
    (f"Set-ItemProperty -Path HKCU:\\Software\\Acme -Name ApiToken -Value {TOK}", TOK),
    (f'printf %s "{TOK}" | gh secret set DEPLOY_TOKEN', TOK),
    (f"printf '{PW}' | docker secret create db_pw -", PW),
    (f'printf "%s\\n" "{PW}" | podman secret create db -', PW),
    (f"printf -- '{PW}' | docker login -u bob --password-stdin", PW),
    (f"SET PASSWORD FOR 'app'@'%' = '{PW}';", PW),
    (f"SET PASSWORD = PASSWORD('{PW}');", PW),
    (f"ALTER LOGIN sa WITH PASSWORD = N'{PW}';", PW),
    (f"INSERT INTO api_keys (user_id, key) VALUES (42,'{TOK}');", TOK),
    (f"INSERT INTO `tokens` (`id`, `value`) VALUES (1, '{TOK}'), (2, '{TOK2}');", TOK2),
    # code and data
    (f'my %db = (user => "bob", pass => "{PW}");', PW),
    (f"{{:pw => '{PW}'}}", PW),
    (f'{{"param":"client_secret","val":"{TOK}"}}', TOK),
    (f'{{"field": "api_token", "data": "{TOK}"}}', TOK),
    (f'{{"credentials":{{"prod":"{TOK}"}}}}', TOK),
    (f'{{"secrets": {{"github": {{"ci": "{TOK}"}}}}}}', TOK),
    (f"credentials:\n  prod: {TOK}\n  staging: {TOK2}\n", TOK2),
    (f"api_keys:\n  - name: ci\n    value: {TOK}\n", TOK),
    (f'{{"stripe_sk":"{TOK}"}}', TOK),
    (f"STRIPE_RK={TOK}", TOK),
    (f"pk_live: {TOK}", TOK),
    (f"smtp_psw = '{PW}'", PW),
    (f'query Login($token: String = "{TOK}") {{ me {{ id }} }}', TOK),
    (f'{{"query":"mutation L($p: String!)","variables":{{"password":"{PW}"}}}}', PW),
    # prose
    (f"pass is {PW}", PW),
    (f"the pw was {PW}.", PW),
    (f"log in (admin / {PW})", PW),
    (f"wifi: AcmeGuest / {PW}", PW),
    (f"VPN — bob / {PW}", PW),
    (f"I tried {PW} as the password but it failed", PW),
    (f"I used {TOK} for the API key", TOK),
    (f'with "{PW}" — that is the root password', PW),
    (f"{PW} (that's the admin password)", PW),
    (f"that one expired, use this one instead: {TOK}", TOK),
    (f"here is the new one: {TOK}", TOK),
    (f"this key {TOK} works", TOK),
    (f"the token {TOK} expired", TOK),
    (f'msg: "mysql_root_password is {PW}"', PW),
    (f"db_password was set to {PW}", PW),
    # other languages
    (f"Das Passwort ist {PW}", PW),
    (f"Das Kennwort für die Datenbank lautet {PW}.", PW),
    (f"API-Schlüssel: {TOK}", TOK),
    (f"Le mot de passe est {PW}", PW),
    (f"mot de passe : {PW}", PW),
    (f"La contraseña es {PW}", PW),
    (f"contraseña: {PW}", PW),
    (f"La password è {PW}", PW),
    (f"A senha é {PW}", PW),
    (f"Пароль: {PW}", PW),
    (f"пароль от базы — {PW}", PW),
    (f"密码：{PW}", PW),
    (f"数据库的密码是{PW}。", PW),
    (f"パスワード: {PW}", PW),
    (f"パスワードは {PW} です", PW),
    (f"Het wachtwoord is {PW}", PW),
    (f"Hasło to {PW}", PW),
    (f"Şifre: {PW}", PW),
    (f"비밀번호는 {PW}", PW),
    # provider tokens without a keyword
    ("squ_" + "4f1c9a2b7e3d8c6a5b4f1e2d3c9a8b7e6f5a4b3c", ""),
    ("sqp_" + "0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b", ""),
    ("sgp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0", ""),
    ("CFPAT-" + "x9Y8w7V6u5T4s3R2q1P0o9N8m7L6k5J4i3H2g1F0e9D", ""),
    ("pat-eu1-" + UUID, ""),
    ("tfp_" + "9Hk3JqL9xW2mZpR7tY5vN8cB4aQ1sD6fG0hJ2kL4zX7cV_1a2B3c", ""),
    ("y0_" + "AgAAAABk3JqL9xW2mZpR7tY5vN8cB4aQ1sD6fG0hJ2kL4zX7cV9b", ""),
    ("AQVN" + "1a2b3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXy", ""),
    ("KEY0184A1B2C3D4E5F6A7B8C9D0E1F2A3B4_" + "Ab3dEf6hIj9kLm2nOp5qRs", ""),
    ("access_token$production$" + "ab12cd34ef56gh78$" + "0123456789abcdef0123456789abcdef", ""),
    ("https://hooks.zapier.com/hooks/catch/1234567/abc9d2e/", ""),
    (
        "AZURE_CLIENT_SECRET abc8Q~" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zA",
        "Ab3dEf6hIj9kLm2nOp5qRs8tUv1w",
    ),
    ("tenant-secret abc8Q~" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zA:", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"),
]


def _parts(secret: str) -> list[str]:
    return [secret[i : i + 12] for i in range(0, max(1, len(secret) - 11), 4)]


# a provider token stands alone: the secret is the text itself
LEAKS = [(t, s or t) for t, s in LEAKS]
CASES = LEAKS + [(t.replace("\n", "\r\n"), s) for t, s in LEAKS if "\n" in t]
CASES += [(f"note\r\n{t}\r\nnext line", s) for t, s in LEAKS[::3]]


@pytest.mark.parametrize("text,secret", CASES, ids=range(len(CASES)))
def test_masked_as_text_and_inside_a_record(text: str, secret: str) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, out
    for part in _parts(secret):
        assert part not in out, out
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text, "v": 1}).encode()).decode()
    content = json.loads(record)["content"]
    for part in _parts(secret):
        assert part not in content, record


PASS = [
    # markup
    "| Setting | Description |\n|---|---|\n| DB_PASSWORD | The database password |",
    "| Name | Type | Required |\n|---|---|---|\n| api_token | string | yes |",
    "| password | required |",
    "**Password:** required",
    "**Token**: see the vault",
    "Set `DB_PASSWORD` to `${DB_PASSWORD}`",
    "Added endpoint config with `secret_key_base` to `config/test.exs`.",
    "Put `api_token` in `~/.config/app/token` and `DB_PASSWORD` in `/run/secrets/db`",
    "`password` is `required`",
    "Password\n: the account's password, at least 12 characters",
    "_credential_call(m)",
    # argument lists
    "subprocess.run(['git', 'commit', '-m', msg])",
    "subprocess.run(['mysql', '-u', 'root', '-p', 'appdb'])",
    "cmd = ['curl', '--token', token]",
    "opts = ['--password', '${DB_PASSWORD}']",
    "x = ['--token-file', '/run/secrets/t']",
    "args: ['--secret', 'db-password']",
    "args:\n  - --verbose\n  - --port\n  - '8080'\n",
    # connection strings
    'dsn := "app:" + pw + "@tcp(db:3306)/app"',
    "uses: actions/setup-python@v5",
    "uses: org/repo2@v1",
    "git@github.com:org/repo.git",
    "SET PASSWORD FOR 'app'@'%' = ?;",
    # CI and commands
    'echo "##vso[task.setvariable variable=buildNumber]1.2.3"',
    'buildkite-agent meta-data set "release-version" "1.4.2"',
    "pulumi config set aws:region us-east-1",
    "reg add HKCU\\Console /v QuickEdit /t REG_DWORD /d 1 /f",
    'printf "%s\\n" "$TOKEN" | gh secret set X',
    'printf "hello" | wc -c',
    "INSERT INTO settings (name, value) VALUES ('theme', 'dark2');",
    # code and data
    "pass => $ENV{PASS},",
    "tests pass => 42",
    "    pass",
    "def f():\n    pass\n",
    "except KeyError:\n    pass  # the key may be gone",
    '{"param":"client_secret","val":"${CLIENT_SECRET}"}',
    '{"credentials": {"type": "service_account", "project_id": "acme-prod-123"}}',
    "secrets:\n  - name: db\n    mountPath: /etc/db\n",
    "disk = 'sda1234'",
    "pwd = self.ftp.pwd()",
    # prose
    "the test pass is fine",
    "pass is required",
    "the password is required",
    "Use read / write access",
    "login: bob / Alice",
    "git add lib/app/router.ex spotter-plugin/hooks/hooks.json lib/app/console.ex",
    "see the admin-panel/settings/users.json file",
    "I used the same value as the password",
    "I tried it as the password",
    "use this one instead: https://acme.io/docs",
    "this key does not work",
    "the token expired yesterday",
    "mysql_root_password is {{ vault_pw }}",
    "mysql_root_password is required",
    "Do not use this: rm -rf /",
    # other languages
    "Das Passwort ist erforderlich.",
    "Passwort vergessen?",
    "Le mot de passe est trop court",
    "La contraseña es obligatoria",
    "密码是什么？",
    "パスワードは必須です",
    "Пароль — обязательное поле",
    "Hasło jest zbyt krótkie",
    "Wachtwoord vergeten?",
    "password-stdin\nDB_HOST=db.acme.io",
    # a token or key named as an identifier (`trace`, `request`, `cache`, `span`, `public`)
    "trace token 4bf92f3577b34da6a3ce929d0e0e4736 sampled",
    "request token 9c1de3a2b4f5061728394a5b6c7d8e9f took 12ms",
    "span key f00ba4e1c2d3b4a5968778695a4b3c2d",
    "idempotency key Zq8xLm2Kw7RtYp4Bn9Vc3Df6 reused",
    "the public key AAAAC3NzaC1lZDI1NTE5AAAAIOMq is known",
    # a NUL-separated argument list without a credential
    "cat /proc/1/cmdline: python3\\0-m\\0http.server\\08000",
    "b'git\\x00commit\\x00-m\\x00fix typo'",
    # look-alike tokens
    "KEYBOARD_LAYOUT_DEFAULT",
    "pat-na1-settings",
    "sgp_config",
    "the cat sat on the mat and then she went home to sleep",
    "abandon ability able about above absent absorb abstract absurd abuse access accident",
]


@pytest.mark.parametrize("text", PASS, ids=range(len(PASS)))
def test_ordinary_text_of_these_shapes_passes_unchanged(text: str) -> None:
    assert redact(text) == text
    assert redact(text.replace("\n", "\r\n")) == text.replace("\n", "\r\n")
    blob = json.dumps({"content": text}).encode()
    assert redact_blob(blob) == blob


def test_every_language_of_the_table_masks_a_value_after_each_word() -> None:
    """The table is data: each word with each joiner of its language masks a fake, and
    says nothing of a plain word after it."""
    with open(LANGUAGES, encoding="utf-8") as fh:
        table = json.load(fh)
    checked = 0
    for lang, entry in table.items():
        if lang.startswith("_"):
            continue
        for word in entry["words"]:
            for joiner in [*entry["joiners"], ":"]:
                text = f"{word.capitalize()} {joiner} {PW2}"
                out = redact(text)
                assert PW2 not in out, (lang, text, out)
                checked += 1
            assert redact(f"{word} {entry['joiners'][0]} required") == (
                f"{word} {entry['joiners'][0]} required"
            )
    assert checked > 200


def test_every_program_flag_in_a_list_masks_the_next_element() -> None:
    for prog, flags in SHORT.items():
        for flag in flags:
            if flag.endswith("*"):
                els = [prog, "-u", "root", f"{flag[:-1]}{PW2}", "db"]
            else:
                els = [prog, "-u", "root", flag, PW2, "db"]
            for text in (repr(els), json.dumps(els), "\0".join(els)):
                out = redact(text)
                assert PW2 not in out, (text, out)


@pytest.mark.parametrize("n", [12, 15, 18, 21, 24])
def test_a_seed_phrase_of_list_words_is_masked_whole(n: int) -> None:
    words = sorted(bip39_words())
    assert len(words) == 2048
    rng = random.Random(n)
    phrase = [rng.choice(words) for _ in range(n)]
    for shape in (
        " ".join(phrase),
        "\n".join(phrase),
        "\r\n".join(f"{i + 1}. {w}" for i, w in enumerate(phrase)),
        "seed: " + ", ".join(phrase) + ". done",
    ):
        out = redact(shape)
        assert "[REDACTED:seed-phrase:" in out, out
        assert not any(w in out.split() for w in phrase[1:-1] if len(w) > 3), out


def test_fewer_list_words_or_ordinary_sentences_stay() -> None:
    words = sorted(bip39_words())
    rng = random.Random(7)
    short = " ".join(rng.choice(words) for _ in range(SEED_MIN - 1))
    assert redact(short) == short
    broken = " ".join(rng.choice(words) for _ in range(8)) + " the " + short
    assert redact(broken) == broken
    prose = (
        "We moved the build to a faster machine and the tests now finish in half the time, "
        "which means reviews can start before lunch on most days of the week."
    )
    assert redact(prose) == prose
    assert redact("yes " * 14) == "yes " * 14


def test_a_nul_separated_list_inside_a_quoted_string_names_its_program() -> None:
    for text in (
        f"b'mysql\\x00-p{PW2}\\x00app'",
        f'"mysqldump\\u0000-p{PW2}\\u0000db"',
        f"ps: sshpass^@-p^@{PW2}^@ssh^@host",
    ):
        out = redact(text)
        assert PW2 not in out, out
        assert ("app" in out or "db" in out or "host" in out) and out.count("[REDACTED:") == 1


def test_the_seed_phrase_pattern_runs_only_on_text_with_enough_list_words() -> None:
    from gitimprove.redaction import engine, ruleset
    from gitimprove.redaction.formats import may_hold_phrase

    rule = next(r for r in ruleset().rules if r.id == "seed-phrase")
    engine._compiled.clear()
    text = "Traceback (most recent call last):\n  File \"x.py\", line 3\nKeyError: 'a'\n" * 3
    assert not may_hold_phrase(text) and redact(text) == text
    assert (rule.regex, rule.flags) not in engine._compiled
    words = sorted(bip39_words())
    rng = random.Random(3)
    phrase = " ".join(rng.choice(words) for _ in range(SEED_MIN))
    assert may_hold_phrase(phrase) and "[REDACTED:seed-phrase:" in redact(phrase)
    assert (rule.regex, rule.flags) in engine._compiled


COMMAND_OUTPUT = [
    # (command, next line, masked): the output is masked, never the command's own words
    ("vault kv get -field=password secret/db", PW2, True),
    ("vault kv get -field=token secret/ci/deploy", TOK, True),
    ("vault kv get -field=password secret/db", "", False),
    ("heroku auth:token", UUID, True),
    ("heroku auth:token", "HRKU-AAbC12dEf3GhI4jKl5MnO6pQr7StU8vWx9Yz0", True),
    ("heroku auth:token", "Done", False),
    ("heroku auth:token", "OK", False),
    ("heroku auth:token", "v8.1.0", False),
    ("heroku auth:token", "Unauthorized.", False),
    ("heroku auth:token", " ›   Warning: token will expire today", False),
    ("gcloud auth print-access-token", "ERROR:", False),
    ("gh auth token", "Done", False),
]


@pytest.mark.parametrize("command,line,masked", COMMAND_OUTPUT, ids=range(len(COMMAND_OUTPUT)))
def test_a_command_printing_a_secret_masks_its_output_alone(
    command: str, line: str, masked: bool
) -> None:
    for prompt in ("$ ", "Bash failed: ", ""):
        text = f"{prompt}{command}\n{line}\n" if line else f"{prompt}{command}"
        out = redact(text)
        assert out.startswith(f"{prompt}{command}\n" if line else text), out
        assert (line not in out) == masked, out
        if masked:
            assert out.count("[REDACTED:") == 1, out
