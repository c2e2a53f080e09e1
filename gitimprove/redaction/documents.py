"""Masking a whole stored document: a JSON object, JSON lines, or plain text.

Records are JSON, and a secret inside a JSON string may be escaped (`\\n` in a private key,
`\\"` around an embedded JSON password). So in a JSON document every string literal is
decoded, masked and written back in place (nothing else in the line changes, and the line
stays valid JSON); a string under a key is masked with the key as its context, as the text
`"key": "value"`, so `{"password": "<pw>"}` is caught the way `password=<pw>` is.
Lines that are not JSON (a corrupt note line, a learning's Markdown) are masked as text.
"""

from __future__ import annotations

import json
import re

from gitimprove import redaction
from gitimprove.redaction.engine import CONTEXT, Span
from gitimprove.redaction.values import assignment_is_secret, key_strength, kind_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_UNESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_COLON = re.compile(r"\s*:")


def _key_spans(key: str, value: str, within: Sequence[str]) -> list[Span]:
    """Spans in `value` found when it is read as the value of `key`."""
    from gitimprove.redaction.views import folded

    key = folded(key)
    rules = redaction.ruleset().candidates(key.lower(), within)
    if not rules:
        return []
    encoded = json.dumps(value, ensure_ascii=False)
    prefix = json.dumps(key, ensure_ascii=False) + ": "
    if encoded[1:-1] == value:  # no escapes: positions map one to one
        base = len(prefix) + 1
        synth = prefix + encoded
        out = []
        for s in redaction.ruleset().spans(synth, rules):
            start, end = max(s.start, base), min(s.end, base + len(value))
            if start < end:
                out.append(Span(start - base, end - base, s.kind, s.priority))
        return out
    if key_strength(key) and assignment_is_secret(key, value, quoted=True, env_style=False):
        return [Span(0, len(value), kind_of(key), CONTEXT)]
    return []


def redact_string(value: str, key: str | None, within: Sequence[str]) -> str:
    """A JSON string's value masked (read as the value of `key` when it has one); `within`
    are the keywords that occur in the whole document."""
    if not value:
        return value
    rs = redaction.ruleset()
    found = rs.spans(value, rs.candidates(value.lower(), within))
    if key is not None:
        found += _key_spans(key, value, within)
    return redaction.apply(value, redaction.merge(found, value))


_seen: dict[tuple[str, str | None, int], str] = {}


def _short(value: str, key: str | None, within: Sequence[str]) -> str:
    """redact_string, remembered for short strings: keys and small values repeat a lot."""
    if len(value) > 64:
        return redact_string(value, key, within)
    memo = (value, key, len(within))
    found = _seen.get(memo)
    if found is None:
        if len(_seen) > 8192:
            _seen.clear()
        found = _seen[memo] = redact_string(value, key, within)
    return found


_NAME_FIELDS = frozenset(
    {"name", "key", "parametername", "parameter_name", "parameterkey", "optionname", "variable"}
)
_VALUE_FIELDS = frozenset(
    {"value", "val", "secretstring", "secret_string", "parametervalue", "secretvalue"}
)
_NUMBER = re.compile(r"(\s*:\s*)(-?\d+)(?=\s*[,}\]]|\s*$)")


def _paired(text: str) -> dict[str, str]:
    """Values a sibling field names as a credential (`{"Name": "api_key", "Value": "…"}`,
    ECS, SSM and Kubernetes shapes), each with the kind its marker gets."""
    low = text.lower()
    if not any(f in low for f in ('"value', '"val"', '"secret', '"parametervalue"', "[")):
        return {}
    try:
        stack: list[object] = [json.loads(text)]
    except (ValueError, RecursionError):
        return {}
    out: dict[str, str] = {}
    parents: list[str | None] = [None]  # the key each item on the stack is the value of
    while stack:
        item, parent = stack.pop(), parents.pop()
        if isinstance(item, dict):
            fields = {str(k).lower(): v for k, v in item.items()}
            names = [v for k, v in fields.items() if k in _NAME_FIELDS and isinstance(v, str)]
            if parent is not None and "value" in fields:
                # `terraform output -json`: `{"db_password": {"sensitive": true, "value": …}}`
                names.append(parent)
            if str(fields.get("type", "")).lower() == "securestring":
                names.append("secret")  # SSM: the value is a secret whatever its name
            for k, v in item.items():  # a list under a credential key: `"tokens": [...]`
                if isinstance(v, list):
                    one = str(k)[:-1] if str(k)[-1:] in "sS" else str(k)
                    for x in v:
                        if isinstance(x, str) and assignment_is_secret(
                            one, x, quoted=True, env_style=True
                        ):
                            out[x] = kind_of(one)
            values = [
                v
                for k, v in fields.items()
                if k in _VALUE_FIELDS and isinstance(v, str | int) and not isinstance(v, bool)
            ]
            for name in names:
                for value in values:
                    if assignment_is_secret(name, str(value), quoted=True, env_style=True):
                        out[str(value)] = kind_of(name)
            stack.extend(item.values())
            parents.extend(str(k) for k in item)
        elif isinstance(item, list):
            stack.extend(item)
            parents.extend([None] * len(item))
    return out


