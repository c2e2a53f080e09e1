"""Secrets kept apart from their names by structure (JSON inside JSON, name/value fields,
SecureString parameters, lists under a credential key), the output of commands that print a
secret, provider formats that need no keyword, and language / file-format shapes (SQL,
postfix, LDAP, HTML, PHP dumps, C++, Makefiles, cookies, stdin secret stores, prose): each
masked whole as text, with CRLF line endings and inside a record; ordinary look-alikes of
every class pass unchanged."""

from __future__ import annotations

import json
import random
import string

import pytest

from gitimprove.redaction import redact, redact_blob
from gitimprove.redaction.outputs import PRINTS_SECRET

_rng = random.Random(1415)
ALNUM = string.ascii_letters + string.digits


def _fake(n: int, alphabet: str = ALNUM, extra: str = "") -> str:
    """Random letters and digits (one of each at least); never a real secret."""
    body = "".join(_rng.choice(alphabet) for _ in range(n - 2))
    return _rng.choice("QZXJKW") + body + (extra or _rng.choice(string.digits))


def _pw() -> str:
    return _fake(9) + _rng.choice("!#%+-") + _fake(4)


def _uuid() -> str:
    h = "0123456789abcdef"
    parts = [8, 4, 4, 4, 12]
    return "-".join("".join(_rng.choice(h) for _ in range(n)) for n in parts)


def _b64(n: int) -> str:
    return _fake(n, ALNUM + "+/")


def _escaped(record: object, times: int) -> str:
    text = json.dumps(record)
    for _ in range(times):
        text = json.dumps({"payload": text})
    return text


PV = "ParameterValue"  # (a name beside a credential name in this source reads as a value)
P = [_pw() for _ in range(40)]
T = [_fake(32) for _ in range(10)]
U = [_uuid() for _ in range(6)]

NESTED = [
    # JSON escaped inside JSON strings, once, twice, three times
    (_escaped({"SecretString": json.dumps({"username": "app", "password": P[0]})}, 0), P[0]),
    (_escaped({"password": P[1], "host": "db"}, 1), P[1]),
    (_escaped({"db": {"api_token": T[0]}}, 2), T[0]),
    ('{"SecretString":"{\\"engine\\":\\"mysql\\",\\"password\\":\\"' + P[2] + '\\"}"}', P[2]),
    # a name and its value in two fields, either order, several spellings
    ('{"key":"DB_PASSWORD","val":"' + P[3] + '"}', P[3]),
    ('{"Name": "stripe_api_token", "Value": "' + T[1] + '"}', T[1]),
    (json.dumps([{"ParameterKey": "MasterUser" + "Password", PV: P[4]}]), P[4]),
    ('{"value": "' + P[5] + '", "name": "SMTP_PASSWORD"}', P[5]),
    (
        '"environment": [\n  {"name": "LOG_LEVEL", "value": "info"},\n  {"name": "API_SECRET",'
        ' "value": "' + T[2] + '"}\n]',
        T[2],
    ),
    (
        "env:\n  - name: DB_PASSWORD\n    value: " + P[6] + "\n  - name: PORT\n    value: '8080'\n",
        P[6],
    ),
    (
        '{"Namespace": "aws:elasticbeanstalk", "OptionName": "DB_PASSWORD", "Value": "'
        + P[7]
        + '"}',
        P[7],
    ),
    # an SSM SecureString, its name saying nothing
    (
        '{"Parameter": {"Name": "/prod/db/main", "Type": "SecureString", "Value": "' + P[8] + '"}}',
        P[8],
    ),
    ('{"Value": "' + P[9] + '", "Type": "SecureString", "Name": "/app/x"}', P[9]),
    # lists under a credential key
    ('api_keys: [ "' + T[3] + '", "' + T[4] + '" ]', [T[3], T[4]]),
    ('{"tokens": ["' + T[5] + '","' + T[6] + '"]}', [T[5], T[6]]),
    ("tokens:\n  - " + T[7] + "\n  - " + T[8] + "\nretries: 3\n", [T[7], T[8]]),
    ("passwords:\n    - '" + P[10] + "'\n", P[10]),
]

