"""The classes a hostile review found getting through (or masked wrongly), each with cases
beyond the ones it named: provider families without their names, colour codes, name/value
pairs, compound key names, passphrases, prose, XML / Dockerfile / CLI shapes, lookalike and
invisible characters, wrapped tokens and JSON numbers must be masked, as raw text and inside
a stored JSON record; pagination cursors, fingerprints, documentation keys, ids, hashes,
lexer tokens and base64 of prose must pass unchanged. (Fakes, never real secrets.)"""

from __future__ import annotations

import json

import pytest

from gitimprove.redaction import redact, redact_blob
from tests.linear import within_linear_time

LEAKS = [
    # compound keys
    "SSHPASS='Hunter2xyz!' sshpass -e ssh host",
    "export DBPASS=Hunter2xyz!",
    "set ADMINPWD=Hunter2xyz",
    "ROOTPASS: Hunter2xyz",
    "mysql_pwd = 'abcDEF123'",
    "REDISPASS=Qw3rty987",
    "SMTPPASS=mailPass42",
    "LDAPPASSWD=Ldap2024x",
    "appPasswd: 'Tr0ub4dor'",
    "masterPwd=Tr0ub4dor3",
    # passphrases
    "password: correcthorsebatterystaple",
    "passphrase: correct horse battery staple",
    "db_password: supersecretvalue",
    "PASSWORD=correcthorsebatterystaple",
    "password = 'correcthorse'",
    # prose
    "the password hunter2xyz is wrong",
    "my password is Hunter2xyz",
    "password was 'S3cret!'",
    'the password "letmein99" was rejected',
    "Password for admin is P@ssw0rd1",
    "login with password Tr0ub4dor&3",
    "pin is 483920",
    "the passcode 8472910 expired",
    "use password `s3cr3t-Pass` for staging",
    "password for root: Hunter2xyz",
    "the new password is: Hunter2xyz",
    "I set the password to Hunter2xyz yesterday",
    "Password changed to Hunter2xyz",
    # xml/env/cli
    "<password>Hunter2xyz!</password>",
    "<db:password>Hunter2xyz</db:password>",
    "<Password>correcthorsebattery</Password>",
    '<add key="ApiKey" value="q8Wv2Lk9Zr4Tm1Xs"/>',
    '<add key="Password" value="Hunter2xyz"/>',
    "<key>Password</key>\n<string>Hunter2xyz</string>",
    "ENV DB_PASSWORD Hunter2xyz!",
    "ENV API_TOKEN q8Wv2Lk9Zr4Tm1Xs",
    "set -x GITHUB_TOKEN q8Wv2Lk9Zr4Tm1Xs9f",
    "setx API_KEY q8Wv2Lk9Zr4Tm1Xs",
    "gh secret set API_TOKEN --body q8Wv2Lk9Zr4Tm1Xs",
    "gh secret set API_TOKEN -b'q8Wv2Lk9Zr4Tm1Xs'",
    'gh secret set X --body="Hunter2xyz" --repo a/b',
    "az login -u me@x.com -p Hunter2xyz!",
    "az login --service-principal -u 123 --password 'Hunter2xyz' --tenant t",
    "sqlplus scott/tiger@orcl",
    "sqlplus system/Manager1 as sysdba",
    "sqlplus -s app/Secr3tPw@//db:1521/ORCL",
    "--password=Hunter2xyz!",
    "--password Hunter2xyz!",
    "mysql -uroot -pHunter2xyz! db",
    "mysql -h db -P 3306 -u root -p'S3cret!' app",
    "mysqldump -u root -pS3cret db > x.sql",
    "mysql --user=root --password=S3cretPw db",
    "mysql -u root --password S3cretPw",
    "keytool -list -keystore k.jks -storepass Chang3dPw",
    "openssl pkcs12 -in a.p12 -passin pass:Hunter2xyz",
    "zip -P Hunter2xyz a.zip f",
    "ldapsearch -x -D cn=admin -w Hunter2xyz -b dc=x",
    "PASSWORD＝Hunter2xyz!",
    "password：Hunter2xyz!",
    "ＰＡＳＳＷＯＲＤ=Hunter2xyz!",
    "api_key\uff1d'q8Wv2Lk9Zr4Tm1Xs'",
    "\x1b[32mPASSWORD\x1b[0m=Hunter2Secret!",
    "\x1b[1;31mpassword:\x1b[0m Hunter2xyz",
    "\x1b[33mAPI_KEY\x1b[39m=\x1b[1mq8Wv2Lk9Zr4Tm1Xs\x1b[22m",
    "ghp_k3Jd9QmZ2x\u200cW7pL4vB8nR1tY6cF5hG0sA2eU4",
    "AKIA\u200bIOSFODNN7ABCDEFG",
    "sk_live_\u00ad51Hk3Jd9QmZ2xW7pL4vB8nR1tY6cF5h",
    "token: ghp_k3Jd9QmZ2xW7pL4vB8nR1tY6\ncF5hG0sA2eU4",
    "GITHUB_TOKEN=ghp_k3Jd9Qm\\\n  Z2xW7pL4vB8nR1tY6cF5hG0sA2eU4",
    "xoxb-123456789012-1234567890123-\nAbCdEfGhIjKlMnOpQrStUvWx",
    "- name: DB_PASSWORD\n  value: s3cr3tValue9",
    '- name: API_TOKEN\n  value: "q8Wv2Lk9Zr4Tm1Xs"',
    "env:\n  - name: PGPASSWORD\n    value: 'correcthorse'",
    '{"Name": "api_key", "Value": "q8Wv2Lk9Zr4Tm1Xs"}',
    '{"Key":"password","Value":"Tr0ub4dor&3x"}',
    '{"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "Hunter2xyz", "Version": 3}}',
    '"environment": [{"name": "SECRET_KEY", "value": "q8Wv2Lk9Zr4Tm1Xs"}]',
    '{"pin": 48213991}',
    '{"password": 12345678}',
    '{"otp_secret": 93847561}',
    "pin: 4821",
    '{"user": {"pin": 4821}}',
    "nuget push pkg.nupkg -k oy2a4bxq7kfz3mdn5ycw6lj2rhp8tuvgsqe9ix1o0wbkd6",
    "nuget push a.nupkg -ApiKey 7f3c9a1e-4b2d-8f6a-0c5e-9b3d7a1f4c8e -Source x",
    "nuget.exe push a.nupkg -k 7f3c9a1e4b2d8f6a0c5e9b3d7a1f4c8e",
    "Authorization: SSWS 00QCjAl4MlV-WPXM8rZ3fEjvR5qxDcjCyAbJ6T9uGm",
    'headers={"Authorization": "SSWS 00QCjAl4MlV-WPXM8rZ3fEjvR5qxDcjCyAbJ6T9uGm"}',
    "echo dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c | docker login -u me --password-stdin",
    "client = Client('AC8f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c', '5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a')",
    "twilio login AC8f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c 5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a",
    "aws_session_token = FwoGZXIvYXdzEBYaDH3k9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4jQ8zX3kM5pIqmQIIhPx9k2LmP4vN7rT1wQz3yB6cF5hJ0sA2eU4g",
    "IQoJb3JpZ2luX2VjEHQaCXVzLWVhc3QtMSJHMEUCIQD8x9k2LmP4vN7rT1wQz3yB6cF5hJ0sA2eU4gR8tY1iOwIgK3mN9pL2xW7vB4nR1tY6cF5hG0sA2eU4jQ8zX3kM5pIqmQIIhP",
]