def _number(between: str, key: str | None, paired: dict[str, str]) -> str:
    """`"pin": <digits>`: a number under a key naming a credential becomes its marker."""
    m = _NUMBER.match(between) if key is not None else None
    if m is None or key is None:
        return between
    number = m.group(2)
    kind = paired.get(number)
    if kind is None and assignment_is_secret(key, number, quoted=True, env_style=True):
        kind = kind_of(key)
    if kind is None:
        return between
    marked = json.dumps(redaction.marker(kind, number))
    return between[: m.start(2)] + marked + between[m.end(2) :]


def _as_text(text: str) -> str:
    """A JSON text with what the rules find in it read as plain text masked inside its
    string literals (the line stays valid JSON): a rule that reads a credential from the
    fields around it (`{"param": "client_secret", "val": "…"}`, a nested `{"github-oauth":
    {"github.com": "…"}}`) sees them here, where a string masked alone does not. Only a
    secret found within one literal free of escapes counts (escapes read as text are not
    what the string says; the decoded strings are masked one by one after this)."""
    found = redaction.spans(text)
    if not found:
        return text
    out: list[str] = []
    pos = 0
    at = 0
    for m in _STRING.finditer(text):
        start, end = m.span()
        while at < len(found) and found[at].end <= start:
            at += 1
        inner = []
        for sp in found[at:]:
            if sp.start >= end:
                break
            if start <= sp.start and sp.end <= end:
                a, b = max(sp.start, start + 1) - start - 1, min(sp.end, end - 1) - start - 1
                if a < b:
                    inner.append(Span(a, b, sp.kind, sp.priority))
        literal = m.group(0)
        if not inner or "\\" in literal:
            continue
        value = literal[1:-1]
        out += [text[pos:start], '"', redaction.apply(value, redaction.merge(inner, value)), '"']
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact_json_text(text: str, within: Sequence[str] | None = None) -> str:
    """A valid JSON text with every string literal masked in place, and numbers and
    values a key or a sibling name field says are credentials."""
    if within is None:
        within = redaction.ruleset().present(text.lower())
    text = _as_text(text)
    paired = _paired(text)
    out: list[str] = []
    pos = 0
    key: str | None = None
    for m in _STRING.finditer(text):
        literal = m.group(0)
        value = json.loads(literal)
        is_key = _COLON.match(text, m.end()) is not None
        between = text[pos : m.start()]
        owner = key if not is_key and key is not None and between.strip() == ":" else None
        if not is_key and value in paired and "".join(between.split()) in (":", "[", ",", ":["):
            new = redaction.marker(paired[value], value)
        else:
            new = _short(value, None if is_key else owner, within)
        out.append(_number(between, key, paired))
        key = value if is_key else None
        out.append(literal if new == value else json.dumps(new, ensure_ascii=False))
        pos = m.end()
    out.append(_number(text[pos:], key, paired))
    return "".join(out)


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["':
        return False
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):  # nested past reading: masked as plain text
        return False
    return True


def redact_document(text: str) -> str:
    from gitimprove.redaction.views import folded

    # keywords as the rules will read the strings: escapes decoded, lookalikes folded
    probe = _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text) if "\\u" in text else text
    within = redaction.ruleset().present(folded(probe).lower()) if text else []
    if not within:
        return text
    if _is_json(text):
        return redact_json_text(text, within)
    lines = text.split("\n")
    if not any(_is_json(line) for line in lines):
        return redaction.redact(text)
    out: list[str] = []
    plain: list[str] = []
    for line in lines:
        if _is_json(line):
            if plain:
                out.append(redaction.redact("\n".join(plain)))
                plain = []
            out.append(redact_json_text(line, within))
        else:
            plain.append(line)
    if plain:
        out.append(redaction.redact("\n".join(plain)))
    return "\n".join(out)