AWS_SECRET = _b64(40)
AZ_KEY = _b64(86) + "=="
YA29 = "ya29." + _fake(60)
RAND = _b64(43) + "="
OUTPUTS = [
    ("$ aws configure get aws_secret_access_key\n" + AWS_SECRET + "\n$ ls\n", AWS_SECRET),
    (
        "ubuntu@ip-10-0-0-5:~$ aws configure get default.aws_secret_access_key\n"
        + AWS_SECRET
        + "\n",
        AWS_SECRET,
    ),
    ("$ op item get prod-db --fields password\n" + P[11] + "\n", P[11]),
    ("$ op read op://Prod/db/password\n" + P[12] + "\n\n$ whoami\n", P[12]),
    ("$ kubectl get secret db -o jsonpath='{.data.password}' | base64 -d\n" + P[13] + "\n", P[13]),
    ("kubectl -n prod get secret api -o jsonpath='{.data.token}' | base64 --decode\n" + T[9], T[9]),
    ("$ echo $DB_PASSWORD\n" + P[14] + "\n", P[14]),
    ('$ echo "${STRIPE_SECRET_KEY}"\n' + P[15] + "\n", P[15]),
    ("$ printenv GITHUB_TOKEN\n" + P[16] + "\n", P[16]),
    ("$ vault kv get -field=password secret/db\n" + P[17] + "\n", P[17]),
    ("$ gcloud auth print-access-token\n" + YA29 + "\n", YA29),
    (
        '$ az storage account keys list -n acct\n[\n  {\n    "keyName": "key1",\n'
        '    "permissions": "FULL",\n    "value": "' + AZ_KEY + '"\n  }\n]\n',
        AZ_KEY,
    ),
    ("$ heroku auth:token\n " + U[0] + "\n", U[0]),
    ("$ gh auth token\n" + P[18] + "\n", P[18]),
    ("$ cat ~/.vault_pass\n" + P[19] + "\n", P[19]),
    ("PS C:\\> type C:\\secrets\\api_token.txt\n" + T[0][::-1] + "\n", T[0][::-1]),
    ("$ security find-generic-password -s deploy -w\n" + P[20] + "\n", P[20]),
    ("$ openssl rand -base64 32\n" + RAND + "\n", RAND),
    ("$ terraform output -raw db_password\n" + P[21] + "\n", P[21]),
    (
        "$ vault kv get secret/db\n====== Data ======\nKey         Value\n---         -----\n"
        "password    " + P[22] + "\nusername    app\n",
        P[22],
    ),
]

LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"
_TOKENS = {
    "phx": "phx_" + _fake(43),
    "phc": "phc_" + _fake(43),
    "atbb": "ATBB" + _fake(32) + _fake(8, "0123456789ABCDEF"),
    "refresh": "1//0" + _fake(90, URLSAFE),
    "cio": "cio" + _fake(32),
    "nvapi": "nvapi-" + _fake(64, URLSAFE),
    "fw": "fw_" + _fake(24),
    "csk": "csk-" + _fake(48, LOWER).lower(),
    "goog": "GOOG1E" + _fake(55, UPPER),
    "fcm": "AAAA" + _fake(7) + ":APA91b" + _fake(134, URLSAFE),
    "ddp": "ddp_" + _fake(36),
    "cfpat": "CFPAT-" + _fake(43),
    "mlsn": "mlsn." + "".join(_rng.choice("0123456789abcdef") for _ in range(64)),
}
PROVIDERS = [
    ("POSTHOG_KEY is " + _TOKENS["phx"], _TOKENS["phx"]),
    ("posthog.init('" + _TOKENS["phc"] + "')", _TOKENS["phc"]),
    ("remote: " + _TOKENS["atbb"], _TOKENS["atbb"]),
    ('{"refresh": "' + _TOKENS["refresh"] + '"}', _TOKENS["refresh"]),
    ("cargo login " + _TOKENS["cio"], _TOKENS["cio"]),
    ("model = ChatNVIDIA(api_key=" + _TOKENS["nvapi"] + ")", _TOKENS["nvapi"]),
    ("FIREWORKS=" + _TOKENS["fw"], _TOKENS["fw"]),
    ("client = Cerebras(" + _TOKENS["csk"] + ")", _TOKENS["csk"]),
    ("gsutil hmac: " + _TOKENS["goog"], _TOKENS["goog"]),
    ("fcm: " + _TOKENS["fcm"], _TOKENS["fcm"]),
    ("curl -H 'X-Postmark-Server-Token: " + U[1] + "' https://api.postmarkapp.com", U[1]),
    ("export CONSUL_HTTP_TOKEN=" + U[2] + "\r\nconsul members\r\n", U[2]),
    ("NOMAD_TOKEN=" + U[3] + " nomad job run web.nomad", U[3]),
    ('headers = {"X-Consul-Token": "' + U[4] + '"}', U[4]),
    ("SecretID:        " + U[5] + "\nDescription: bootstrap", U[5]),
    ("DENO_DEPLOY_TOKEN=" + _TOKENS["ddp"], _TOKENS["ddp"]),
    ("contentful: " + _TOKENS["cfpat"], _TOKENS["cfpat"]),
    ("MAILERSEND=" + _TOKENS["mlsn"], _TOKENS["mlsn"]),
]

