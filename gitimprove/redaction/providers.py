"""Provider token formats gitleaks' default set lacks, or pins to one exact length or to a
nearby keyword (a Mailgun key is still a key without the word "mailgun" beside it)."""

from __future__ import annotations

import re

from gitimprove.redaction.engine import Rule
from gitimprove.redaction.prefixed import check_prefixed, gate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_GITLAB = ("pat", "ptt", "rt", "dt", "cbt", "soat", "ft", "imt", "oas", "agent")


def _slack_parts(secret: str, m: re.Match[str]) -> bool:
    """A Slack token has a team's or a user's id (digits, eight or more) or random parts
    (16 characters or more in all); a placeholder has short words (`xoxb-my-bot-token`,
    `xoxb-abcdef-abcdef`, `xoxb-12345-abcd234`)."""
    from gitimprove.redaction.values import looks_random

    parts = secret.split("-")[1:]
    return any(p.isdigit() and len(p) >= 8 for p in parts) or looks_random("".join(parts))


# what says a Mailgun key or a credential is near: its API's host, curl's `api:` user, a
# credential's word (not the `key` of the token itself)
_MAILGUN_CONTEXT = r"(?i)mailgun|\bapi:|api[_.-]?key|apikey|\btoken|secret|passw|credential|\bauth"
# a name built with `key` as one of its words: a cache's, a sort's, a partition's key
_KEY_NAME = r"(?i)(?:cache|sort|partition|shard|row|primary|foreign|hash|lookup|dedup|idempotency|object|s3|index|map|group|build|restore|composite|range|cluster)[-_.]$"


def _mailgun(secret: str, m: re.Match[str]) -> bool:
    """`key-<32 hex>` standing alone is Mailgun's; glued to a word before it (`apikey-…`,
    `xkey-…`) or named as a part of a longer name (`cache-key-<md5>`, `sort-key-…`) it is
    one only when a credential is spoken of near it (`mailgun`, `api.mailgun.net`, `-u
    api:`, `apikey`, `token`, `secret`)."""
    from gitimprove.redaction.engine import compiled
    from gitimprove.redaction.keynames import key_strength

    text, start = m.string, m.start()
    before = text[start - 1] if start else " "
    if not (before.isalnum() or before in "-_."):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    head = text[max(line_start, start - 40) : start]
    if before in "-_." and compiled(_KEY_NAME, 0).search(head):
        return False  # `cache-key-<md5>`: the cache's key, a digest
    glued = compiled(r"[A-Za-z0-9]+$", 0).search(head)
    if glued and key_strength(glued.group() + "key") == "strong":
        return True  # `apikey-…`, `secretkey-…`: the word before names a credential
    lo, hi = max(line_start, start - 120), text.find("\n", m.end())
    around = text[lo:start] + " " + text[m.end() : hi if hi != -1 else m.end() + 120]
    return compiled(_MAILGUN_CONTEXT, 0).search(around) is not None


def _not_in_blob(length: int) -> Callable[[str, re.Match[str]], bool]:
    """A token of `length` characters after its prefix, unless it is a piece of a longer
    base64 text: a `+` or `/` glued before it and a run longer than the token's own
    (`…+hf_<60 characters>…` in a signature); a delimited token is one (`=hf_<34>`)."""

    def check(secret: str, m: re.Match[str]) -> bool:
        start = m.start()
        glued = start > 0 and m.string[start - 1] in "+/"
        return not (glued and len(secret) - secret.find("_") - 1 != length)

    return check


def _random_body(secret: str, m: re.Match[str]) -> bool:
    """A key's random body, not a name in code that starts with the prefix."""
    from gitimprove.redaction.values import reads_as_names

    return not reads_as_names(secret[2:])


def _wifi_password(secret: str, m: re.Match[str]) -> bool:
    from gitimprove.redaction.values import is_value

    return is_value(secret) and not (secret.startswith("<") and secret.endswith(">"))