PASS = [
    "we pin numpy==1.26.4 in requirements",
    "pin v1.2.3 of the action",
    "password for the account is required",
    "password: Optional[str] = None",
    "PWD=/home/user/project",
    "export DB_PASSWORD API_TOKEN",
    "the password policy v2 requires 12 characters",
    "token: 'identifier'",
    "SyntaxError: Unexpected token '}'",
    'Unexpected token, expected "," (12:4)',
    "error TS1005: ';' expected. token: 'semicolon'",
    "{ type: 'Keyword', token: 'const' }",
    "page_token=CiAKGjBpNDd2Nmp2Zml2cXRi",
    "nextPageToken: CiAKGjBpNDd2Nmp2Zml2cXRiEgIIAg",
    '"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRiEgIIAg"',
    "continuation_token = eyJvZmZzZXQiOjEwMH0",
    "cursor=dXNlcjpXMDdRQ0RQQTQ",
    '{"cursor": "dXNlcjpXMDdRQ0RQQTQxMjM0NTY3"}',
    "NextToken: AQICAHhk9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4",
    "pageToken=BHJ4k9QmZ2xW7pL4vB8nR1tY6cF5h",
    "256 SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 user@host (ED25519)",
    "ED25519 key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8.",
    "The key fingerprint is:\nSHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 me@host",
    "key: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "AKIAIOSFODNN7EXAMPLE",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "commit 3f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d",
    "HEAD is now at 3f2a9c1 fix tests",
    "cache_key: 3f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d",
    '"sha": "3f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d"',
    "parent_token_id = 3f2a9c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d",
    "key = sha256(x).hexdigest() # e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "id: 123e4567-e89b-12d3-a456-426614174000",
    "token = 550e8400-e29b-41d4-a716-446655440000",
    '"request_id": "550e8400-e29b-41d4-a716-446655440000"',
    "idempotency_key=550e8400-e29b-41d4-a716-446655440000",
    "X-Request-Id: 550e8400-e29b-41d4-a716-446655440000",
    "session key 550e8400-e29b-41d4-a716-446655440000",
    "data: SGVsbG8gd29ybGQsIHRoaXMgaXMgb3JkaW5hcnkgdGV4dA==",
    "auth_message = 'SGVsbG8gd29ybGQsIHRoaXMgaXMgb3JkaW5hcnkgdGV4dA=='",
    "token SGVsbG8gd29ybGQsIHRoaXMgaXMgb3JkaW5hcnkgdGV4dA==",
    "PWD=/home/user/project",
    "OLDPWD=/tmp",
    "password: str",
    "def login(password: str) -> None:",
    "password = getpass.getpass()",
    "password = request.form['password']",
    "if password is None:",
    "the password field is required",
    "Password Reset** (seemed complete)",
    "password reset link expired",
    "compass=north1",
    "--bypass-cache",
    "--no-bypass xyz123",
    "token = next_token",
    "pin = 17",
    "GPIO pin 17 is high",
    "See Test 1: Password Reset",
    "tokens: 19831",
    "max_tokens=4096",
    "The password must be at least 8 characters",
    "password hashing uses bcrypt2 by default",
    "- name: LOG_LEVEL\n  value: debug",
    "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password\n- name: HOST\n  value: db.internal",
    '{"Name": "region", "Value": "us-east-1"}',
    '<add key="LogLevel" value="Debug"/>',
    "ENV PATH /usr/local/bin:$PATH",
    "ENV NODE_ENV production",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\nRTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD\nVQQDExlCYWx0aW1vcmUgQ3liZXJUcnVzdCBSb290MB4XDTAwMDUxMjE4NDYwMFoX\n-----END CERTIFICATE-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host",
    "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "very long line of words that goes on and on and on and on and on to the edge\nwrapped continuation of the text here",
    "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH\nIJKLMNOP",
]


