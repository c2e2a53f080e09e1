"""Credentials given to calls, statements and scripts, told in prose, stored as password
hashes or hidden under layered encodings: masked whole as text and inside a record, in
shapes and languages beyond the examples a review named; ordinary code, prose and logs of
the same shapes pass unchanged."""

from __future__ import annotations

import json

import pytest

from gitimprove.redaction import redact, redact_blob

PW = "Hb4!tQz9mLw2"
KEY = "r7Kq2Zp9Lx4Wv8Nb3Mt6Yc1F"
BCRYPT = "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"
ARGON2 = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"
HEX40 = "9c1e7a3f5b2d8e6a0f4c9b1d7e3a2f8c6b5d4e3f"

LEAKS = [
    # A. calls whose name says they take a credential, in many languages
    (f'user.setPassword("{PW}");', PW),
    (f"ds.setPassword('{PW}')", PW),
    (f'keyring.set_password("smtp", "ops@acme.io", "{PW}")', PW),
    (f'conn.simple_bind_s("cn=admin,dc=acme,dc=io", "{PW}")', PW),
    (f'ldap_bind($ds, "uid=svc,ou=people,dc=acme,dc=io", "{PW}");', PW),
    (f'$sec = ConvertTo-SecureString "{PW}" -AsPlainText -Force', PW),
    (f"$sec = ConvertTo-SecureString -String '{PW}' -AsPlainText -Force", PW),
    (f'let password = String::from("{PW}");', PW),
    (f'token := []byte("{KEY}")', KEY),
    (f'db_pass = SecretStr("{PW}")', PW),
    (f'Config.builder().username("svc").password("{PW}").build()', PW),
    (f'mailer.withCredentials("svc", "{PW}")', PW),
    (f'client.SetAuthToken("{KEY}")', KEY),
    (f'api.set_token("{KEY}")', KEY),
    (f'new PasswordAuthentication("svc", "{PW}".toCharArray())', PW),
    (f'$client->setSecret("{PW}");', PW),
    (f'vault.auth.userpass.login(username="svc", password="{PW}")', PW),
    (f'Net::SSH.start("host", "svc", :password => "{PW}")', PW),
    (f'ftp.login("anonymous", "{PW}")', PW),
    (f'let pass = "{PW}".to_string();', PW),
    (f'auth := smtp.PlainAuth("", "me@acme.io", "{PW}", "smtp.acme.io")', PW),
    (f"SET PASSWORD FOR 'app'@'%' = PASSWORD('{PW}');", PW),
    (f'await page.fill("#password", "{PW}")', PW),
    (f'let token = SecretString::new("{PW}".into());', PW),
    (f'$cred = New-Object PSCredential("svc", (ConvertTo-SecureString "{PW}" -AsPlainText))', PW),
    # B. shell tools and scripts
    (f'ssh-keygen -t ed25519 -N "{PW}" -f deploy_key', PW),
    (f"ssh-keygen -p -f key -P '{PW}' -N ''", PW),
    (f"ssh-keygen -p -f key -P old -N {PW}", PW),
    (f'spawn ssh svc@host\nexpect "*assword*"\nsend "{PW}\\r"\ninteract', PW),
    (f'expect "Enter passphrase for key:"; send -- "{PW}\\n"', PW),
    (f"expect -re {{[Pp]assword:}}\nsend {PW}\\r", PW),
    (
        f"INSERT INTO users (id, login, password, email) VALUES (1, 'bob', '{PW}', 'b@x.io');",
        PW,
    ),
    (f"insert into accounts(login,pwd_hash) values ('bob','{PW}'),('amy','{KEY}')", KEY),
    (f'INSERT INTO "creds" ("user", "api_token") VALUES (\'ci\', \'{KEY}\')', KEY),
    (f"smbclient //fs/share -U bob%{PW}", PW),
    (f"mount -t cifs //fs/s /mnt -o username=bob,password={PW},vers=3.0", PW),
    (f"PGPASSWORD={PW} psql -h db -U app", PW),
    (f"sshpass -p '{PW}' scp f svc@host:", PW),
    (f'echo "{PW}" | sudo -S apt-get update', PW),
    (f"$ head -1 users.csv\nid,name,email,password\n$ grep bob users.csv\n7,bob,b@x.io,{PW}\n", PW),
    (f"keytool -importkeystore -srcstorepass {PW} -deststorepass {PW}", PW),
    (f"kubectl create secret generic db --from-literal=password={PW}", PW),
    # C. markup and data shapes
    (f"<password><![CDATA[{PW}]]></password>", PW),
    (f"<ApiKey>\n  <![CDATA[{KEY}]]>\n</ApiKey>", KEY),
    (f'"Admin Password": "{PW}"', PW),
    (f"Secret Key = {KEY}", KEY),
    (f"API key: {KEY}", KEY),
    (f"| user | password |\n|---|---|\n| bob | {PW} |\n| amy | x{PW} |", PW),
    (f"db_password: &dbpw {PW}\nreplica_password: *dbpw", PW),
    (f"pw: &p {PW}", PW),
    (f"admin_token: !!str {KEY}", KEY),
    (
        "root:$6$rounds=5000$Qx9Lp2Zk$"
        + "Lw8Nb3Mt6Yc1FZq4Pk7Rv2Xs9Hd5Jg0Ue3Ao6Ti1Ey"
        + ":19000:0:99999:7:::",
        "Lw8Nb3Mt6Yc1",
    ),
    (
        f'hash = "{BCRYPT}"',
        "R9h/cIPz0gi.",
    ),
    (
        ARGON2,
        "RdescudvJCsg",
    ),
    ("svc:{SSHA}" + "Lw8Nb3Mt6Yc1FZq4Pk7Rv2Xs9Hd5", "Lw8Nb3Mt6Yc1"),
    ("svc:$apr1$Qx9Lp2Zk$" + "HqJZimcKQFAMYayBlzkrA/", "HqJZimcKQFAM"),
    (
        "pbkdf2_sha256$600000$Qx9Lp2ZkR7$" + "Lw8Nb3Mt6Yc1FZq4Pk7Rv2Xs9Hd5Jg0Ue3Ao6Ti1Ey=",
        "Lw8Nb3Mt6Yc1",
    ),
    ('{"type": "service_account", "private_key_id": "' + HEX40 + '"}', HEX40),
    (
        "mysql> select authentication_string from user;\n*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9",
        "6BB4837EB743",
    ),
    ("rolpassword | md5a3556571e93b0d20722ba62be61e8c2d", "a3556571e93b"),
    (
        "Administrator:500:aad3b435b51404eeaad3b435b51404ee:31d6cfe0d16ae931b73c59d7e0c089c0:::",
        "31d6cfe0d16a",
    ),
    # D. prose
    (f"the passcode for the vault is {PW}", PW),
    (f"I set the secret key to {KEY} yesterday", KEY),
    (f"login with admin / {PW}", PW),
    (f"ok so password: {PW} and then it failed", PW),
    (f"pw is {PW}", PW),
    (f"creds are bob/{PW}", PW),
    (f"the token is now {KEY}", KEY),
    (f"my passphrase was set as {PW}.", PW),
    (f"sign in as admin with {PW}", PW),
    (f"The API key for staging is `{KEY}`", KEY),
    (f"credentials were changed to svc/{PW} this morning", PW),
    ("Your new PIN is 4821.", "4821"),
    (f"the password for bob@db.acme.io is {PW}", PW),
    # E. layered encodings
    (f"https://x.io/cb?next=%2Flogin%253Fpassword%253D{PW}", "Hb4%2521tQz9"),
    (f"password%25253D{KEY}", KEY),
    (f"postgres%253A%252F%252Fapp%253A{KEY}%2540db%252Fprod", KEY),
    (f"password&amp;#61;{KEY}", KEY),
    (f"api_key%253A%2520{KEY}", KEY),
]

