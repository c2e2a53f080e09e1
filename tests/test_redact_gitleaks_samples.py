"""gitleaks' own samples (tests/fixtures/gitleaks-samples): what its rules must find is masked;
what they must leave alone — placeholders, names in code, real configuration — passes through,
but for the kinds listed below, each with the reason a mask there is right or still open."""

from __future__ import annotations

import json
import re

import pytest

from gitimprove.redaction import engine, redact, redact_blob
from tests.conftest import ROOT

DATA = json.loads((ROOT / "tests" / "fixtures" / "gitleaks-samples" / "samples.json").read_text())
FOUND = DATA["true_positives"]
LEFT = DATA["false_positives"]

# true positives that are not a secret on their own
NOT_SECRETS = {
    "ABSKQmVkcm9ja0FQSUtleS1EXAMPLE": "an AWS documentation example (EXAMPLE), public by design",
    '"type": "service_account"': "the line that tells a GCP key file, without the key",
}
# gitleaks' false positives a mask may take, and why
MAY_MASK = {
    # a key of its provider's format that gitleaks allowlists by value or judges too regular:
    # masking a published key loses nothing a reader needs
    "AIza": "Google's published browser keys (gitleaks lists them by value)",
    "sk-ant-": "Anthropic keys of the real format with a regular body",
    "meraki": "a 40/64-hex value under a Meraki key name",
    "MailchimpSDK": "a Mailchimp key of the real format",
    "adf4b1db": "a ClickHouse key of the real format under `key =`",
    "ATABRICKS_TOK": "a Databricks token of the real format",
    ",apiKey:": "32 hex under apiKey",
    "csrf-token=": "a CSRF token (a session's secret)",
    'type="hidden" name="authenticity': "a Rails CSRF token, a session's secret",
    "CloudFront-Signature": "a signed URL's signature",
    "USK@": "a Freenet key with an Azure-like secret in it",
    "AbCeFG123": "a value under SUMO_ACCESS_KEY",
    "ops_eyJ": "a 1Password service-account token cut short",
    "xoxp-1234-1234-1234-": "a Slack token with a random part",
    "xoxp-572370529330": "a Slack token of the real format",
    "sgp_5555": "a Sourcegraph token of the real format",
    "Authorization: Basic eyJ": "a JWT sent as Basic credentials",
    # still masked by mistake (docs/secrets.md, "What is left")
    "xoxp-1234567890": "a fake of the real format (digits in order), masked as a real one is",
}
_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")
GITLEAKS = engine.load_gitleaks()


def _secrets(text: str) -> set[str]:
    """What gitleaks' own rules find in `text`: each rule's secret group, where it passes the
    rule's entropy."""
    found = set()
    for rule in GITLEAKS:
        if not any(k in text.lower() for k in rule.keywords):
            continue
        for m in re.finditer(rule.regex, text, rule.flags):
            start, end = engine._secret_span(m, rule.groups)
            secret = text[start:end].strip("\"'`")
            if len(secret) >= 8 and not (rule.entropy and engine.entropy(secret) <= rule.entropy):
                found.add(secret)
    return found


@pytest.mark.parametrize(
    "sample", FOUND, ids=[f"{s['rule_file']}-{i}" for i, s in enumerate(FOUND)]
)
def test_what_gitleaks_must_find_is_masked(sample: dict[str, str]) -> None:
    text = sample["text"]
    if any(k in text for k in NOT_SECRETS):
        return
    masked = redact(text)
    assert _MARKER.search(masked), (sample["rule_file"], text)
    # (`"password":"password"`: a value that repeats its key is a placeholder, left as it is)
    left = [s for s in _secrets(text) if s in masked and s != "password"]
    assert left == [], (sample["rule_file"], masked)


def test_what_gitleaks_leaves_alone_passes_through() -> None:
    masked_by_mistake = []
    for sample in LEFT:
        text = sample["text"]
        if redact(text) != text and not any(k in text for k in MAY_MASK):
            masked_by_mistake.append((sample["rule_file"], text[:120], redact(text)[:120]))
    assert masked_by_mistake == []
    # the placeholders and names the stand-in rule exists for (redaction/standins.py)
    for text in (
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "glpat-XXXXXXXXXXX-XXXXXXXX",
        "key = AKIAXXXXXXXXXXXXXXXX",
        'PREFECT_API_KEY = "pnu_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"',
        'API_KEY="glc_111111111111111111111111111111111111111111="',
        "static void GLC_CreateLightmapTexturesIndividual(void);",
        "- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",
    ):
        assert redact(text) == text, text


def test_what_gitleaks_finds_is_masked_in_every_syntax() -> None:
    """The secret each sample holds, written again as env, JSON, YAML, a header, a URL's
    password, a query, a flag, a `.netrc` line and prose (`tests/secret_corpus_gitleaks.py`),
    is masked there too, as raw text and as a JSON record's string."""
    from tests.secret_corpus import windows
    from tests.secret_corpus_gitleaks import SYNTAXES, gitleaks_fakes

    fakes = gitleaks_fakes()
    written = {f.family.rsplit("-", 1)[-1] for f in fakes}
    assert len(fakes) >= 150 and set(SYNTAXES) <= written
    left = []
    for f in fakes:
        out = redact(f.text)
        record = json.loads(redact_blob(json.dumps({"c": f.text}).encode()))["c"]
        pieces = [w for w in windows(f.secret) if w not in f.text.replace(f.secret, "")]
        if any(w in out or w in record for w in pieces):
            left.append((f.family, f.text[:80]))
    assert left == []
