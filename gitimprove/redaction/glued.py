"""A provider's token glued to the text around it, with no separator on either side.

Real text glues tokens: URL-encoding (`token%3D<token>%26`), an escape left in a string
(`\\n<token>`, `\\t<token>`), a colour code, a name joined to it (`KEY_<token>`), a
concatenation printed (`Bearer<token>`), a hex or base64 blob around it, a word wrapped by a
terminal. gitleaks' rules (and most of ours) want a word boundary on each side, so a glued
token passes them. A provider's prefix that no word or hash holds (`ghp_`, `github_pat_`,
`glpat-`, `AKIA`, `AIza`, `hvs.`, `dop_v1_`, `shpat_`, `pypi-AgEI`, …) is evidence enough
wherever it stands, when the body its provider gives it follows: the run of token
characters it starts is masked whole (so a glued tail goes with it), and the glue before it
stays.

A token whose shape is in its middle (`<20>T3BlbkFJ<20>`, a Telegram bot's `<digits>:AA…`,
a Mailchimp key's `<32 hex>-us<n>`) is masked from the start of its shape.

Not a token: a name in code that starts like one (`hf_requiredCharacteristicTypes…`: the
body must hold a digit, and reads as no names), a placeholder (`ghp_xxxx…`), a prefix
inside a file's name before an asset's extension.
"""

from __future__ import annotations

import re

from gitimprove.redaction.engine import SPECIFIC, Rule

