"""More fakes for the corpus: tokens of providers whose prefixes no rule names (a lower-case
prefix of one to three words, then a long random body: next year's providers look like this),
and newer providers' hex tokens, bare in prose and logs, where no key names them.
Generated, never real."""

from __future__ import annotations

from collections.abc import Callable

from tests.secret_corpus import ALNUM, HEX, URLSAFE, Gen


def _prefix(g: Gen, words: int) -> str:
    """A made-up provider's prefix: `qzv_`, `kto_live_`, `wmb-v2-`."""
    sep = g.rng.choice("_-")
    parts = [g.s("bcdfghjklmnpqrstvwxz", g.rng.randint(2, 5)) for _ in range(words)]
    if words > 1 and g.rng.random() < 0.5:
        parts[-1] = g.rng.choice(["v1", "v2", "live", "prod", "pat", "sk", "api"])
    return sep.join(parts) + sep


def _body(g: Gen, n: int) -> str:
    """A random body with both cases and a digit (what base62 gives nearly always)."""
    while True:
        out = g.s(ALNUM, n)
        if all(any(f(c) for c in out) for f in (str.isdigit, str.isupper, str.islower)):
            return out


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    out: list[tuple[str, Callable[[str], str], str]] = []
    shapes: list[Callable[[str], str]] = [
        lambda s: f"request failed: 401 Unauthorized for token {s}",
        lambda s: f"curl -s https://api.internal.dev/v1/runs -H 'X-Auth: {s}'",
        lambda s: f'{{"config": {{"client": "{s}"}}}}',
        lambda s: f"  File \"run.py\", line 3, in <module>\n    client = Client('{s}')",
        lambda s: f"| staging | {s} | rotated |",
        lambda s: f"using {s}.",
    ]
    for i, shape in enumerate(shapes):
        words = 1 + i % 3
        out.append((f"prefixed-{i}", shape, _prefix(g, words) + _body(g, 28 + 7 * i)))
    # a body with the provider's own separators inside (`sb_secret_<a>-<b>_<c>`)
    body = _body(g, 14) + "-" + _body(g, 8) + "_" + _body(g, 9)
    out.append(("prefixed-dashed", lambda s: f"SUPA={s}", "sb_secret_" + body))
    out += [
        ("e2b", lambda s: f"sandbox create failed ({s})", "e2b_" + t(HEX, 40)),
        ("daytona", lambda s: f"daytona: invalid key {s}", "dtn_" + t(HEX, 64)),
        ("linear-oauth", lambda s: f"Bearer-less call with {s}", "lin_oauth_" + t(HEX, 64)),
        ("elevenlabs", lambda s: f"tts error; key={s!r}", "sk_" + t(HEX, 48)),
        ("llamacloud", lambda s: f"LlamaParse({s})", "llx-" + _body(g, 48)),
        ("tencent-id", lambda s: f"SecretId {s} denied", "AKID" + _body(g, 32)),
        ("together", lambda s: f"client = Together(api_key={s!r})", "tgp_v1_" + t(URLSAFE, 43)),
    ]
    return out
