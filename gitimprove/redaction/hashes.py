"""Password hashes, and the key id of a Google service account.

A password hash is a secret for our purposes: with it a password can be guessed offline, and
an `/etc/shadow` line or an htpasswd entry in a record gives an attacker exactly that. The
formats are recognised by their own marks, wherever they stand: crypt(3)'s `$1$`, `$5$`,
`$6$`, `$y$`, `$apr1$`, bcrypt's `$2b$12$…`, `$argon2id$…`, scrypt and PBKDF2 strings
(Django's `pbkdf2_sha256$…` too), LDAP's `{SSHA}…`, MySQL's `*<40 hex>`, PostgreSQL's `md5…` and
`SCRAM-SHA-256$…`, NTLM hashes in a pwdump line. A service account's JSON names its key
by `private_key_id` (40 hex digits): an id, but one that, with the key beside it, signs as
the account, so it goes with the key.
"""

from __future__ import annotations

from gitimprove.redaction.engine import SPECIFIC, Rule

_B64 = r"[./A-Za-z0-9+]"
RULES: list[Rule] = [
    Rule(
        "password-hash",
        r"(?<![\w$])\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}",
        ("$2",),
        priority=SPECIFIC,
    ),
    Rule(
        "password-hash",
        r"(?<![\w$])\$(?:1|5|6|md5|apr1|sha1|y|gy|7)\$(?:rounds=\d+\$)?(?:[\w./=-]{1,64}\$){1,2}"
        r"[./A-Za-z0-9]{20,}",
        ("$1$", "$5$", "$6$", "$md5", "$apr1$", "$sha1$", "$y$", "$gy$", "$7$"),
        priority=SPECIFIC,
    ),
    Rule(
        "password-hash",
        r"(?<![\w$])\$(?:argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?|bcrypt-sha256)\$[\w.,=$/+-]{16,}",
        ("$argon2", "$scrypt", "$pbkdf2", "$bcrypt"),
        priority=SPECIFIC,
    ),
    Rule(
        "password-hash",
        r"(?<![\w$])(?:pbkdf2_sha\d+|argon2|bcrypt_sha256|scrypt)\$[\w.,=$/+-]{24,}",
        ("pbkdf2_", "argon2$", "bcrypt_", "scrypt$"),
        priority=SPECIFIC,
    ),
    Rule(
        "password-hash",
        r"(?i)\{(?:S?SHA(?:256|384|512)?|S?MD5|CRYPT|PBKDF2[\w-]*|ARGON2|BCRYPT)\}"
        r"[A-Za-z0-9+/=.$]{8,}",
        ("{sha", "{ssha", "{md5", "{smd5", "{crypt", "{pbkdf2", "{argon2", "{bcrypt"),
        priority=SPECIFIC,
    ),
    Rule(
        # MySQL's mysql_native_password, PostgreSQL's md5 and SCRAM verifiers
        "password-hash",
        r"(?<![\w*])\*[0-9A-F]{40}\b|\bmd5[0-9a-f]{32}\b"
        r"|\bSCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+",
        ("*", "md5", "scram-sha-256$"),
        priority=SPECIFIC,
    ),
    Rule(
        # a pwdump / secretsdump line: user:rid:LM hash:NT hash:::
        "password-hash",
        r"(?m)^[^:\s]{1,64}:\d{1,10}:((?:[0-9a-fA-F]{32}):(?:[0-9a-fA-F]{32})):::",
        (":::",),
        priority=SPECIFIC,
    ),
    Rule(
        "gcp-private-key-id",
        r"\\?[\"']?private_key_id\\?[\"']?\s*[:=]\s*\\?[\"']?([0-9a-f]{40})\b",
        ("private_key_id",),
        priority=SPECIFIC,
    ),
]