_RUN = r"[A-Za-z0-9_-]*"
# (kind, prefix as written, the body its provider gives it)
_PREFIXED = (
    ("github-pat", r"gh[pousr]_", r"[A-Za-z0-9]{36}"),
    ("github-fine-grained-pat", r"github_pat_", r"[A-Za-z0-9]{22}_[A-Za-z0-9]{59}"),
    ("gitlab-pat", r"gl(?:pat|rt|dt|ptt|ft|imt|oas|cbt|soat|agent)-", r"[A-Za-z0-9_-]{20}"),
    ("slack-token", r"xox[abposer]-", r"[0-9]{6,}?-[A-Za-z0-9-]{10,}?"),
    ("slack-app-token", r"xapp-", r"[0-9]-[A-Z0-9]{8,}?-[0-9]{8,}?-[A-Za-z0-9]{20,}?"),
    ("anthropic-api-key", r"sk-ant-(?:api|admin|oat|sid)[0-9]{2}-", r"[A-Za-z0-9_-]{40,}?"),
    ("openai-api-key", r"sk-(?:proj|svcacct|admin)-", r"[A-Za-z0-9_-]{40,}?"),
    ("stripe-access-token", r"(?:sk|rk)_(?:live|test|prod)_", r"[A-Za-z0-9]{20,}?"),
    ("aws-access-token", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)", r"[A-Z0-9]{16}"),
    ("gcp-api-key", r"AIza", r"[A-Za-z0-9_-]{35}"),
    ("gcp-oauth-secret", r"GOCSPX-", r"[A-Za-z0-9_-]{28}"),
    ("vault-token", r"hv[sbr]\.", r"[A-Za-z0-9_-]{24,}?"),
    ("digitalocean-token", r"do[opr]_v1_", r"[a-f0-9]{64}"),
    ("shopify-token", r"shp(?:at|ss|ca|pa)_", r"[a-fA-F0-9]{32}"),
    # (`pypi-AgEI` and base64 of "pypi.org", split so this line reads as no token)
    ("pypi-upload-token", r"pypi-AgEI" r"cHlwaS5vcmc", r"[A-Za-z0-9_-]{50,}?"),
    ("npm-access-token", r"npm_", r"[A-Za-z0-9]{36}"),
    ("sendgrid-api-token", r"SG\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("new-relic-user-api-key", r"NR(?:AK|II|JS|RA)-", r"[A-Z0-9]{27}"),
    ("databricks-api-token", r"dapi", r"[a-f0-9]{32}"),
    ("atlassian-api-token", r"ATATT3", r"[A-Za-z0-9_=-]{100,}?"),
    ("grafana-service-account-token", r"glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    ("grafana-cloud-api-token", r"glc_", r"[A-Za-z0-9+/]{32,}?"),
    ("pulumi-api-token", r"pul-", r"[a-f0-9]{40}"),
    ("postman-api-token", r"PMAK-", r"[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("flyio-access-token", r"fo1_", r"[A-Za-z0-9_-]{39,}?"),
    ("doppler-api-token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.", r"[A-Za-z0-9]{40,}?"),
    ("docker-hub-token", r"dckr_pat_", r"[A-Za-z0-9_-]{27}"),
    ("easypost-api-token", r"EZ[AT]K", r"[A-Za-z0-9]{54}"),
    ("planetscale-token", r"pscale_(?:tkn|pw|oauth)_", r"[A-Za-z0-9_.=-]{32,}?"),
    ("rubygems-api-token", r"rubygems_", r"[a-f0-9]{48}"),
    ("adafruit-api-key", r"aio_", r"[A-Za-z0-9]{28}"),
    ("replicate-api-token", r"r8_", r"[A-Za-z0-9]{37}"),
    ("groq-api-key", r"gsk_", r"[A-Za-z0-9]{52}"),
    ("huggingface-access-token", r"hf_", r"[A-Za-z0-9]{34}"),
    ("sentry-access-token", r"sntry[su]_", r"[A-Za-z0-9+/=_]{60,}?"),
    ("linear-api-key", r"lin_(?:api|oauth)_", r"[A-Za-z0-9]{40}"),
    ("age-secret-key", r"AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("tailscale-key", r"tskey-(?:auth|api|client)-", r"[A-Za-z0-9]{8,}?-[A-Za-z0-9]{20,}?"),
    ("hashicorp-tf-api-token", r"\.atlasv1\.", r"[A-Za-z0-9_=-]{60,}?"),
    ("square-access-token", r"EAAA", r"[A-Za-z0-9_-]{60}"),
    ("jwt", r"eyJ", r"[A-Za-z0-9_-]{10,}?\.eyJ[A-Za-z0-9_-]{10,}?\.[A-Za-z0-9_-]{10,}?"),
)
# a token whose shape is in its middle: (kind, the shape with the run before it)
_INFIXED = (
    # (each shape split in two literals: a shape spelled whole reads as a key and its token)
    ("openai-api-key", r"[A-Za-z0-9]{20}" r"T3BlbkFJ" r"[A-Za-z0-9]{20}"),
    ("telegram-bot-api-token", r"[0-9]{8,10}" r":AA" r"[A-Za-z0-9_-]{33}"),
    ("mailchimp-api-key", r"[a-f0-9]{32}-us[0-9]{1,2}"),
)

_KINDS = tuple(kind for kind, _, _ in _PREFIXED)


def _regex() -> str:
    # (a body's open end is lazy: the token group holds the provider's part, the run after
    # it the glue, so a glued tail of filler does not make the token read as a placeholder)
    alts = [f"(?P<p{n}>{p}{body})" for n, (_, p, body) in enumerate(_PREFIXED)]
    alts += [f"(?P<i{n}>{shape})" for n, (_, shape) in enumerate(_INFIXED)]
    return "(?P<token>" + "|".join(alts) + ")" + _RUN


def _keywords() -> tuple[str, ...]:
    words = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "glrt-", "gldt-"]
    words += ["glptt-", "glft-", "glimt-", "gloas-", "glcbt-", "glsoat-", "glagent-", "glsa_"]
    words += ["glc_", "xox", "xapp-", "sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-"]
    words += ["_live_", "_test_", "_prod_", "akia", "asia", "abia", "acca", "a3t", "aiza"]
    words += ["gocspx-", "hvs.", "hvb.", "hvr.", "_v1_", "shpat_", "shpss_", "shpca_", "shppa_"]
    words += ["pypi-agei", "npm_", "sg.", "nrak-", "nrii-", "nrjs-", "nrra-", "dapi"]
    words += ["atatt3", "pul-", "pmak-", "fo1_", "dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim."]
    words += ["dp.audit.", "dckr_pat_", "ezak", "eztk", "pscale_", "rubygems_", "aio_", "r8_"]
    words += ["gsk_", "hf_", "sntrys_", "sntryu_", "lin_api_", "lin_oauth_", "age-secret-key-1"]
    words += ["tskey-", ".atlasv1.", "eyj", "t3blbkfj", ":aa", "-us", "eaaa"]
    return tuple(words)


# a digest's name before the run (`sha256=<base64url>` in a wheel's RECORD, `integrity`)
_DIGEST_BEFORE = (
    r"(?i)(?:sha\d*|md5|blake\w*|digest|hash|integrity|checksum|fingerprint)[\"']?[ \t]*"
    r"[=:-][ \t]*[\"']?$"
)
_BLOB = "+/"


def _in_blob(text: str, start: int, body_end: int, end: int) -> bool:
    """Whether the token is a piece of a longer base64 text or a digest (an image in a data
    URL, a signature, `sha256=…`): the run it stands in holds `+` or `/` outside it, or
    follows a digest's name. Random base64 draws a `+` or `/` one character in 32, so a
    blob of a few hundred characters always holds one; a glued token's own run does not."""
    from gitimprove.redaction.engine import compiled

    first, lo = start, max(0, start - 256)  # (bounded: a blob's last few lines tell)
    while first > lo and (text[first - 1].isalnum() or text[first - 1] in "+/_-"):
        first -= 1
    if any(c in _BLOB for c in text[first:start]) or any(c in _BLOB for c in text[body_end:end]):
        return True
    return compiled(_DIGEST_BEFORE, 0).search(text, max(0, first - 40), first) is not None


def check_glued(secret: str, m: re.Match[str]) -> bool | str:
    from gitimprove.redaction.engine import compiled
    from gitimprove.redaction.values import reads_as_names

    name = next(g for g, v in m.groupdict().items() if v is not None and g != "token")
    if _in_blob(m.string, m.start(), m.end(name), m.end()):
        return False
    kind = _KINDS[int(name[1:])] if name.startswith("p") else _INFIXED[int(name[1:])][0]
    text, start, body_end, body = m.string, m.start(), m.end(name), m.group(name)
    if start and text[start - 1] in _BLOB and m.end() > body_end:
        # (`…+hf_<60>…`: a base64 character before it and the run going on past the token's
        # own length: a piece of a longer blob; a delimited token is masked, `=+hf_<34>`)
        return False
    if body.startswith("ACCA") and compiled(r"[A-Z0-9]", 0).match(text, body_end):
        return False  # a longer id of the same letters (`ACCA<17>`: a service credential's id)
    body = m.group(name)
    # random characters mix their classes: a body of one (`cgafhf_eefghihhiiiif…`, a
    # sequencer's quality string) is no token
    alnum = [c for c in body if c.isalnum()]
    classes = (any(map(str.isupper, alnum)), any(map(str.islower, alnum)))
    if sum((*classes, any(map(str.isdigit, alnum)))) < 2:
        return False
    runs = [run for run in re.split(r"[^A-Za-z0-9]+", body) if len(run) >= 12]
    if not any(c.isdigit() for c in body) and all(map(reads_as_names, runs)):
        return False  # a name in code that starts like a token (`hf_requiredCharacteristic…`)
    return kind


# the prefixes a token cut short keeps: those of one word that no word or name holds
_CUT_PREFIXES = tuple(
    p
    for kind, p, _ in _PREFIXED
    if kind not in ("jwt", "square-access-token", "databricks-api-token")
)
# where a producer's cut ends a text: its very end, after a mark saying so
_CUT_END = r"(?:[ \t]*(?:\u2026|\.\.\.|\[truncated\]|\(truncated\)|\[\.\.\.\]))?[ \t\r\n]*\Z"


def _cut_regex() -> str:
    return (
        r"(?<![A-Za-z0-9+/])(?P<token>(?:"
        + "|".join(_CUT_PREFIXES)
        + r")(?P<body>[A-Za-z0-9_=.-]{11,299}[A-Za-z0-9_=-]))"
        + _CUT_END
    )


def check_cut(secret: str, m: re.Match[str]) -> bool | str:
    """A provider's token the text ends inside (a tool's output cut short by its producer:
    `ghp_` and 14 of its 36): its random part mixes classes and reads as no names."""
    from gitimprove.redaction.values import reads_as_names

    body = m.group("body")
    alnum = [c for c in body if c.isalnum()]
    kinds = (
        any(map(str.isupper, alnum)),
        any(map(str.islower, alnum)),
        any(map(str.isdigit, alnum)),
    )
    if re.search(r"\.[a-z]{1,5}\Z", body):
        return False  # a file's name (`<token>-log.jsonl`): the token's own rule masks it
    marked = bool(m.group(0)[m.end("token") - m.start() :].strip())
    # a text that merely ends with a token-like id (`ACCA…`, `xoxb-12345-abcd234`) is no cut:
    # without a producer's mark, the body mixes upper- and lower-case as a random token does
    if sum(kinds) < 2 or len(set(body)) < 8 or not (marked or (kinds[0] and kinds[1])):
        return False
    return not reads_as_names(body)


RULES = [
    Rule(
        "cut-token",
        _cut_regex(),
        _keywords(),
        check=check_cut,
        groups=("token",),  # the token, not the mark of the cut or a sentence's full stop
        priority=SPECIFIC,
    ),
    Rule(
        "glued-token",
        _regex(),
        _keywords(),
        check=check_glued,
        groups=(0,),  # the whole run, not the token's own part
        priority=SPECIFIC,
    ),
]