GCS_SECRET = _b64(40)
BARE = _fake(16)
SHAPES = [
    ("GOOG1E" + _fake(55, UPPER) + " " + GCS_SECRET, GCS_SECRET),
    ("xfreerdp /v:10.0.0.5 /u:admin /p:" + P[23] + " /cert:ignore", P[23]),
    ("rdesktop -u admin -p " + P[24] + " 10.0.0.5", P[24]),
    ('CREATE USER app IDENTIFIED BY "' + P[25] + '";', P[25]),
    (f"ALTER USER system IDENTIFIED BY {BARE};", BARE),
    ("CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY '" + P[27] + "';", P[27]),
    ("ALTER ROLE app WITH LOGIN ENCRYPTED PASSWORD '" + P[28] + "';", P[28]),
    ("[smtp.gmail.com]:587 alerts@acme.io:" + P[29] + "\n", P[29]),
    ("smtp.sendgrid.net:587 apikey:" + P[30] + "\r\n", P[30]),
    ("uri ldap://ldap.acme.io/\nbindpw " + P[31] + "\nbase dc=acme\n", P[31]),
    ("[domain/acme]\nldap_default_authtok = " + P[32] + "\r\n", P[32]),
    ("PASSWORD ?= " + P[33] + " # dev only\n", P[33]),
    ("DB_PASS := " + P[34] + "\n", P[34]),
    ('<input type="password" name="pw" value="' + P[35] + '">', P[35]),
    ("<input value='" + P[36] + "' class=x type='password'/>", P[36]),
    (
        'array(2) {\n  ["user"]=>\n  string(5) "admin"\n  ["password"]=>\n  string(16) "'
        + P[37]
        + '"\n}\n',
        P[37],
    ),
    ("Array\r\n(\r\n    [user] => admin\r\n    [db_password] => " + P[38] + "\r\n)\r\n", P[38]),
    ('std::string secret{"' + P[39] + '"};', P[39]),
    ('const std::string api_token("' + T[1][::-1] + '");', T[1][::-1]),
    ('char password[] = "' + T[2][::-1] + '";', T[2][::-1]),
    ("echo '" + T[3][::-1] + "' > ~/.vault_pass.txt", T[3][::-1]),
    ("echo " + T[4][::-1] + " | npx wrangler secret put DB_PASSWORD", T[4][::-1]),
    ("echo -n " + T[5][::-1] + " | vercel env add DB_PASSWORD production", T[5][::-1]),
    ("printf %s " + T[6][::-1] + " | docker login -u ci --password-stdin ghcr.io", T[6][::-1]),
    ("git clone https://bob:" + T[7][::-1] + "@git.acme.io/org/repo.git", T[7][::-1]),
    ("Cookie: sessionid=" + T[8][::-1] + "; csrftoken=" + T[9][::-1], T[8][::-1]),
    ("the db password changed, it's now " + T[0][:12], T[0][:12]),
    ("rotated the api token, which is " + T[1][:20], T[1][:20]),
]