PASS = [
    'socket.bind(("0.0.0.0", 8080))',
    'server.bind("127.0.0.1:5000")',
    '$(el).bind("click.auth", handler)',
    'keyring.get_password("svc", "bob")',
    'secret = client.get_secret("prod/db-password")',
    'user.setPassword(request.form["password"])',
    "auth.login(request, user)",
    'tokens = tokenize("a+b=c*d")',
    'client.auth("oauth2", "https://auth.acme.io/token")',
    'driver.set_token_path("/var/run/secrets/token.txt")',
    'setAuthor("Jane Doe")',
    'logger.info("login failed for %s", user)',
    'passport.authenticate("local", { failureRedirect: "/login" })',
    'let token = Token::new("identifier");',
    'password := os.Getenv("DB_PASSWORD")',
    'pattern = re.compile(r"(?i)password\\s*=\\s*(\\S+)")',
    "the password is incorrect, please try again",
    "the token is expired since 2024-01-01",
    "tokens are counted with tiktoken-v2 now",
    "Implement password reset functionality.\\n\\n**Requirements:**",
    "Do we invalidate old tokens when new ones are requested?\\n- What",
    "login with GitHub to continue",
    "The secret key is stored in /etc/app/secret.key",
    "creds are in ~/.aws/credentials",
    "passwords are hashed with bcrypt-4.0.1",
    "the session token was rotated at 10:42 UTC",
    "The token was gpt-4o-mini",
    "INSERT INTO users (id, name, password_reset_at) VALUES (1, 'bob', '2024-01-01')",
    "INSERT INTO users (id, name, email) VALUES (1, 'bob', 'b@x.io')",
    "INSERT INTO users (id, password) VALUES (1, NULL)",
    'expect "login:"\nsend "bob\\r"',
    'ssh-keygen -t ed25519 -N "" -f key',
    "ssh-keygen -lf ~/.ssh/id_ed25519.pub",
    'cost = "$2.50 per unit, $6 total"',
    "<password></password>",
    "anchors: &defaults\n  adapter: postgres",
    "password: &pwref\n  secretKeyRef: db",
    # a 16-hex session id in a log: an identifier (docs/secrets.md)
    "session_key: 3f2a9c0d1e4b5a6c",
    "2024-05-01 INFO session_key=9f8e7d6c5b4a3210 user=bob",
    '"session_key": "a1b2c3d4e5f60718"',
    # jwt.io's published example, the fixture every JWT library's tests quote
    "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwi"
    "bmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    '{"access_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6'
    'IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}',
    "100%25 done, see a%2520b",
    "sign in as admin with your SSO account",
    'page.fill("#username", "bob")',
    'page.type("#search", "hello world 42")',
    "the pin is on the board",
    "x = a * b  # product",
    "name,note\nbob,hello there 42\n",
    'raise Tampered(\n    result,\n    "a, b",\n    stop=False,\n)',
]