@pytest.mark.parametrize("text", LEAKS)
def test_masked_as_text_and_inside_a_record(text: str) -> None:
    out = redact(text)
    assert "[REDACTED:" in out, out
    assert redact(out) == out
    record = redact_blob(json.dumps({"content": text, "v": 1}).encode()).decode()
    assert "[REDACTED:" in json.loads(record)["content"], record
    stored = redact_blob(text.encode()).decode()
    assert "[REDACTED:" in stored, stored


@pytest.mark.parametrize("text", PASS)
def test_ordinary_text_passes_unchanged(text: str) -> None:
    assert redact(text) == text
    assert redact_blob(text.encode()).decode() == text
    record = json.dumps({"content": text, "v": 1})
    assert redact_blob(record.encode()).decode() == record


def test_a_wrapped_token_is_masked_whole() -> None:
    token = "ghp_" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4"
    for sep in ("\n", "\r\n", "\\\n", "\\\n    "):
        for at in (6, 18, 30):
            out = redact(f"remote: bad credentials {token[:at]}{sep}{token[at:]} (401)")
            assert token[:at][-6:] not in out and token[at:][:6] not in out, (sep, at, out)


def test_a_pem_body_without_its_begin_line_is_masked() -> None:
    import base64
    import random

    rng = random.Random(3)
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(600))).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    for text in (
        "\n".join(lines[2:]) + "\n-----END PRIVATE KEY-----",  # the tail after a cut
        "\n".join(lines[1:5]),  # lines from the middle
        "\n".join(line[:50] for line in lines[:4]),  # re-wrapped narrower
        "MII" + body[3:200],  # one line of DER
    ):
        out = redact(text)
        assert not any(line[8:24] in out for line in lines), out
    cert = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"
    assert redact(cert) == cert  # public: a certificate is not a secret


def test_json_numbers_under_secret_keys_become_markers_and_stay_json() -> None:
    doc = {"user": "ops", "pin": 48213991, "password": 123456789, "port": 5432, "n": [1, 2]}
    out = json.loads(redact_blob(json.dumps(doc).encode()))
    assert out["pin"].startswith("[REDACTED:") and out["password"].startswith("[REDACTED:")
    assert (out["user"], out["port"], out["n"]) == ("ops", 5432, [1, 2])


HOSTILE = [
    "\x1b[31m" * 5000 + "password=" + "a" * 100,
    ("x" * 45 + "\n") * 3000,
    "tok\u00ad" * 8000,
    ("\\\n" + "a" * 10) * 3000,
    "name: password\n" * 3000 + "value: x",
    "<password>" * 5000,
    "okta " * 8000,
]


@pytest.mark.slow  # minutes of CPU in all; CI runs them (-m slow)
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_views_and_shapes_stay_linear_on_hostile_text(text: str) -> None:
    ok, why = within_linear_time(redact, text)
    assert ok, why


def test_a_certificates_lines_that_start_like_der_stay() -> None:
    """A certificate's body wrapped at 64 can put its public key's header (`MIIBIjAN…`,
    `MIIBCgKCAQEA…`) at the start of a line far below the BEGIN line; it is public, as is
    a public key's or a certificate's DER alone. A private key's DER line is masked."""
    import base64
    import random

    rng = random.Random(14)

    def b64(n: int) -> str:
        return base64.b64encode(bytes(rng.randrange(256) for _ in range(n))).decode()

    spki = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
    rsa_public = "MIIBCgKCAQEA"
    certificate = "MIIEKjCCAxKgAwIBAgIE"
    for head in (spki, rsa_public, certificate):
        line = head + b64(48)[: 64 - len(head)]
        lines = [b64(48) for _ in range(12)] + [line] + [b64(48) for _ in range(6)]
        cert = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"
        assert redact(cert) == cert
        assert redact(line) == line
    private = "MIIEpAIBAAKCAQEA" + b64(60)
    assert private[20:40] not in redact(private)
