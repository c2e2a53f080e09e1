"""Wallet keys: a cryptocurrency wallet's private key is the wallet.

- BIP-32 extended private keys (`xprv…`, `tprv…`, `yprv…`, `zprv…` and their multisig
  forms): a prefix no word has and 107 more base58 characters, masked wherever they stand
  (the public `xpub…` forms are left alone);
- Wallet Import Format keys (`5H…`, `5J…`, `5K…`, `Kw…`–`Kz…`, `L1…`–`L5…`): 51 or 52 base58
  characters whose last four bytes are the double SHA-256 checksum of the rest, which no
  identifier or word passes by chance; or, beside a word naming a wallet's key (`WIF`,
  `private key`, `import`), any such run of mixed letters and digits;
- a key given as 64 hex digits (Ethereum, Bitcoin, Nostr, a validator's) or as base58 of 64
  bytes (Solana) after a word naming a private, secret or signing key on the same line
  (`private key: 0x…`, `--private-key 0x…`, `"privateKey": "…"`); a digest after any other
  word (`sha256: …`, `commit …`, `tx id: …`) is not one.
"""

from __future__ import annotations

import hashlib
import re

from gitimprove.redaction.engine import SPECIFIC, Rule

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58C = "[1-9A-HJ-NP-Za-km-z]"


def b58check(text: str) -> bool:
    """Whether `text` is base58 with a valid double-SHA-256 checksum."""
    n = 0
    for c in text:
        i = _B58.find(c)
        if i < 0:
            return False
        n = n * 58 + i
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(text) - len(text.lstrip("1"))) + raw
    if len(raw) < 5:
        return False
    body, check = raw[:-4], raw[-4:]
    return hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == check


# a word naming a wallet's key on the same line, before the key
_WALLET_WORD = re.compile(
    r"(?i)(?:\bwif\b|priv(?:ate)?[ _.-]?key|privkey|secret[ _.-]?key|wallet|importprivkey"
    r"|\bimport\b|sweep|signing[ _.-]?key)"
)


def _check_wif(secret: str, m: re.Match[str]) -> bool:
    if b58check(secret):
        return True
    line = m.string.rfind("\n", 0, m.start()) + 1
    before = m.string[line : m.start()]
    mixed = any(c.isdigit() for c in secret) and any(c.islower() for c in secret)
    return mixed and any(c.isupper() for c in secret) and _WALLET_WORD.search(before) is not None


# words naming a key that is a private one; `public key`, `pubkey` and digests are not
_KEY_WORD = (
    r"(?i:priv(?:ate)?[ _.-]?key|privkey|priv_?hex|secret[ _.-]?key|signing[ _.-]?key"
    r"|wallet[ _.-]?key|validator[ _.-]?key|nsec|(?<![\w-])sk(?![\w-])|seed[ _.-]?hex|keypair)"
)
# the key word, then at most 40 characters on the line (`": "`, ` is `, `=0x`)
_AFTER = r"(?:[^\n0-9a-fA-F]|[0-9a-fA-F](?![0-9a-fA-F]{10})){0,40}?"

# a keypair file's 64 bytes as a JSON array (Solana's `id.json`), beside a word naming it
# (a terminal may have wrapped it anywhere, inside a number too: blanks do not count)
_BYTES = r"\[[\d,\s]{127,2000}\]"
_KEYPAIR_WORD = re.compile(
    r"(?i)keypair|key[ _-]?pair|secret[ _-]?key|private[ _-]?key|wallet|id\.json|solana"
)


def _check_bytes(secret: str, m: re.Match[str]) -> bool:
    numbers = "".join(secret.split()).strip("[]").split(",")
    if len(numbers) != 64 or not all(n.isdigit() and int(n) < 256 for n in numbers):
        return False
    return _KEYPAIR_WORD.search(m.string, max(0, m.start() - 200), m.start()) is not None


RULES: list[Rule] = [
    Rule("nostr-private-key", r"\bnsec1[02-9ac-hj-np-z]{58}\b", ("nsec1",), priority=SPECIFIC),
    Rule(
        "wallet-keypair-bytes",
        _BYTES,
        ("keypair", "key_pair", "key-pair", "secret", "private", "wallet", "id.json", "solana"),
        needs=("[",),
        priority=SPECIFIC,
        check=_check_bytes,
    ),
    Rule(
        "bip32-extended-private-key",
        r"(?<![A-Za-z0-9])[xtyzuvYZUV]prv" + _B58C + r"{100,108}(?![A-Za-z0-9])",
        ("prv",),
        priority=SPECIFIC,
    ),
    Rule(
        "wallet-wif",
        # (mainnet keys: uncompressed `5H…`/`5J…`/`5K…`, compressed `Kw…`-`Kz…`, `L1…`-`L5…`)
        r"(?<![A-Za-z0-9])(?:5[HJK]" + _B58C + r"{49}|(?:K[w-z]|L[1-5])" + _B58C + r"{50})"
        r"(?![A-Za-z0-9])",
        ("5h", "5j", "5k", "kw", "kx", "ky", "kz", "l1", "l2", "l3", "l4", "l5"),
        priority=SPECIFIC,
        check=_check_wif,
    ),
    Rule(
        "wallet-private-key",
        _KEY_WORD
        + _AFTER
        + r"(?<![0-9A-Za-z])(?:0x)?(?P<hex>[0-9a-fA-F]{64}|"
        + _B58C
        + r"{86,88})(?![0-9A-Za-z])",
        ("priv", "secret", "signing", "wallet", "validator", "nsec", "sk", "seed", "keypair"),
        groups=("hex",),
        priority=SPECIFIC,
    ),
]
