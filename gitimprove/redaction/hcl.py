"""A Terraform / HCL `variable` or `output` block's value, named by the block, not the line.

`variable "db_password" { default = "…" }` holds a password in its `default`, though the
line says only `default`; so does `variable "db" { sensitive = true, default = "…" }`, and
`variable "db" { default = "<random>" }` by the value's shape alone (a region, an instance
type, an AMI id, a CIDR or a word pass). `output "…" { value = "…" }` likewise. The block's
body is read with its braces balanced (a `validation { … }` inside it), up to a bound.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.headers import generated
from gitimprove.redaction.values import (
    assignment_is_secret,
    is_identifier_value,
    is_value,
    key_strength,
    looks_random,
    mixed_case,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_BODY_LIMIT = 8000
_ATTRIBUTE = r"(?m)(?:^|(?<=[{,;]))[ \t]*(?P<attr>default|value)[ \t]*=[ \t]*\"(?P<v>(?:[^\"\\\n$]|\\.){1,500})\""
_SENSITIVE = r"(?m)^[ \t]*sensitive[ \t]*=[ \t]*true\b|[{,][ \t]*sensitive[ \t]*=[ \t]*true\b"
# a resource's id (`ami-0abc…`, `sg-0123…`), an ARN, a region, a version: names, not secrets
_NAMES = r"[a-z]{1,12}-[0-9a-fA-F]{8,17}(?:[A-Z]+)?|arn:[^\s]+|[a-z]{2}-[a-z]+-\d|v?\d+(?:\.\d+)+"


_last: tuple[str, dict[int, int]] = ("", {})
_NEXT_BLOCK = r"(?m)^[ \t]*(?:variable|output|resource|module|data|locals|provider|terraform)\b"


def _closers(text: str) -> dict[int, int]:
    """Where each `{` of `text` is closed (strings skipped), in one pass over the text; kept
    for the last text, whose blocks are expanded one after the other."""
    global _last
    if _last[0] is text:
        return _last[1]
    out: dict[int, int] = {}
    stack: list[int] = []
    for m in compiled(r'[{}]|"(?:[^"\\\n]|\\.)*+"', 0).finditer(text):
        c = m.group(0)
        if c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            out[stack.pop()] = m.start()
    _last = (text, out)
    return out


def _body_end(text: str, start: int) -> int:
    """The end of a block whose `{` is at `start - 1`: its braces balanced, strings
    skipped; unclosed, a bounded stretch."""
    end = _closers(text).get(start - 1)
    if end is not None and end - start <= _BODY_LIMIT:
        return end
    # unclosed (a log cut it): up to the next block, within a bound
    nxt = compiled(_NEXT_BLOCK, 0).search(text, start, start + _BODY_LIMIT)
    return nxt.start() if nxt is not None else min(len(text), start + _BODY_LIMIT)


def _shaped_secret(value: str) -> bool:
    """A value that reads as a generated secret with no name to say so: random letters and
    digits, or a password's mix of letters, digits and symbols."""
    if any(c.isspace() for c in value) or "/" in value or "://" in value:
        return False
    if not is_value(value) or is_identifier_value(value):
        return False
    if compiled(_NAMES, 0).fullmatch(value):
        return False
    if looks_random(value) or mixed_case(value) or generated(value):
        return True
    if (
        len(value) >= 10
        and compiled(r"[\w-]+", 0).fullmatch(value)
        and all(any(f(c) for c in value) for f in (str.isupper, str.islower, str.isdigit))
    ):
        return True  # upper and lower case and digits: a generated password
    return (
        len(value) >= 8
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and any(c in "!@#$%^&*+=?~" for c in value)
    )


def _values(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    text = m.string
    end = _body_end(text, m.end())
    body_sensitive = compiled(_SENSITIVE, 0).search(text, m.end(), end) is not None
    name = m.group("name")
    for a in compiled(_ATTRIBUTE, 0).finditer(text, m.end(), end):
        value = a.group("v")
        if key_strength(name) is not None:
            secret = assignment_is_secret(name, value, quoted=True, env_style=False)
        elif body_sensitive:
            secret = is_value(value) and not any(c.isspace() for c in value)
        else:
            secret = _shaped_secret(value)
        if secret:
            yield a.span("v")


RULES: list[Rule] = [
    Rule(
        "hcl-variable",
        # (at a line's start, or after a label: `Error: variable "db" {`)
        r"(?m)(?:^|(?<=[ \t]))[ \t]*(?:variable|output)[ \t]+\"(?P<name>[\w-]{1,100})\"[ \t]*\{",
        ("variable", "output"),
        needs=("{",),
        priority=CONTEXT,
        expand=_values,
    ),
]
