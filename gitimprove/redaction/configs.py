"""Credentials in server configurations, templates and login forms.

- web servers' directives that name a variable and give its value after a blank: Apache
  `SetEnv DB_PASSWORD …`, nginx `fastcgi_param` / `uwsgi_param` / `scgi_param`, PHP's
  `php_value` / `php_admin_value` (`mysqli.default_pw …`);
- strongSwan / libreswan `ipsec.secrets`: `[selectors] : PSK "…"`, `: EAP …`, `: XAUTH …`,
  `: NTLM …`, the passphrase after a key file (`: RSA key.pem "…"`, `ECDSA`, `P12`, `PKCS8`)
  and a smartcard `: PIN %smartcard "…"`;
- an ERB or Ruby default given in a block: `ENV.fetch("SECRET_KEY_BASE") { "…" }`, and
  the literal of an ERB tag under a credential key (`password: <%= ENV["X"] || "…" %>`);
- an XML element whose `name` / `key` attribute names a credential and whose text, or a
  `<value>` inside it, is the value (.NET `<setting name="ApiToken"><value>…</value>`, Java
  `<entry key="password">…</entry>`);
- a YAML block scalar under a credential key (`client_secret: >-`, `token: |`): every line
  of it, so a value wrapped onto several lines is masked whole;
- OpenVPN's inline credentials: `<auth-user-pass>`, a user's line, then the password's;
- a password typed into a login form by a test: Selenium `find_element(By.ID,
  "password").send_keys("…")`, Playwright `locator("#password").fill("…")`, Cypress
  `cy.get("#password").type("…")`, WebdriverIO `setValue`, Capybara `fill_in "Password",
  with: "…"`, Robot Framework `Input Password    locator    …`.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import CONTEXT, Rule, compiled
from gitimprove.redaction.values import assignment_is_secret, is_value, kind_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_CRED = r"[\w.:-]{0,60}?(?:pass|pwd|pw|secret|token|key|cred|auth|psk|salt)[\w.:-]{0,60}"
_LIT = r"""(?:"(?P<dq>(?:[^"\\\n]|\\.){1,500})"|'(?P<sq>(?:[^'\\\n]|\\.){1,500})')"""
_BARE_OR_LIT = _LIT[:-1] + r"""|(?P<bare>[^\s"'#;]{1,500}))"""
# a form field that takes a secret, in a locator: `By.ID, "password"`, `#pass`, `[name=pwd]`
_FIELD = r"(?:pass(?:word|wd|phrase|code)?|pwd|\bpin\b|secret|token|otp|api[_-]?key)"


def _named(key: str, secret: str, *, quoted: bool) -> bool | str:
    if not assignment_is_secret(key, secret, quoted=quoted, env_style=True):
        return False
    return kind_of(key)


def _check_named(secret: str, m: re.Match[str]) -> bool | str:
    return _named(m.group("key"), secret, quoted=m.group("bare") is None)


def _check_quoted(secret: str, m: re.Match[str]) -> bool | str:
    return _named(m.group("key"), secret, quoted=True)


def _check_value(secret: str, m: re.Match[str]) -> bool:
    v = secret.strip()
    if m.groupdict().get("bare") is not None and ("{" in v or "}" in v):
        return False  # a template's field (`0s{psk}`), not a bare secret
    return is_value(v) and not v.startswith(("$", "%{", "{{", "<"))


def _check_field(secret: str, m: re.Match[str]) -> bool:
    """A literal typed into a field whose locator names a secret (`By.ID, "password"`)."""
    return _check_typed(secret, m) and compiled("(?i)" + _FIELD, 0).search(m["loc"]) is not None