def check_app_secret(secret: str, m: re.Match[str]) -> bool:
    """A Facebook app or client token's second half (`<app id>|<secret>`): 32 hex digits or
    random characters, not a name or a word after a number in a table."""
    from gitimprove.redaction.values import looks_random

    body = re.split(r"\||%7[Cc]|%", secret, maxsplit=1)[-1]
    hexed = len(body) == 32 and all(c in "0123456789abcdefABCDEF" for c in body)
    return hexed or looks_random(body)


RULES: list[Rule] = [
    Rule("anthropic-api-key", r"\bsk-ant-(?:api|admin|sid|oat)\d{2}-[\w-]{20,}", ("sk-ant-",)),
    Rule(
        "openai-api-key",
        r"\bsk-(?:proj|svcacct|admin|None)-[\w-]{20,}|\bsk-[A-Za-z0-9]{40,}\b",
        ("sk-",),
    ),
    Rule("github-pat", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    Rule("github-fine-grained-pat", r"\bgithub_pat_\w{40,}", ("github_pat_",)),
    Rule(
        "gitlab-pat",
        r"\bgl(?:" + "|".join(_GITLAB) + r")-[\w-]{20,}",
        tuple(f"gl{p}-" for p in _GITLAB),
    ),
    Rule("gcp-api-key", r"\bAIza[\w-]{35}\b", ("aiza",)),
    Rule("google-oauth-secret", r"\bGOCSPX-[\w-]{28}\b", ("gocspx-",)),
    Rule("google-oauth-token", r"\bya29\.[\w-]{20,}", ("ya29.",)),
    Rule("slack-token", r"\bxox[abposer]-[0-9A-Za-z-]{10,}", ("xox",), check=_slack_parts),
    Rule("slack-app-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]+", ("xapp-",)),
    Rule(
        "slack-webhook-url",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{20,}",
        ("hooks.slack.com",),
    ),
    Rule(
        "stripe-access-token",
        r"\b(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{16,}",
        ("_live_", "_test_", "_prod_"),
    ),
    Rule("stripe-webhook-secret", r"\bwhsec_[A-Za-z0-9]{24,}", ("whsec_",)),
    Rule("npm-access-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    Rule("huggingface-access-token", r"\bhf_[A-Za-z0-9]{30,}", ("hf_",), check=_not_in_blob(34)),
    Rule("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b", ("sk",)),
    Rule("sendgrid-api-token", r"\bSG\.[\w-]{16,}\.[\w-]{16,}", ("sg.",)),
    Rule("jwt", r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}", ("eyj",)),
    Rule(
        "aws-access-token",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        ("akia", "asia", "abia", "acca", "a3t"),
    ),
    Rule(
        "azure-storage-key",
        r"\bAccountKey=([A-Za-z0-9+/]{86}==)",
        ("accountkey=",),
        flags=re.ASCII | re.IGNORECASE,
    ),
    Rule("mailchimp-api-key", r"\b[0-9a-f]{32}-us\d{1,2}\b", ("-us",)),
    # (glued to a word too: `apikey-…`, `xkey-…`; `_mailgun` judges those by their context)
    Rule(
        "mailgun-private-api-token",
        r"key-[0-9a-f]{32}(?![0-9A-Za-z])",
        ("key-",),
        check=_mailgun,
    ),
    # (also in the Bot API's URL, where `bot` runs into the id: `/bot<id>:AA…/sendMessage`)
    # a Facebook app access token or client token: the app's id, `|`, its secret (gitleaks
    # wants "facebook" beside it; Graph API calls and logs print it bare)
    Rule(
        "facebook-access-token",
        r"(?<![\w|])\d{15,16}(?:\||%7[Cc])[\w-]{27,40}(?![\w-])",
        ("|", "%7c"),
        check=check_app_secret,
    ),
    Rule("telegram-bot-api-token", r"(?:\b|(?<=bot))\d{8,10}:AA[\w-]{33}\b", (":aa",)),
    Rule(
        "discord-webhook-url",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}",
        ("discord",),
    ),
    # its token's own length, 68: a line break inside it leaves it incomplete (`views.py`)
    Rule(
        "discord-webhook-url",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{68}(?![\w-])",
        ("discord",),
    ),
    Rule(
        "square-access-token",
        r"\bsq0(?:atp|csp)-[\w-]{22,43}\b|\bEAAA[\w-]{60}\b",
        ("sq0", "eaaa"),
    ),
    Rule("supabase-access-token", r"\bsbp_[a-f0-9]{40}\b", ("sbp_",)),
    Rule("nuget-api-key", r"\boy2[a-z0-9]{43}\b", ("oy2",)),
    Rule("okta-api-token", r"\bSSWS\s+([\w-]{20,})", ("ssws",), flags=re.ASCII | re.IGNORECASE),
    Rule("dockerhub-token", r"\bdckr_(?:pat|oat)_[\w-]{20,}", ("dckr_",)),
    # Doppler: personal, service (`dp.st.<config>.…`), CLI, service account, SCIM, audit
    Rule(
        "doppler-token",
        r"\bdp\.(?:pt|st|ct|sa|scim|audit)\.(?:[\w-]{1,64}\.)?[A-Za-z0-9]{40,44}\b",
        ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
    ),
    # Tailscale auth, API, OAuth client, webhook and SCIM keys: tskey-<kind>-<id>-<secret>
    Rule(
        "tailscale-key",
        r"\btskey-(?:auth|api|client|webhook|scim)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}",
        ("tskey-",),
    ),
    Rule("neon-api-key", r"\bnapi_[a-z0-9]{40,}\b", ("napi_",)),
    Rule("figma-pat", r"\bfigd_[\w-]{30,}", ("figd_",)),
    Rule("buildkite-token", r"\bbkua_[A-Za-z0-9]{40}\b", ("bkua_",)),
    # a prefix, then a run with a digit in it (`vercel_blob_rw_…`, not `vercel_config_path`)
    Rule("vercel-token", r"\bvercel_(?=[\w-]*\d)[\w-]{24,}", ("vercel_",)),
    Rule("cloudflare-scoped-token", r"\bcf[au]t_(?=[\w-]*\d)[\w-]{30,}", ("cfat_", "cfut_")),
    Rule("jina-api-key", r"\bjina_(?=[\w-]*\d)[A-Za-z0-9_-]{40,}", ("jina_",)),
    Rule(
        # an auth token next to its account SID: `Client("AC…", "<32 hex>")`, `AC…:<32 hex>`
        "twilio-auth-token",
        r"\bAC[0-9a-f]{32}\b[^\n]{0,40}?(?<![0-9A-Za-z])([0-9a-fA-F]{32})\b",
        ("ac",),
    ),
    Rule(
        # STS session tokens: base64 of a protobuf whose first field is "origin_…" (or the
        # older `FwoGZXIvYXdz…` shape), with no variable name next to them
        "aws-session-token",
        r"(?<![A-Za-z0-9+/])(?:[A-Za-z0-9]{2}oJb3JpZ2luX2|[A-Za-z]{2}oGZXIvYXdz)[A-Za-z0-9+/]{60,}={0,2}",
        ("ojb3jpz2lux2", "ogzxivyxdz"),
    ),
    # formats trufflehog detects and gitleaks' default set lacks, each behind a prefix that
    # no word or identifier has (a digit is required where the prefix is short)
    Rule("posthog-api-key", r"\bph[xc]_(?=\w*\d)\w{30,}", ("phx_", "phc_")),
    Rule("bitbucket-app-password", r"\bATBB[A-Za-z0-9_=-]{28,}", ("atbb",)),
    Rule("google-refresh-token", r"(?<![\w/])1//0[\w-]{30,}", ("1//0",)),
    # an OAuth authorization code, exchanged for tokens (`?code=4/0A…` in a redirect)
    Rule("google-oauth-code", r"(?<![\w/])4/0A[\w-]{40,}", ("4/0a",)),
    Rule("crates-io-token", r"\bcio(?=[A-Za-z]*\d)[A-Za-z0-9]{32}\b", ("cio",)),
    Rule("nvidia-api-key", r"\bnvapi-[\w-]{40,}", ("nvapi-",)),
    Rule(
        "fireworks-api-key", r"\bfw_(?=[A-Za-z]*\d)(?=[a-z0-9]*[A-Z])[A-Za-z0-9]{20,}\b", ("fw_",)
    ),
    Rule("cerebras-api-key", r"\bcsk-(?=[a-z]*\d)[a-z0-9]{40,}\b", ("csk-",)),
    Rule("gcs-hmac-access-id", r"\bGOOG(?=[0-9A-Z]*\d)[0-9A-Z]{20,}\b", ("goog",)),
    Rule(
        # an HMAC key's secret: 40 base64 characters after its access id
        "gcs-hmac-secret",
        r"\bGOOG(?=[0-9A-Z]*\d)[0-9A-Z]{20,}\b[^\n]{0,80}?(?<![A-Za-z0-9+/])"
        r"((?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])",
        ("goog",),
    ),
    Rule("fcm-server-key", r"\bAAAA[\w-]{7}:APA91b[\w-]{100,}", ("apa91b",)),
    Rule("azure-devops-pat", r"\b[A-Za-z0-9]{70,80}AZDO[A-Za-z0-9]{4}\b", ("azdo",)),
    Rule("deno-deploy-token", r"\bdd[pw]_(?=[A-Za-z]*\d)[A-Za-z0-9]{36}\b", ("ddp_", "ddw_")),
    Rule("mailersend-api-token", r"\bmlsn\.[a-f0-9]{64}\b", ("mlsn.",)),
    Rule("contentful-pat", r"\bCFPAT-[\w-]{40,}", ("cfpat-",)),
    Rule("clickup-api-token", r"\bpk_\d{6,}_[A-Z0-9]{32}\b", ("pk_",)),
    Rule("dbt-cloud-token", r"\bdbt[cu]_(?=[\w-]*\d)[\w-]{30,}", ("dbtc_", "dbtu_")),
    Rule("sumup-api-key", r"\bsup_sk_[A-Za-z0-9]{30,}\b", ("sup_sk_",)),
    Rule("typeform-pat", r"\btfp_(?=[\w.=-]*\d)[\w.=-]{40,}", ("tfp_",)),
    Rule(
        "stytch-secret",
        r"\bsecret-(?:live|test)-(?=[\w=-]*\d)[\w=-]{30,}",
        ("secret-live-", "secret-test-"),
    ),
    Rule("asana-pat", r"(?<![\w/])[12]/\d{10,20}/\d{10,20}:[0-9a-f]{32}\b", ("1/", "2/")),
    Rule("scaleway-access-key", r"\bSCW(?=[A-Z]*\d)[A-Z0-9]{17}\b", ("scw",)),
    Rule(
        # Consul / Nomad ACL tokens are UUIDs printed as `SecretID` / `Secret ID`
        "acl-token",
        r"(?i)\bsecret[ _-]?id[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
        ("secretid", "secret id", "secret_id", "secret-id"),
    ),
    # a Wi-Fi network's QR code text: `WIFI:T:WPA;S:<network>;P:<password>;;`
    Rule(
        "wifi-password",
        r"(?i)\bWIFI:(?:[A-Z]{1,2}:(?:\\.|[^;\\\n]){0,100};){0,6}?P:((?:\\.|[^;\\\n]){1,200});",
        ("wifi:",),
        check=_wifi_password,
    ),
    # newer providers' hex tokens (E2B, Daytona, Linear OAuth, ElevenLabs, LlamaCloud)
    Rule("e2b-api-key", r"\be2b_[0-9a-f]{40}\b", ("e2b_",)),
    Rule("daytona-api-key", r"\bdtn_[0-9a-f]{64}\b", ("dtn_",)),
    Rule("linear-oauth-token", r"\blin_oauth_[0-9a-f]{64}\b", ("lin_oauth_",)),
    Rule("elevenlabs-api-key", r"\bsk_[0-9a-f]{48}\b", ("sk_",)),
    Rule("llamacloud-api-key", r"\bllx-(?=[\w-]*\d)[A-Za-z0-9]{40,}\b", ("llx-",)),
    Rule("tencent-secret-id", r"\bAKID(?=[A-Za-z]*\d)[A-Za-z0-9]{32}\b", ("akid",)),
    # Volcengine (and Kingsoft Cloud) access key ids: `AKLT` (`AKTP` for an STS key) and a
    # base64 body, 20 characters at the least (Volcengine's are 43); JD Cloud's: `JDC_` and 28
    Rule(
        "volcengine-access-key-id",
        r"\bAK(?:LT|TP)(?=[A-Za-z+/]{0,59}\d)[A-Za-z0-9+/]{20,60}={0,2}(?![A-Za-z0-9+/=])",
        ("aklt", "aktp"),
    ),
    Rule("jdcloud-access-key-id", r"\bJDC_(?=[A-Z]{0,27}\d)[0-9A-Z]{28}\b", ("jdc_",)),
    # Yandex Cloud's static access key ids (`YCAJ…`, 25 characters) and Alibaba Cloud's STS
    # ones (`STS.N…`), with a digit in their body
    Rule("yandex-access-key-id", r"\bYCAJ(?=[\w-]{0,20}\d)[\w-]{18,24}(?![\w-])", ("ycaj",)),
    # and their secret keys: `YC` and 38 characters of both cases with a digit (gitleaks
    # wants `yandex` beside it)
    Rule(
        "yandex-aws-access-token",
        r"\bYC(?=[\w-]{0,37}\d)(?=[\w-]{0,37}[a-z])(?=[\w-]{0,37}[A-Z])[\w-]{38}(?![\w-])",
        ("yc",),
        check=_random_body,
    ),
    Rule(
        "alibaba-sts-access-key-id",
        r"\bSTS\.N(?=[A-Za-z]{0,40}\d)(?=[a-z0-9]{0,40}[A-Z])[A-Za-z0-9]{20,40}\b",
        ("sts.n",),
    ),
    # any provider's token: a prefix of lower-case words (`tgp_v1_`, `ory_pat_`,
    # `sb_secret_`, `apify_api_`, next year's `xyz_live_`) before a long random body of both
    # cases and digits; the prefix's words and the body are judged in code (`prefixed.py`)
    Rule(
        "prefixed-token",
        # (not from an escape's letter: `\tghp_…` is a tab, then a token)
        r"(?<![\w.+/-])(?!(?<=\\)[ntr])((?:[a-z][a-z0-9]{1,11}[_-]){1,3})"
        r"([A-Za-z0-9][\w-]{27,199})(?![\w+/=-])",
        ("_", "-"),
        groups=(0,),
        check=check_prefixed,
        gate=gate,
    ),
]


def check_sourcegraph(secret: str, m: re.Match[str]) -> bool:
    """gitleaks' Sourcegraph rule takes any 40 hex digits in a text naming Sourcegraph: a
    bare run of lower-case hex (a git id's shape) is one only on a line that names it."""
    if not all(c in "0123456789abcdef" for c in secret):
        return True  # a token's prefix, or hex of both cases: no git id
    text = m.string
    start = text.rfind("\n", 0, m.start()) + 1
    stop = text.find("\n", m.end())
    line = text[start : stop if stop != -1 else len(text)].lower()
    return "sourcegraph" in line or "sgp_" in line or "sgs_" in line
