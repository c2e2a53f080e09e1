"""Credentials a command takes by position or by an odd flag (a table of commands), server
configurations, login forms, prose that pairs a user with a password, and secrets inside
base64 layers, YAML block scalars and wrapped table cells: masked whole as text and inside
a record; ordinary text of the same shapes passes unchanged."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from gitimprove.redaction import redact, redact_blob
from gitimprove.redaction.commands import COMMANDS

_rng = random.Random(1414)


def _fake(n: int, extra: str = "") -> str:
    """A random fake with letters, digits and (optionally) punctuation; never a real one."""
    alphabet = string.ascii_letters + string.digits
    body = "".join(_rng.choice(alphabet) for _ in range(n - 2))
    return _rng.choice(string.ascii_uppercase) + body + (extra or _rng.choice(string.digits))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PW = _fake(11, "!")
PW2 = _fake(9, "#")
KEY40 = _fake(40)
AKIA = "AKIA" + "".join(_rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
DOCKER = _b64(json.dumps({"auths": {"ghcr.io": {"auth": _b64(f"bot:{PW}")}}}))
DOCKER_LEGACY = _b64(json.dumps({"quay.io": {"username": "bot", "password": PW, "email": ""}}))

# (text, the secret in it, or a list of its parts)
LEAKS: list[tuple[str, str | list[str]]] = [
    # commands: positions
    (f"rabbitmqctl add_user bob {PW}", PW),
    (f"rabbitmqctl change_password bob {PW}", PW),
    (f"rabbitmqctl -n rabbit@mq1 add_user 'svc_app' '{PW}'", PW),
    (f"$ sudo rabbitmqctl authenticate_user ops {PW}", PW),
    (f"mc alias set myminio http://h:9000 {AKIA} {KEY40}", KEY40),
    (f"mc config host add s3 https://s3.amazonaws.com {AKIA} {KEY40} --api S3v4", KEY40),
    (f"mc admin user add myminio newuser {PW}", PW),
    (f"net use \\\\host\\share {PW} /user:DOM\\bob", PW),
    (f"net use Z: \\\\fs01\\data {PW} /user:CORP\\alice /persistent:yes", PW),
    (f'subprocess.run("net use \\\\\\\\nas\\\\media {PW} /user:media", shell=True)', PW),
    (f"mysqladmin -u root password {PW}", PW),
    (f"mosquitto_passwd -b /etc/mosquitto/passwd sensor {PW}", PW),
    (f"wpa_passphrase AcmeWifi {PW}", PW),
    (f"dscl . -passwd /Users/bob {PW} {PW2}", [PW, PW2]),
    (f"vault login {KEY40}", KEY40),
    (f"poetry config http-basic.acme bot {PW}", PW),
    (f"npm config set //registry.acme.io/:_authToken {KEY40}", KEY40),
    (f"isql AcmeDSN sa {PW}", PW),
    # commands: odd flags
    (f"ipmitool -I lanplus -H 10.0.0.5 -U ADMIN -P {PW} chassis status", PW),
    (f"sqlcmd -S db01 -U sa -P {PW} -Q 'select 1'", PW),
    (f"mosquitto_pub -h broker -u dev -P {PW} -t a/b -m on", PW),
    (f"7z a -p{PW} -mhe=on backup.7z docs/", PW),
    (f"unrar x -p{PW} archive.rar", PW),
    (f"unzip -P {PW} secrets.zip", PW),
    (f'sc config AcmeSvc obj= ".\\svc" password= "{PW}"', PW),
    (f"wmic /node:srv01 /user:admin /password:{PW} os get caption", PW),
    (f"ldappasswd -x -D cn=admin,dc=acme -w {PW} -s {PW2} uid=bob,dc=acme", [PW, PW2]),
    (f"security add-generic-password -a ci -s acme -w {PW}", PW),
    (f"security unlock-keychain -p {PW} login.keychain", PW),
    (f"nmcli dev wifi connect AcmeGuest password {PW}", PW),
    (f"nmcli con modify home wifi-sec.psk {PW}", PW),
    (f"snmpwalk -v2c -c s3cr3tC0mmunity{PW2[:3]} host", f"s3cr3tC0mmunity{PW2[:3]}"),
    (f"snmpset -v 2c -c {PW} 10.0.0.1 sysContact.0 s ops", PW),
    # configurations
    (f"SetEnv DB_PASSWORD {PW}", PW),
    (f'  SetEnv API_TOKEN "{KEY40}"', KEY40),
    (f"fastcgi_param DB_PASSWORD {PW};", PW),
    (f"php_admin_value mysqli.default_pw {PW}", PW),
    (f': PSK "{KEY40}"', KEY40),
    (f"10.0.0.1 10.0.0.2 : PSK 0s{_b64(PW)}", f"0s{_b64(PW)}"),
    (f'vpn.acme.io : RSA "vpn.pem" "{PW}"', PW),
    (f'bob : EAP "{PW}"', PW),
    (f'alice : XAUTH "{PW}"', PW),
    (f': PIN %smartcard:1 "{PW2}"', PW2),
    (f'password: <%= ENV.fetch("DB_PASSWORD", "{PW}") %>', PW),
    (f'secret_key_base: <%= ENV.fetch("SECRET_KEY_BASE") {{ "{KEY40}" }} %>', KEY40),
    (f'  password: <%= ENV["DB_PW"] || "{PW}" %>', PW),
    (f".dockerconfigjson: {DOCKER}", DOCKER),
    (f'{{"data": {{".dockerconfigjson": "{DOCKER}"}}}}', DOCKER),
    (f"  .dockercfg: {DOCKER_LEGACY}", DOCKER_LEGACY),
    (f"  .dockerconfigjson: {DOCKER[:60]}\n    {DOCKER[60:]}", [DOCKER[:60], DOCKER[60:]]),
    (
        f"  config.json: {_b64(json.dumps({'api_key': KEY40}))}",
        _b64(json.dumps({"api_key": KEY40})),
    ),
    (f"  .env: {_b64(f'DB_PASSWORD={PW}' + chr(10))}", _b64(f"DB_PASSWORD={PW}\n")),
    (f'<add key="Password" value="{PW}"/>', PW),
    (f'<property name="password" value="{PW}"/>', PW),
    (f'<property name="hibernate.connection.password" value="{PW}" />', PW),
    (f"<param name='secretKey' value='{KEY40}'/>", KEY40),
    (f'<setting name="ApiToken" serializeAs="String"><value>{KEY40}</value></setting>', KEY40),
    (f'<entry key="db.password">{PW}</entry>', PW),
    (f"user,pwd,email\nbob,{PW},bob@acme.io", PW),
    (f"user;pass\nbob;{PW}", PW),
    (f"login\tpasswd\nbob\t{PW}", PW),
    (f"name,secret_key,region\nprod,{KEY40},eu", KEY40),
    # prose
    (f"login with admin / {PW}", PW),
    (f"you can log in as root / {PW}", PW),
    (f"connect as sa / {PW} and run the migration", PW),
    (f"the admin account is admin / {PW}", PW),
    (f"user: bob pass: {PW}", PW),
    (f"creds are bob:{PW}", PW),
    (f"account: ops@acme.io:{PW}", PW),
    # forms
    (f'driver.find_element(By.ID, "password").send_keys("{PW}")', PW),
    (f"driver.find_element(By.NAME, 'passwd').send_keys('{PW}')", PW),
    (f'driver.findElement(By.cssSelector("input[type=password]")).sendKeys("{PW}");', PW),
    (f'await page.locator("input[name=password]").fill("{PW}")', PW),
    (f'page.fill("#password", "{PW}")', PW),
    (f"cy.get('#password').type('{PW}')", PW),
    (f"$('#pwd').setValue('{PW}')", PW),
    (f'fill_in "Password", with: "{PW}"', PW),
    (f"    Input Password    id=password    {PW}", PW),
    # code: credential stores
    (f"keychain.set('svc', 'acct', '{PW}')", PW),
    (f"await keytar.setPassword('acme', 'bob', '{PW}')", PW),
    (f'Keyring.add("acme", "bob", "{PW}")', PW),
    # more shapes of the same classes
    (f'rabbitmqctl add_user "bob" "{PW}"', PW),
    (f"rabbitmqctl.bat add_user bob {PW}", PW),
    (f"kubectl exec -it rabbit-0 -- rabbitmqctl change_password admin {PW}", PW),
    (f"net use * \\\\host\\share {PW} /user:bob", PW),
    (f"net use \\\\host\\share /user:bob {PW}", PW),
    (f"snmpwalk -v3 -l authPriv -u ops -a SHA -A {PW} -x AES -X {PW2} host", [PW, PW2]),
    (f'sqlcmd -S tcp:db,1433 -U sa -P "{PW}" -i x.sql', PW),
    (f'KeychainWrapper.standard.set("{PW}", forKey: "password")', PW),
    (f'password_field.send_keys("{PW}")', PW),
    (f'await passwordInput.fill("{PW}")', PW),
    (f"<parameter><name>password</name><value>{PW}</value></parameter>", PW),
    (f"<param-name>db.password</param-name>\n  <param-value>{PW}</param-value>", PW),
    (f"<property><name>fs.s3a.secret.key</name><value>{KEY40}</value></property>", KEY40),
    (f'<string name="api_key">{KEY40}</string>', KEY40),
    (f'"username","password"\n"bob","{PW}"', PW),
    (f"Username,Pass,Email\nbob,{PW},b@acme.io", PW),
    # layers: YAML block scalars and wrapped cells
    (f"password: |\n  {PW}\nother: 1", PW),
    (f"  client_secret: >-\n    {KEY40[:20]}\n    {KEY40[20:]}\n  x: 2", [KEY40[:20], KEY40[20:]]),
    (
        f" name | token\n------+------\n ci   | {KEY40[:20]}+\n      | {KEY40[20:]}\n",
        [KEY40[:20], KEY40[20:]],
    ),
    (f"+------+-----------+\n| user | password  |\n+------+-----------+\n| bob  | {PW} |\n", PW),
    (f"| user | password |\n|---|---|\n| bob | {PW} |", PW),
]

PASS = [
    "snmpwalk -v2c -c public host",
    "snmpget -v2c -c private 10.0.0.1 sysDescr.0",
    "snmpwalk -v 2c -c public 192.168.1.1 1.3.6.1",
    "snmpbulkwalk -v2c -c PUBLIC switch01",
    "rabbitmqctl list_users",
    "rabbitmqctl add_vhost staging",
    "rabbitmqctl add_user requires a user name and a password",
    "rabbitmqctl add_user bob with a password",
    "mc alias list",
    "mc alias set local http://localhost:9000 $MINIO_USER $MINIO_PASSWORD",
    "net use Z: \\\\fs01\\data /persistent:yes",
    "net use \\\\host\\share * /user:DOM\\bob",
    "ipmitool -I lanplus -H 10.0.0.5 -U ADMIN -P $IPMI_PW chassis status",
    "7z a -mx=9 backup.7z docs/",
    "mysqladmin -u root -p password",
    'driver.find_element(By.ID, "username").send_keys("alice")',
    'driver.find_element(By.ID, "password").send_keys(password)',
    'page.fill("#email", "bob@acme.io")',
    '<add key="Timeout" value="30"/>',
    '<property name="password" value="${db.password}"/>',
    '<setting name="ApiTokenUrl"><value>https://auth.acme.io/token</value></setting>',
    "SetEnv APP_ENV production",
    "SetEnv DB_PASSWORD ${DB_PASSWORD}",
    "password: |\n  {{ .Values.password }}",
    "token: |\n  line one of the text\n  line two\n",
    "steps:\n  run: |\n    echo hi\n    make test\n",
    "name,pass,fail\ntest_a,12,0\ntest_b,true,false\n",
    "PWD,USER\n/home/bob,bob\n",
    "logged in as alice/settings",
    "connect as sa:1433",
    "connected to db:5432 as app",
    "tests: 42 pass, 0 fail",
    "keychain.get('svc', 'acct')",
    "header = base64.b64encode(b'hello world, this is plain text').decode()",
    "aGVsbG8gd29ybGQsIHRoaXMgaXMgcGxhaW4gdGV4dCBvbmx5IGhlcmU=",
    "data:\n  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJzekNDQVZtZ0F3SUJBZ0lVQUJD\n",
    "the PSK and RSA modes are described in ipsec.secrets(5)",
    ": RSA moon.pem",
    "Input Password    id=password    ${PASSWORD}",
    "<property><name>fs.s3a.endpoint</name><value>s3.amazonaws.com</value></property>",
    "password_field.send_keys(Keys.RETURN)",
    "snmpwalk -v3 -l authPriv -u ops -a SHA -A $AUTH_PASS -x AES -X $PRIV_PASS host",
]


def _parts(secret: str | list[str]) -> list[str]:
    return secret if isinstance(secret, list) else [secret]


@pytest.mark.parametrize("text,secret", LEAKS, ids=range(len(LEAKS)))
def test_masked_whole_as_text_and_inside_a_record(text: str, secret: str | list[str]) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, out
    for part in _parts(secret):
        assert part not in out, out
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text, "v": 1}).encode()).decode()
    content = json.loads(record)["content"]
    for part in _parts(secret):
        assert part not in content, record


@pytest.mark.parametrize("text", PASS)
def test_ordinary_text_of_these_shapes_passes_unchanged(text: str) -> None:
    assert redact(text) == text
    blob = json.dumps({"content": text}).encode()
    assert redact_blob(blob) == blob


def test_every_row_of_the_command_table_masks_its_credential() -> None:
    """Each row of the table, given a fake at each place it names, masks it: the data is
    read as it says (a position, an option, an argument after an anchor)."""
    checked = 0
    for cmd in COMMANDS:
        words = " ".join(cmd.words)
        places: list[str] = []
        for opt in cmd.opts:
            if opt.endswith("*"):
                places.append(f"{words} {opt[:-1]}{PW} target")
            elif opt.endswith((":", "=")):
                places.append(f"{words} {opt}{PW} target")
            else:
                places.append(f"{words} {opt} {PW} target")
        if cmd.at and not cmd.after:
            args = [f"arg{n}" for n in range(max(cmd.at) + 1)]
            for at in cmd.at:
                args[at] = PW
            places.append(f"{words} {' '.join(args)}")
        for text in places:
            out = redact(text)
            assert PW not in out, (words, text, out)
            checked += 1
    assert checked >= len(COMMANDS) - 12  # rows keyed by an anchor are in LEAKS


def test_base64_of_ordinary_text_or_binary_stays() -> None:
    plain = _b64("just some ordinary words written down here for a test")
    binary = base64.b64encode(bytes(range(256))).decode()
    for text in (f"data: {plain}", f"blob: {binary}", f"image/png;base64,{binary}"):
        assert redact(text) == text