@pytest.mark.parametrize("text,secret", LEAKS)
def test_masked_whole_as_text_and_inside_a_record(text: str, secret: str) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, out
    assert secret not in out, out
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text, "v": 1}).encode()).decode()
    content = json.loads(record)["content"]
    assert secret not in content and "[REDACTED:" in content, record


@pytest.mark.parametrize("text", PASS)
def test_ordinary_text_of_these_shapes_passes_unchanged(text: str) -> None:
    assert redact(text) == text
    blob = json.dumps({"content": text}).encode()
    assert redact_blob(blob) == blob


def _pem_like(n: int) -> str:
    import base64
    import random

    rng = random.Random(n)
    body = "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(n))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize("head", [True, False])
def test_a_clip_masks_only_the_window_it_can_keep(
    head: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200 KB payload: what is scanned is the kept part plus the margin, whatever the size
    (so a hook's time is bounded), and nothing of a key or a token survives the cut."""
    import gitimprove.redaction as redaction

    scanned: list[int] = []
    real = redaction.spans

    def spy(text: str, rules: object = None) -> list[object]:
        scanned.append(len(text))
        return real(text)  # type: ignore[return-value]

    monkeypatch.setattr(redaction, "spans", spy)
    tokens = "\n".join(f"retry {i}: token={KEY}{i:04d} password={PW}{i}" for i in range(4000))
    for text in (_pem_like(4000), tokens, "x" * 3000 + _pem_like(4000), tokens + _pem_like(40)):
        scanned.clear()
        out = redaction.clip(text, 500) if head else redaction.clip_tail(text, 500)
        assert len(text) > 190_000 and max(scanned) <= 500 + redaction.MARGIN
        assert len(out) <= 500
        assert KEY not in out and PW not in out, out
        body = [w for w in out.replace("x", " ").split() if "REDACTED" not in w]
        assert not any(len(w) >= 40 for w in body), out


def test_a_secret_straddling_the_margin_is_not_cut_into_the_kept_part() -> None:
    from gitimprove.redaction import MARGIN, clip

    limit = 500
    # a PEM key that begins before the kept part ends and runs past the scanned window
    text = "x" * 400 + "\n" + _pem_like(2000)
    out = clip(text, limit)
    assert out.startswith("x" * 400) and "[REDACTED:private-key" in out
    # a token that starts just before the point the window is cut after masking
    at = limit + MARGIN // 2 - 10
    text = "y" * at + f" api_key={KEY}{KEY} " + "z" * 20_000
    assert KEY[:12] not in clip(text, limit)
