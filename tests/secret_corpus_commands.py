"""More fakes for the corpus: credentials a command takes by position or by an odd flag,
server configurations (Apache, ipsec.secrets, ERB, XML settings, short CSV columns), login
forms, prose that gives a user and a password, and secrets inside base64 layers, YAML block
scalars and wrapped table cells. Generated, never real."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from tests.secret_corpus import ALNUM, B64, UPPER_ALNUM, Gen


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _dockerconfigjson(user: str, pw: str) -> str:
    auth = _b64(f"{user}:{pw}")
    return _b64(json.dumps({"auths": {"registry.acme.io": {"auth": auth}}}))


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    akia = "AKIA" + t(UPPER_ALNUM, 16)
    head = t(ALNUM, 20)  # the first line of a value wrapped onto two (its rest is the fake)
    return [
        # A. commands: positions and odd flags (a table of them, `redaction/commands.py`)
        ("rabbitmq-add-user", lambda s: f"rabbitmqctl add_user deploy {s}", pw()),
        ("rabbitmq-change-password", lambda s: f"sudo rabbitmqctl change_password bob '{s}'", pw()),
        (
            "minio-alias",
            lambda s: f"mc alias set prod https://s3.acme.io:9000 {akia} {s}",
            t(B64, 40),
        ),
        (
            "net-use-password-first",
            lambda s: f"net use \\\\fs01\\backup {s} /user:svc /persistent:no",
            pw(),
        ),
        ("mysqladmin-password", lambda s: f"mysqladmin -u root -pOld password {s}", pw()),
        (
            "ipmitool-P",
            lambda s: f"ipmitool -I lanplus -H 10.0.0.9 -U admin -P {s} power status",
            pw(),
        ),
        ("7z-attached-p", lambda s: f"7z x -p{s} backup.7z", pw()),
        (
            "sc-config-password",
            lambda s: f'sc.exe config AcmeSvc obj= ".\\svc" password= "{s}"',
            pw(),
        ),
        ("nmcli-wifi", lambda s: f"nmcli dev wifi connect AcmeGuest password {s}", pw()),
        ("snmp-community-walk", lambda s: f"snmpwalk -v2c -c {s} 10.0.0.1 system", t(ALNUM, 14)),
        # B. configurations
        ("apache-setenv", lambda s: f"SetEnv DB_PASSWORD {s}", pw()),
        ("ipsec-psk", lambda s: f'10.1.0.1 10.2.0.1 : PSK "{s}"', t(ALNUM, 24)),
        ("ipsec-rsa-passphrase", lambda s: f'vpn.acme.io : RSA vpn-key.pem "{s}"', pw()),
        ("erb-fetch-default", lambda s: f'password: <%= ENV.fetch("DB_PASSWORD", "{s}") %>', pw()),
        (
            "dockerconfigjson",
            lambda s: f"data:\n  .dockerconfigjson: {s}\ntype: kubernetes.io/dockerconfigjson",
            _dockerconfigjson("ci", pw()),
        ),
        ("xml-add-key", lambda s: f'<add key="SmtpPassword" value="{s}" />', pw()),
        ("xml-property", lambda s: f'<property name="jdbc.password" value="{s}"/>', pw()),
        (
            "xml-setting-value",
            lambda s: f'<setting name="ApiToken"><value>{s}</value></setting>',
            t(ALNUM, 32),
        ),
        ("csv-pwd-column", lambda s: f"login,pwd,role\nops,{s},admin\n", pw()),
        ("csv-passwd-column", lambda s: f"user;passwd\nbackup;{s}\n", pw()),
        # C. prose, forms, layers
        ("prose-login-slash", lambda s: f"login with admin / {s} on the staging box", pw()),
        ("prose-user-pass", lambda s: f"user: bob pass: {s}", pw()),
        ("prose-creds-colon", lambda s: f"creds are bob:{s} until Friday", pw()),
        (
            "selenium-send-keys",
            lambda s: f'driver.find_element(By.ID, "password").send_keys("{s}")',
            pw(),
        ),
        ("keychain-set", lambda s: f"keychain.set('acme', 'deploy', '{s}')", pw()),
        ("base64-env-file", lambda s: f"  .env: {s}", _b64(f"API_TOKEN={t(ALNUM, 32)}\n")),
        (
            "yaml-block-wrapped",
            lambda s: f"auth:\n  client_secret: |\n    {head}\n    {s}\n",
            t(ALNUM, 20),
        ),
        (
            "psql-wrapped-cell",
            lambda s: f" name | api_key\n------+---------\n ci   | {head}+\n      | {s}\n",
            t(ALNUM, 20),
        ),
    ]