Q = [_fake(14) for _ in range(20)]
MORE = [
    (json.dumps({"Parameters": [{"ParameterKey": "Db" + "Password", PV: Q[0]}]}), Q[0]),
    ('{"name": "GITHUB_TOKEN", "type": "PLAINTEXT", "value": "' + Q[1] + '"}', Q[1]),
    ('{"variable":"API_KEY","secret":"' + Q[2] + '"}', Q[2]),
    ("api_tokens:\n- " + Q[3] + "\n- " + Q[4] + "\n", [Q[3], Q[4]]),
    ("> echo %DB_PASSWORD%\n" + Q[5] + "\n", Q[5]),
    ("PS C:\\> echo $env:API_TOKEN\n" + Q[6] + "\n", Q[6]),
    ("$ gcloud secrets versions access latest --secret=db-password\n" + Q[7] + "\n", Q[7]),
    ("$ heroku config:get DATABASE_PASSWORD -a app\n" + Q[8] + "\n", Q[8]),
    ("GRANT ALL ON *.* TO 'u'@'%' IDENTIFIED BY '" + Q[9] + "';", Q[9]),
    ("create user scott identified by " + Q[10] + ";", Q[10]),
    (f"rootpw {Q[11]}", Q[11]),
    (f'auto token = std::string{{"{Q[12]}"}};', Q[12]),
    ('QString password = QStringLiteral("' + Q[13] + '");', Q[13]),
    ("ansible-vault view --vault-password-file <(echo " + Q[14] + ") vars.yml", Q[14]),
    ("echo '" + Q[15] + "' > .vault_password", Q[15]),
    ("Set-Cookie: connect.sid=s%3A" + Q[16] + "; Path=/", Q[16]),
    ("echo " + Q[17] + " | wrangler pages secret put API_KEY", Q[17]),
    ("I changed the root password to " + Q[18], Q[18]),
    ("the prod db password, it's " + Q[19], Q[19]),
]

LEAKS = NESTED + OUTPUTS + PROVIDERS + SHAPES + MORE

PASS = [
    # UUIDs that are ids, `echo` of an ordinary variable, cookies without a secret
    "request 3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b took 12 ms",
    "token = 550e8400-e29b-41d4-a716-446655440000",
    '{"next_token": "550e8400-e29b-41d4-a716-446655440000", "items": []}',
    "$ echo $PATH\n/usr/local/bin:/usr/bin:/bin\n$ echo $HOME\n/home/dev\n",
    "$ echo $SHELL\n/bin/bash\n",
    "Cookie: theme=dark; lang=en",
    "Set-Cookie: theme=dark; Path=/",
    # SQL docs with placeholders, prose with "identified by"
    "CREATE USER app IDENTIFIED BY '<password>';",
    "ALTER USER scott IDENTIFIED BY :new_password;",
    "CREATE USER u IDENTIFIED BY %s",
    "Exceptions are identified by class instances.",
    "ALTER ROLE app WITH PASSWORD NULL;",
    # name/value pairs and lists that hold no secret
    '{"name": "LOG_LEVEL", "value": "debug"}',
    '{"Name": "DB_PASSWORD", "Value": "${DB_PASSWORD}"}',
    '{"Parameter": {"Name": "/app/region", "Type": "String", "Value": "eu-west-1"}}',
    "secrets = [f.text for f in corpus()]",
    "tokens = [t for t in tokens if t]",
    "api_keys: []",
    "tokens:\n  - name\n  - value\n",
    # commands whose output is ordinary
    "$ aws configure get region\neu-west-1\n",
    "$ kubectl get secrets\nNAME      TYPE     DATA   AGE\ndb        Opaque   2      3d\n",
    "$ cat README.md\nHello world\n",
    "$ echo $DB_PASSWORD\n\n$ ls\n",
    # config look-alikes
    "bindpw ${LDAP_BIND_PW}",
    "PASSWORD ?= $(shell cat .pw)",
    '<input type="password" name="pw" value="">',
    '<input type="text" name="user" value="admin42">',
    "  [user] => admin\n",
    'std::string name{"alice"};',
    "echo done > status.txt",
    "git clone https://github.com/org/repo.git",
    "smtp.acme.io:587 is the relay",
    "the password changed, it's now stored in the vault",
    # prefixed look-alikes
    "fw_version_major = 3",
    "csk-config-loader",
    "cio_client_version",
    "GOOGLE_APPLICATION_CREDENTIALS",
]


def _parts(secret: str | list[str]) -> list[str]:
    return secret if isinstance(secret, list) else [secret]


def _check(text: str, secret: str | list[str]) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, out
    for part in _parts(secret):
        assert part not in out, out
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text, "v": 1}).encode()).decode()
    content = json.loads(record)["content"]
    for part in _parts(secret):
        assert part not in content, record


@pytest.mark.parametrize("text,secret", LEAKS, ids=range(len(LEAKS)))
def test_masked_whole_as_text_and_inside_a_record(text: str, secret: str | list[str]) -> None:
    _check(text, secret)


