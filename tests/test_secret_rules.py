"""The rule set: gitleaks' default rules ported as data, each compiling and each catching a
sample of its own format; gitimprove's own rules beside them; lazy compilation."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import time
import warnings
from types import ModuleType

import pytest

from gitimprove import redaction
from gitimprove.redaction import (
    engine,
)
from tests.conftest import ROOT
from tests.regex_samples import sample
from tests.secret_corpus import windows

GITLEAKS = engine.load_gitleaks()
MARKERS = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen", ROOT / "scripts" / "gen_secret_rules.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rule_modules() -> list[ModuleType]:
    """The modules of gitimprove.redaction that define rules (`RULES`), found, not listed."""
    import pkgutil

    found = []
    for info in pkgutil.iter_modules(redaction.__path__):
        module = importlib.import_module(f"gitimprove.redaction.{info.name}")
        if isinstance(getattr(module, "RULES", None), list | tuple):
            found.append(module)
    return found


def test_every_rule_and_allowlist_compiles_without_warnings() -> None:
    rules = redaction.ruleset().rules
    ours = [rule for module in _rule_modules() for rule in module.RULES]
    # every module of the package that defines rules is in the rule set: one written and
    # left out of `redaction.ruleset()` would mask nothing
    assert {r.id for r in ours} <= {r.id for r in rules}
    assert len(GITLEAKS) >= 200 and len(rules) == len(GITLEAKS) + len(ours)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a nested-set FutureWarning is a translation bug
        for rule in rules:
            re.compile(rule.regex, rule.flags)
            assert rule.keywords, f"{rule.id} has no keyword: it would run on every text"
            assert all(k == k.lower() for k in rule.keywords), rule.id
            for allow in rule.allow:
                for r in allow.regexes:
                    re.compile(r)


def test_the_shipped_rules_are_generated_from_the_vendored_gitleaks_config() -> None:
    gen = _script()
    toml = (ROOT / "scripts" / "gitleaks" / "gitleaks.toml").read_text(encoding="utf-8")
    shipped = (ROOT / "gitimprove" / "resources" / "secrets" / "gitleaks.json").read_text()
    assert gen.render(gen.build(toml)) == shipped, "run: python scripts/gen_secret_rules.py"
    data = json.loads(shipped)
    ids = {r["id"] for r in data["rules"]}
    upstream = re.findall(r'^id = "([^"]+)"', toml, re.M)
    assert ids | {s["id"] for s in data["skipped"]} == set(upstream)
    licence = (ROOT / "gitimprove" / "resources" / "secrets" / "LICENSE-gitleaks").read_text()
    assert "MIT License" in licence and data["source"]["commit"] in licence


@pytest.mark.parametrize(
    ("go", "python"),
    [
        (r"dp\.pt\.(?i)[a-z0-9]{43}", r"dp\.pt\.(?i:[a-z0-9]{43})"),
        (r"\b(p8e-(?i)[a-z0-9]{32})(?:x|$)", r"\b(p8e-(?i:[a-z0-9]{32}))(?:x|$)"),
        # RE2 keeps a flag to the end of its group, across the alternatives that follow
        (r"(?:a(?i)b|c)d", r"(?:a(?i:b)|(?i:c))d"),
        (r"x(?i)y|z", r"x(?i:y)|(?i:z)"),
        (r"(?i)\b(pw_(?i)[a-z]{3})", r"(?i)\b(pw_(?i:[a-z]{3}))"),
        (r"(?:[^\w-]|\z)", r"(?:[^\w-]|\Z)"),
        (r"\b(pat[[:alnum:]]{14})", r"\b(pat[a-zA-Z0-9]{14})"),
        (r"[^]]+[[a]", r"[^]]+[\[a]"),
        (r"a(?-i:acc)b", r"a(?-i:acc)b"),
    ],
)
def test_re2_syntax_becomes_python_syntax(go: str, python: str) -> None:
    out = _script().translate(go)
    assert out == python
    re.compile(out)


def _keyword_context(rule: engine.Rule) -> str:
    """gitleaks runs a rule only on text holding one of its keywords, as a real file would."""
    return f"{rule.keywords[0]} settings failed to load:\n"


@pytest.mark.parametrize("rule", GITLEAKS, ids=[r.id for r in GITLEAKS])
def test_every_gitleaks_rule_catches_a_sample_of_its_format(rule: engine.Rule) -> None:
    rng = random.Random(rule.id)
    rs = redaction.ruleset()
    for _ in range(200):
        text = sample(rule.regex, rule.flags, rng)
        found = list(rs._rule_spans(rule, text))
        if found:
            break
    else:
        pytest.fail(f"no sample of {rule.id} passes its own entropy and allowlists")
    secret = text[found[0].start : found[0].end]
    ctx = _keyword_context(rule)
    for doc in (ctx + text + "\nretrying", json.dumps({"error": ctx + text}) + "\n"):
        masked = redaction.redact_blob(doc.encode()).decode()
        left = MARKERS.sub("", masked)
        assert not [w for w in windows(secret) if w in left and w not in ctx], (rule.id, masked)


def test_rules_compile_only_when_their_keyword_occurs() -> None:
    patterns = {r.regex for r in redaction.ruleset().rules}

    def compiled_rules() -> list[str]:
        return [regex for regex, _ in engine._compiled if regex in patterns]

    engine._compiled.clear()
    quiet = "Bash failed: Exit code 2\nmake: *** [check] Error 2"
    assert redaction.redact(quiet) == quiet
    assert len(compiled_rules()) <= 2, compiled_rules()
    gh = "ghp_" + "k3Jd9QmZ2xW7pL4vB8nR1tY6cF5hG0sA2eU4"
    assert redaction.redact(f"push failed with {gh}") == (
        f"push failed with {redaction.marker('github-pat', gh)}"
    )
    # (GitHub's rules, and the ones for a token glued to its neighbours or cut short)
    assert len(compiled_rules()) <= 7, compiled_rules()


ADVERSARIAL = [
    "key=" * 5000,
    "password: " + "a" * 40000,
    "curl " + "-x y " * 4000 + "\n" * 50,
    "a" * 30000 + "token" + "b" * 30000,
    "-----BEGIN RSA PRIVATE KEY-----" + "A" * 40000,
    "https://" + "u:" * 10000 + "@",
    ("machine h login u " * 2000),
    '{"auth": "' + "x" * 30000,
    "secret " * 6000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_no_rule_backtracks_for_ever_on_hostile_text(text: str) -> None:
    """RE2 runs every pattern in linear time; Python's engine does not, so the patterns that
    would backtrack (nested repeats) were rewritten. A hostile 40 KB text is masked in far
    less than a second per rule (generous: a shared, loaded machine)."""
    rs = redaction.ruleset()
    for rule in rs.candidates(text.lower()):
        start = time.perf_counter()
        list(rs._rule_spans(rule, text))
        assert time.perf_counter() - start < 2.0, rule.id


def test_marker_names_the_rule_and_a_stable_hash() -> None:
    a = "ghp_" + "Q2w3E4r5T6y7U8i9O0p1A2s3D4f5G6h7J8k9"
    b = "ghp_" + "Z9x8C7v6B5n4M3l2K1j0H9g8F7d6S5a4P3o2"
    out = redaction.redact(f"{a} then {b} then {a} again")
    markers = MARKERS.findall(out)
    assert markers[0] == markers[2] != markers[1]
    assert markers[0].startswith("[REDACTED:github-pat:")
    assert redaction.redact(out) == out  # masking twice changes nothing


def test_context_rules_leave_code_and_prose_alone() -> None:
    ordinary = [
        "pwd = os.getcwd()",
        "token = next_token",
        "password: str",
        "def login(password): return check(password)",
        "client_secret: env.AUTH0_CLIENT_SECRET",
        "TOKEN=$GITHUB_TOKEN",
        "api_key: ${{ secrets.API_KEY }}",
        "total_tokens: 19831",
        "max_tokens=4096",
        "All quality gates pass: ruff, mypy, pytest",
        "the token is expired, log in again",
        "use --token to pass the token",
        "password = getpass.getpass()",
        'password = os.environ["DB_PASSWORD"]',
        "Basic authentication is disabled",
        "Authorization: Bearer <your-token>",
        "postgres://user:${DB_PASSWORD}@db:5432/app",
        "session_id: 7f3a2c9e-1b4d-4e8f-9a6b-2c1d3e4f5a6b",
        "sealed_tree: 9c1e0f2a7b3d4c5e6f708192a3b4c5d6e7f80912",
        "secret_key_base: dev-only-secret-not-for-production-use",
        "key = lambda row: row[0]",
        "SELECT * FROM users WHERE password_hash = ?",
        "(phoenix 1.8.3) lib/phoenix/token.ex:266: Phoenix.Token.get_endpoint_key_base/1",
        "Authorization: Basic/Bearer/Token headers",
        'TOKEN="${SPOTTER_REVIEW_TOKEN:-}"',
        'PORT="${SPOTTER_PORT:-1100}"',
    ]
    for text in ordinary:
        assert redaction.redact(text) == text, text
    assert redaction.redact("password: 1234:5678").startswith("password: [REDACTED:password:")
    masked = redaction.redact('DB_PASSWORD="${DB_PASSWORD:-Xk3v9Qp2Lm}"')
    assert "Xk3v9Qp2Lm" not in masked and "[REDACTED:" in masked
