"""A credential told in another language: "Das Passwort ist …", "le mot de passe est …",
"la contraseña es …", "пароль: …", "密码是…", "パスワードは …".

The words naming a credential and the words joining them to a value are data, a table per
language (`resources/secrets/languages.json`): a new language is a new entry, not code. A
sentence is a credential word, at most four words (whose it is: "für die Datenbank"), a
joiner (`ist`, `est`, `是`, `は`, or `:` / `=` in any language, full-width too) and a value
that reads as a credential (`credential_like`: "das Passwort ist erforderlich" names none).
"""

from __future__ import annotations

import json
import os
import re

from gitimprove.redaction.calls import credential_like
from gitimprove.redaction.engine import CONTEXT, DATA, Rule
from gitimprove.redaction.values import is_identifier_value

LANGUAGES = os.path.join(DATA, "languages.json")


def _table() -> tuple[list[str], list[str]]:
    with open(LANGUAGES, encoding="utf-8") as fh:
        data = json.load(fh)
    names: set[str] = set()
    joiners: set[str] = set()
    for lang, entry in data.items():
        if lang.startswith("_"):
            continue
        names.update(w.lower() for w in entry["words"])
        joiners.update(w.lower() for w in entry["joiners"])
    # longest first: `clé d'api` before `clé`
    return sorted(names, key=lambda w: (-len(w), w)), sorted(joiners, key=lambda w: (-len(w), w))


def _alt(items: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"[ \t]+") for w in items)


def _latin(word: str) -> bool:
    return word[-1].isascii() or word[-1] in "àâäçéèêëîïôöùûüñßąćęłńóśźżğışşöü"


# names that are English words too: only a joiner of another language makes them foreign
_ENGLISH = frozenset({"password", "token"})
_joiners: frozenset[str] = frozenset()


def _spoken(m: re.Match[str]) -> bool:
    between = m.string[m.end("name") : m.start("v")].lower()
    foreign = any(c.isalpha() and not c.isascii() for c in between)  # `è`, `é`
    return foreign or any(w in _joiners and any(c.isalpha() for c in w) for w in between.split())


def _check(secret: str, m: re.Match[str]) -> bool | str:
    value = secret.rstrip(".,;:!?)*_~")
    if not credential_like(value) or is_identifier_value(value) or "\\" in value:
        return False
    name = m.group("name").lower()
    if value[:1] in "&*" or (name in _ENGLISH and not _spoken(m)):
        return False  # a YAML anchor; `password: …` in English is read by `prose.py`
    mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if m.group("bare") is not None and (name.isascii() or not mixed):
        return False  # `пароль <value>`, no joiner: a word of its own script, a mixed value
    return "credential"


def _rule() -> Rule:
    global _joiners
    names, joiners = _table()
    _joiners = frozenset(joiners)
    spoken = [j for j in joiners if j[-1].isalpha() and _latin(j)]  # need a blank after
    signs = [j for j in joiners if j not in spoken]  # `—`, `是`, `は`: nothing around them
    words = [n for n in names if _latin(n)]  # a word in a sentence: not inside another
    glyphs = [n for n in names if n not in words]  # `密码`, `パスワード`: no blanks around
    regex = (
        r"(?i)(?P<name>(?<![^\W\d_])(?:" + _alt(words) + r")(?![^\W\d_])|(?:" + _alt(glyphs) + r"))"
        r"(?:(?:[ \t]+[^\s:=：＝\"'`]{1,30}){0,4}?"
        r"(?:[ \t]*[:=：＝]|[ \t]+(?:" + _alt(spoken) + r")(?=[ \t:：])"
        r"|[ \t]*(?:" + _alt(signs) + r"))|(?P<bare>(?=[ \t])))"
        r"[ \t]*[:：]?[ \t]*[\"'`«“„「『]?"
        r"(?P<v>(?:(?![\"'`,;<>()\[\]{}])[!-~]){4,100}?)"
        r"(?=[.,;:!?)]*(?:[^!-~]|[\"'`]|$))"
    )
    return Rule(
        "password",
        regex,
        tuple(n.lower() for n in names),
        groups=("v",),
        priority=CONTEXT,
        flags=re.IGNORECASE,
        near=1,
        check=_check,
    )


RULES: list[Rule] = [_rule()]