def _block(m: re.Match[str]) -> Iterable[tuple[int, int]]:
    """The lines of a YAML block scalar under a credential key, when together they are one."""
    body = m.group("body")
    joined = "".join(body.split())
    if "\n" not in body.rstrip("\n") or not _named(m.group("key"), joined, quoted=True):
        return []  # one line: the other rules read it
    if len(body.split()) != len(body.strip().splitlines()):
        return []  # words on a line: prose or a script, not a wrapped value
    start = m.start("body") + len(body) - len(body.lstrip())
    return [(start, m.start("body") + len(body.rstrip()))]


def _check_typed(secret: str, m: re.Match[str]) -> bool:
    return _check_value(secret, m) and len(secret) >= 3


RULES: list[Rule] = [
    Rule(
        "password",
        # (OpenVPN: the user on the first line of the block, the password on the second)
        r"<auth-user-pass>[ \t]*\r?\n[ \t]*[^\s<]{1,200}[ \t]*\r?\n[ \t]*(?P<bare>[^\s<]{1,500})[ \t]*\r?\n?"
        r"[ \t]*</auth-user-pass>",
        ("<auth-user-pass>",),
        groups=("bare",),
        priority=CONTEXT,
        check=lambda secret, m: is_value(secret),
    ),
    Rule(
        "credential",
        r"(?m)^(?P<ind>[ \t]*)(?:-[ \t]+)?[\"']?(?P<key>" + _CRED + r")[\"']?[ \t]*:[ \t]*"
        r"(?:[&!][\w!-]+[ \t]+)?[|>][-+]?[1-9]?[ \t]*\r?\n"
        r"(?P<body>(?:(?P=ind)[ \t]+\S[^\n]*(?:\n|$)){1,200})",
        (": |", ": >", ":|", ":>"),  # (not the line break: JSON escapes it)
        priority=CONTEXT,
        expand=_block,
    ),
    Rule(
        "credential",
        r"(?im)^[ \t]*(?:SetEnv|fastcgi_param|uwsgi_param|scgi_param|php_(?:admin_)?value"
        r"|PassEnv[ \t]+\S+[ \t]+|env)[ \t]+(?P<key>" + _CRED + r")[ \t]+" + _BARE_OR_LIT,
        ("setenv", "fastcgi_param", "uwsgi_param", "scgi_param", "php_value", "php_admin_value"),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_named,
    ),
    Rule(
        # ipsec.secrets: the secret itself, or a key file's passphrase, or a smartcard's PIN
        "password",
        r"(?m)(?:^|[ \t]):[ \t]*(?:(?:PSK|EAP|XAUTH|NTLM)[ \t]+"
        r"|(?:RSA|ECDSA|P12|PKCS8|BLISS|PIN)[ \t]+(?:\"[^\"\n]*\"|[^\s\"]+)[ \t]+)" + _BARE_OR_LIT,
        (": psk", ": eap", ": xauth", ": ntlm", ": rsa", ": ecdsa", ": p12", ": pkcs8", ": pin"),
        groups=("dq", "sq", "bare"),
        priority=CONTEXT,
        check=_check_value,
    ),
    Rule(
        # Ruby: `ENV.fetch("SECRET_KEY_BASE") { "…" }`, `ENV.fetch('X') { |k| '…' }`
        "credential",
        r"(?i)\bfetch\(?\s*[\"'](?P<key>" + _CRED + r")[\"']\s*\)?\s*(?:\{|do\b)\s*"
        r"(?:\|\w+\|\s*)?" + _LIT,
        ("fetch",),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_quoted,
    ),
    Rule(
        # an ERB tag's literal under a credential key: `password: <%= ENV["X"] || "…" %>`
        "credential",
        r"(?i)(?<![\w.-])[\"']?(?P<key>" + _CRED + r")[\"']?[ \t]*[:=][ \t]*[\"']?<%=?"
        r"[^%\n]{0,300}" + _LIT + r"[^%\n\"']{0,40}%>",
        ("<%",),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_quoted,
    ),
    Rule(
        # `<setting name="ApiToken" …><value>…</value>`, `<entry key="password">…</entry>`
        "credential",
        r"(?i)<(?P<tag>[\w:.-]+)\s[^<>]{0,200}?\b(?:name|key|id)\s*=\s*[\"'](?P<key>" + _CRED + r")"
        r"[\"'][^<>]{0,200}>\s*(?:<value>\s*)?(?:<!\[CDATA\[(?P<cd>[^\n]{1,500}?)\]\]>"
        r"|(?P<dq>[^<>\n]{1,500}?))\s*</",
        ("name=", "key=", "id="),
        groups=("cd", "dq"),
        needs=("</",),
        priority=CONTEXT,
        check=_check_quoted,
    ),
    Rule(
        # a name element and a value element side by side: `<name>password</name>
        # <value>…</value>`, web.xml's `<param-name>…</param-name><param-value>…`
        "credential",
        r"(?i)<(?P<nt>name|key|param-name|param_name|env-entry-name)>\s*(?P<key>" + _CRED + r")"
        r"\s*</(?P=nt)>\s*(?:<(?:type|env-entry-type)>[^<>\n]{0,80}</(?:type|env-entry-type)>\s*)?"
        r"<(?P<vt>value|param-value|param_value|env-entry-value)>\s*(?:<!\[CDATA\[(?P<cd>[^\n]{1,500}?)\]\]>"
        r"|(?P<dq>[^<>\n]{1,500}?))\s*</(?P=vt)>",
        ("<name>", "<key>", "<param-name>", "<param_name>", "<env-entry-name>"),
        groups=("cd", "dq"),
        priority=CONTEXT,
        check=_check_quoted,
    ),
    Rule(
        # Selenium, Playwright, Cypress, WebdriverIO: a literal typed into a secret field
        "password",
        r"(?i)(?:find_?element\w*|locator|get_?by_?\w+|query_?selector|\bcy\.get|\$)\s*\("
        r"(?P<loc>(?:[^()\n]|\([^()\n]*\)){1,240})\)(?:\s*\.\s*(?:clear|click|first|"
        r"nth\(\d+\))\s*\(\s*\))*\s*\.\s*(?:send_?keys|fill|type|set_?value|add_?value|"
        r"press_?sequentially|input_?text)\s*\(\s*" + _LIT,
        (
            "send_keys",
            "sendkeys",
            ".fill(",
            ".type(",
            "setvalue",
            "addvalue",
            "pressseq",
            "press_seq",
        ),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_field,
    ),
    Rule(
        # a field held in a variable named after it: `password_input.send_keys("…")`
        "password",
        r"(?i)(?<![\w$])[\w$]*(?:pass(?:word|wd|phrase|code)?|pwd)[\w$]*(?:\(\))?\s*\.\s*"
        r"(?:send_?keys|fill|type|set_?value|press_?sequentially)\s*\(\s*" + _LIT,
        ("send_keys", "sendkeys", ".fill(", ".type(", "setvalue", "pressseq", "press_seq"),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_typed,
    ),
    Rule(
        # `page.fill("#password", "…")`, `fill_in "Password", with: "…"`
        "password",
        r"(?i)\b(?:fill|type|fill_?in)\s*\(?\s*[\"'][^\"'\n]{0,80}?" + _FIELD + r"[^\"'\n]{0,80}?"
        r"[\"']\s*,\s*(?:with:\s*|:with\s*=>\s*)?" + _LIT,
        ("fill", "type("),
        groups=("dq", "sq"),
        priority=CONTEXT,
        check=_check_typed,
    ),
    Rule(
        # Robot Framework: `Input Password    locator    <pw>` (cells split by 2+ blanks)
        "password",
        r"(?im)\bInput[ \t]+(?:Password[ \t]{2,}\S+|Text[ \t]{2,}\S*" + _FIELD + r"\S*)"
        r"(?:[ \t]{2,}|\t)(?P<bare>\S+)",
        ("input password", "input text"),
        groups=("bare",),
        priority=CONTEXT,
        check=_check_typed,
    ),
]