@pytest.mark.parametrize("text,secret", LEAKS, ids=range(len(LEAKS)))
def test_masked_with_crlf_line_endings(text: str, secret: str | list[str]) -> None:
    _check(text.replace("\r\n", "\n").replace("\n", "\r\n"), secret)


@pytest.mark.parametrize("text", PASS)
def test_ordinary_look_alikes_pass_unchanged(text: str) -> None:
    assert redact(text) == text
    assert redact(text.replace("\n", "\r\n")) == text.replace("\n", "\r\n")
    blob = json.dumps({"content": text}).encode()
    assert redact_blob(blob) == blob


def test_every_row_of_the_output_table_masks_what_its_command_printed() -> None:
    """Each row's own sample command, followed by a fake, masks the fake: the table is data,
    and a row that catches nothing is a bug."""
    samples = [
        "aws configure get aws_secret_access_key",
        "aws secretsmanager get-secret-value --secret-id x --query SecretString --output text",
        "aws ssm get-parameter --name /x --with-decryption --query Parameter.Value --output text",
        "aws ecr get-login-password --region eu-west-1",
        "aws codeartifact get-authorization-token --domain d "
        "--query authorizationToken --output text",
        "op read op://vault/item/password",
        "kubectl create token builder",
        "echo $API_TOKEN",
        "cat /run/secrets/db_password",
        "vault print token",
        "gcloud secrets versions access latest --secret=db",
        "az account get-access-token --query accessToken -o tsv",
        "heroku config:get DATABASE_PASSWORD",
        "glab auth token",
        "pass show prod/db",
        "security find-generic-password -a me -s svc -w",
        "secret-tool lookup service db",
        "bw get password github",
        "openssl rand -hex 32",
        "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'",
        "head -c 32 /dev/urandom | base64",
        "wg genkey",
        "docker swarm join-token -q worker",
        "doppler secrets get DB_PASSWORD --plain",
        "terraform output -raw admin_password",
        "docker secret inspect --format '{{.Spec}}' db",
    ]
    assert len(samples) == len(PRINTS_SECRET)  # one sample per row, in the table's order
    checked = 0
    for (keywords, _), sample in zip(PRINTS_SECRET, samples, strict=True):
        secret = _pw()
        out = redact(f"$ {sample}\n{secret}\n$ exit\n")
        assert secret not in out, (keywords, out)
        checked += 1
    assert checked == len(PRINTS_SECRET)


def test_a_value_is_not_paired_with_the_name_of_the_next_list_item() -> None:
    text = "env:\n- name: LOG_LEVEL\n  value: debug42x\n- name: DB_PASSWORD\n  valueFrom: {}\n"
    assert redact(text) == text
    masked = (
        "- name: DB_PASSWORD\n  value: [REDACTED:password:0000]\n- name: PORT\n  value: '8080'\n"
    )
    assert redact(masked) == masked


@pytest.mark.parametrize(
    "record,secrets",
    [
        ({"Name": "/prod/db", "Type": "SecureString", "Value": P[0]}, [P[0]]),
        ({"Parameter": {"Type": "SecureString", "Name": "/x", "Value": P[1]}}, [P[1]]),
        ({"tokens": [T[0], T[1]], "names": ["alpha", "beta"]}, [T[0], T[1]]),
        ({"key": "DB_PASSWORD", "val": P[2]}, [P[2]]),
        ([{PV: P[3], "ParameterKey": "MasterUser" + "Password"}], [P[3]]),
        ({"SecretString": json.dumps({"password": P[4], "user": "app"})}, [P[4]]),
    ],
)
def test_a_stored_json_record_of_these_shapes_is_masked_and_stays_valid(
    record: object, secrets: list[str]
) -> None:
    for blob in (json.dumps(record), json.dumps(record, indent=2)):
        out = redact_blob(blob.encode()).decode()
        assert all(s not in out for s in secrets), out
        assert json.loads(out)
    plain = {"Name": "/app/region", "Type": "String", "Value": "eu-west-1", "names": ["a", "b"]}
    assert redact_blob(json.dumps(plain).encode()) == json.dumps(plain).encode()


def test_a_config_key_after_a_label_or_mid_line_is_read_but_prose_is_not() -> None:
    secret = _pw()
    for text in (f"Bash failed: bindpw {secret} yyyy", f"bindpw {secret}\r\n", f"rootpw {secret}"):
        assert secret not in redact(text), text
    prose = "set the bindpw option in nslcd.conf"
    assert redact(prose) == prose
