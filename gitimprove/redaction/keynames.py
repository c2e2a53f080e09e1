"""What a key's name says: whether it names a credential (strongly, weakly or not at all), in
which words, and whether a value is only the key's own name again (values.py judges values)."""

from __future__ import annotations

from gitimprove.redaction.engine import compiled


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- key names ---------------------------------------------------------------------------

_CAMEL = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+"
_STRONG = words(
    "password passwd passphrase pwd pw pass secret secrets token apikey credential credentials "
    "creds pin pincode passcode privatekey clientsecret accesstoken authtoken refreshtoken bearertoken sessiontoken "
    "accountkey masterkey signingkey secretkey accesskey encryptionkey sharedaccesskey "
    # LDAP clients' and servers' bind passwords (nslcd, slapd, sssd)
    "bindpw rootpw authtok"
)
_PAIRS = words(
    "api_key access_key secret_key private_key client_secret account_key master_key "
    "signing_key encryption_key shared_access_key auth_token session_key session_secret "
    # yarn's `npmAuthIdent: "user:password"`
    "auth_ident"
)
# (not "session": a session id names a session, it grants nothing)
_WEAK = words("key auth sig signature cookie dsn salt")
# a key naming something about the credential, not the credential itself
ABOUT = words(
    "length len size name names id ids type types file files path paths dir url uri endpoint "
    "field prompt policy hint label count counts max min timeout expiry expires expiration ttl "
    "format env var header mode enabled required rule rules regex pattern hash hashed strength "
    "reset changed manager helper provider source index kind class prefix suffix limit version "
    "algorithm algo scheme usage budget tokenizer tokens location ref store storage chars "
    "charset alphabet param params parameter attr attribute column col input widget selector "
    "option arg argument constant const placeholder variant variants"
)
NOT_SECRET_FIRST = words("csrf xsrf public publishable pub")
# a pagination cursor or a fingerprint: names a position or a public digest, grants nothing
NOT_SECRET_ANY = words(
    "next page pagination continuation cursor resume sync fingerprint fingerprints checksum "
    "digest sha sha1 sha256 sha512 md5 etag uuid idempotency cache"
)
# `bypass`, `compass`: words ending in "pass" that name no password
_NOT_PASS = ("bypass", "compass", "encompass", "surpass", "overpass", "underpass", "trespass")
_PASS_ENDINGS = ("password", "passwd", "passphrase", "pass", "pwd", "passcode", "token", "secret")


# a path of types or classes, each part capitalised (Pygments' `Token.Name.Builtin`, an
# enum's `Secret.Kind.Default`): what the path names is its last part, not its first
_QUALIFIED = r"[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)*\.([A-Z][A-Za-z0-9]*)"


def key_strength(key: str) -> str | None:
    """'strong' when the key names a credential (`DB_PASSWORD`, `clientSecret`, `api-key`),
    'weak' when it may (`key`, `auth`, `sig`), None otherwise (`author`, `token_count`)."""
    qualified = compiled(_QUALIFIED, 0).fullmatch(key.strip(" \t'\"`:=>,|?"))
    if qualified:  # `Token.Name.Builtin`: a type's path names its last part
        key = qualified.group(1)
    parts = head_words(key)
    if not parts or parts[-1] in ABOUT or parts[0] in NOT_SECRET_FIRST:
        return None
    if any(w in NOT_SECRET_ANY for w in parts) or parts in (["pwd"], ["oldpwd"]):
        return None  # the shell's working directory is PWD
    if parts[-2:] in (["signature", "value"], ["digest", "value"]):
        return None  # XML-DSig's `<SignatureValue>`, `<DigestValue>`: public, verifiable
    if parts in (["pass"], ["pw"]):
        return "weak"  # "tests pass: 42/42" is prose; `db_pass = x` names a password
    if any(names_credential(w) for w in parts):
        return "strong"
    joined = "_" + "_".join(parts) + "_"
    if any(f"_{p}_" in joined for p in _PAIRS):
        return "strong"
    if parts[-1] in _WEAK or parts[0] in _WEAK:
        return "weak"
    return None


def key_words(key: str) -> list[str]:
    return [w.lower() for w in compiled(_CAMEL, 0).findall(key)]


def head_words(key: str) -> list[str]:
    """The words of what a key names: those before `to` or `for` (`keyVaultToStoreSecrets`,
    `path_to_key`, `vault_for_tokens` name a vault and a path; the rest says what for)."""
    parts = key_words(key)
    cut = next((n for n, w in enumerate(parts) if n and w in ("to", "for")), len(parts))
    return parts[:cut]


def names_credential(word: str) -> bool:
    """`password`, `SSHPASS`, `DBPASS`, `ADMINPWD`, `pincode`: a word naming a secret."""
    if word in _STRONG:
        return True
    return word.endswith(_PASS_ENDINGS) and not word.endswith(_NOT_PASS) and len(word) > 3


def kind_of(key: str) -> str:
    low = key.lower()
    if any(w in low for w in ("pass", "pwd", "pw")) or "pin" in key_words(key):
        return "password"
    return "credential"


_CREDENTIAL_WORDS = words(
    "password passwd passphrase pwd pw pass secret secrets token tokens key keys apikey "
    "credential credentials creds auth"
)


def names_itself(key: str, value: str) -> bool:
    """A value that is a name, not a secret: the key's own word or a credential word
    (`PASSWORD_FIELD = "password"`, `password_field = "password1"`, `self.password =
    password`, `api_key_header = "x-api-key"`)."""
    letters = "".join(c for c in value.lower() if c.isalpha())
    if not letters or len(value) > 40:
        return False
    if any(c in "!@#$%^&*+=?~" for c in value) and any(c.isdigit() for c in value):
        return False  # a name has no `!` or `^` beside digits: `j7Pw6~d+` holds `pw` by chance
    parts = key_words(key)
    if letters in parts or letters == "".join(parts):
        return True
    pieces = [w for w in compiled(r"[a-z]+", 0).findall(value.lower())]
    return (
        any(w in _CREDENTIAL_WORDS for w in pieces)  # (`B&a&2G*L` names nothing: a password)
        and all(w in _CREDENTIAL_WORDS or len(w) <= 1 for w in pieces)
        and (sum(c.isdigit() for c in value) <= 2)
    )
