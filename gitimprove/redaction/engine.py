"""Finding secrets in text: rules as data, a keyword prefilter, and patterns compiled lazily.

A rule (gitleaks' shape) is a regex, the keywords one of which must occur in the text for the
regex to be worth running, an optional entropy floor for the secret, the capture group that
holds the secret (else the first non-empty group, else the whole match) and allowlists.
Loading the ~250 rules is reading one JSON file; only the rules whose keyword occurs in a text
are compiled, once per process, so a hook that masks a short error message compiles a few.
"""

from __future__ import annotations

import json
import math
import os
import re

from gitimprove.redaction.ends import GITLEAKS_END as GITLEAKS_END
from gitimprove.redaction.ends import TOKEN_END as TOKEN_END
from gitimprove.redaction.ends import token_end as token_end
from gitimprove.redaction.ends import value_end
from gitimprove.redaction.public import published
from gitimprove.redaction.standins import stand_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "resources", "secrets")
GITLEAKS = os.path.join(DATA, "gitleaks.json")
# What a secret becomes (the hash part is optional: markers of older versions had none).
MARKER = r"\[REDACTED:[a-z0-9-]+(?::[0-9a-f]{4})?\]"
# Specific provider formats name the secret best; context rules next; gitleaks' catch-all last.
SPECIFIC, CONTEXT, GENERIC = 0, 1, 2
GENERIC_IDS = frozenset({"generic-api-key"})


# Plain classes, not dataclasses: importing `dataclasses` costs a hook several milliseconds.


class Allow:
    """Findings this matches are not secrets (gitleaks' allowlist, path-free parts)."""

    __slots__ = ("regexes", "stopwords", "target")

    def __init__(
        self, target: str = "secret", regexes: tuple[str, ...] = (), stopwords: tuple[str, ...] = ()
    ) -> None:
        self.target = target  # secret | match | line
        self.regexes = regexes
        self.stopwords = stopwords

    def stopword_in(self, lower: str) -> bool:
        return any(map(lower.__contains__, self.stopwords))  # no generator: ~1,500 words


class Rule:
    """One rule. `groups` say where the secret is (the first that matched; else the first
    non-empty group, else the whole match); `check` lets a context rule decide with code
    what a regex cannot say (`token = next_token` is code, not a credential), and may name the
    kind of what it found."""

    __slots__ = (
        "allow",
        "check",
        "entropy",
        "expand",
        "flags",
        "gate",
        "groups",
        "id",
        "keywords",
        "near",
        "needs",
        "priority",
        "regex",
        "whole",
    )

    def __init__(
        self,
        id: str,
        regex: str,
        keywords: tuple[str, ...],
        *,
        entropy: float = 0.0,
        groups: tuple[int | str, ...] = (),
        allow: tuple[Allow, ...] = (),
        priority: int = SPECIFIC,
        flags: int = re.ASCII,
        check: Callable[[str, re.Match[str]], bool | str] | None = None,
        near: int = 0,
        expand: Callable[[re.Match[str]], Iterable[tuple[int, int]]] | None = None,
        needs: tuple[str, ...] = (),
        gate: Callable[[str], bool] | None = None,
        whole: bool = False,
    ) -> None:
        self.id = id
        # the rule finds a value's own bounds (a table's cell, a braced value): no syntax
        # ends it earlier
        self.whole = whole
        # a keyword that nearly every text holds (a seed phrase's blank) needs a sharper
        # prefilter: code, run on the text before the rule is compiled
        self.gate = gate
        self.expand = expand  # a match holding several secrets (a table): where they are
        # beside a keyword, one of these must occur for a match to be possible (a quote, a
        # table's separator): a text without one does not compile the rule
        self.needs = needs
        self.near = near  # >0: a match starts at most this far before one of its keywords
        self.regex = regex
        self.keywords = keywords
        self.entropy = entropy
        self.groups = groups
        self.allow = allow
        self.priority = priority
        self.flags = flags
        self.check = check

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"


class Span:
    """Where a secret is in a text, and what kind it is."""

    __slots__ = ("end", "kind", "priority", "start")

    def __init__(self, start: int, end: int, kind: str, priority: int) -> None:
        self.start = start
        self.end = end
        self.kind = kind
        self.priority = priority

    def __repr__(self) -> str:
        return f"Span({self.start}, {self.end}, {self.kind!r})"


_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def compiled(regex: str, flags: int = re.ASCII) -> re.Pattern[str]:
    key = (regex, flags)
    found = _compiled.get(key)
    if found is None:
        from gitimprove.redaction.programs import compile_pattern

        found = _compiled[key] = compile_pattern(regex, flags)
    return found


def entropy(text: str) -> float:
    """Shannon entropy in bits per character, as gitleaks computes it."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for c in text:
        counts[c] = counts.get(c, 0) + 1
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _allow(raw: Iterable[dict[str, object]]) -> tuple[Allow, ...]:
    out = []
    for a in raw:
        regexes = a.get("regexes") or []
        stopwords = a.get("stopwords") or []
        assert isinstance(regexes, list) and isinstance(stopwords, list)
        out.append(Allow(str(a.get("target", "secret")), tuple(regexes), tuple(stopwords)))
    return tuple(out)


# a text up to this long is searched for keywords by the pairs of characters it holds
_PAIRS_UP_TO = 4096


class RuleSet:
    """Rules plus a keyword index: `candidates(text)` lists the rules worth running."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = list(rules)
        self.index: dict[str, list[int]] = {}
        self.always: list[int] = []
        for n, rule in enumerate(self.rules):
            if not rule.keywords:
                self.always.append(n)
            for kw in rule.keywords:
                self.index.setdefault(kw, []).append(n)
        self.keywords = tuple(self.index)
        # the keywords by their first two characters (those of one character apart): a short
        # text looks only for those starting with a pair it holds
        self._single = tuple(kw for kw in self.keywords if len(kw) == 1)
        self._by_pair: dict[str, list[str]] = {}
        for kw in self.keywords:
            if len(kw) > 1:
                self._by_pair.setdefault(kw[:2], []).append(kw)

    def present(self, lower: str, within: Sequence[str] | None = None) -> list[str]:
        """The keywords that occur in `lower` (a lower-cased text); `within` narrows the
        search to the keywords of a larger text holding this one."""
        if within is None and len(lower) <= _PAIRS_UP_TO:
            # (a line or two, as the views read around each line break: looking for a
            # thousand keywords in each cost most of the time of a long plain text)
            pairs = {lower[i : i + 2] for i in range(len(lower) - 1)}
            by_pair = self._by_pair
            maybe = [kw for pair in pairs if pair in by_pair for kw in by_pair[pair]]
            return [*filter(lower.__contains__, self._single), *filter(lower.__contains__, maybe)]
        return list(filter(lower.__contains__, self.keywords if within is None else within))

    def candidates(self, lower: str, within: Sequence[str] | None = None) -> list[Rule]:
        """The rules worth running on `lower`: those with a keyword in it."""
        hit = set(self.always)
        for kw in self.present(lower, within):
            hit.update(self.index[kw])
        return [self.rules[n] for n in sorted(hit)]

    def spans(
        self,
        text: str,
        rules: Iterable[Rule] | None = None,
        *,
        views: bool = True,
        literal_view: bool = True,
    ) -> list[Span]:
        """Findings in `text`; with `views`, also in what it says once colour codes,
        invisible characters, lookalike characters and line wraps are taken out."""
        lower = text.lower()
        if rules is None:
            rules = self.candidates(lower)
        out: list[Span] = []
        for rule in rules:
            if rule.needs and not any(n in text for n in rule.needs):
                continue
            if rule.gate is not None and not rule.gate(text):
                continue
            out.extend(self._rule_spans(rule, text, lower))
        if views and _may_be_dressed(text):
            from gitimprove.redaction import views as seen

            out.extend(seen.spans(self, text))
        if views and _may_be_encoded(text):
            from gitimprove.redaction import decoded

            out.extend(decoded.spans(self, text))
        if views and "\\" in text:
            from gitimprove.redaction import escapes

            out.extend(escapes.spans(self, text))
        # (a language's literals are syntax, not a disguise: read inside every other view)
        if literal_view and _may_hold_literal(text):
            from gitimprove.redaction import literals

            out.extend(literals.spans(self, text))
        if views and (
            compiled(r"[A-Za-z0-9+/_-]{16}").search(text)
            or compiled(r"(?i)base64|b64|atob|decode").search(text)  # a short one, decoded there
        ):
            from gitimprove.redaction import layers

            out.extend(layers.spans(self, text))
        return out

    def _rule_spans(self, rule: Rule, text: str, lower: str | None = None) -> Iterable[Span]:
        pattern = compiled(rule.regex, rule.flags)
        for m in _matches(pattern, rule, text, lower):
            if rule.expand is not None:
                for start, end in rule.expand(m):
                    if rule.priority != SPECIFIC and not rule.whole:
                        end = value_end(text, start, end)
                    while rule.priority != SPECIFIC and end - start > 1 and text[end - 1] in ".,)":
                        end -= 1
                    if (
                        start < end
                        and not published(text[start:end], text, start)
                        and not _stand_in(rule, text[start:end])
                    ):
                        yield Span(start, end, rule.id, rule.priority)
                continue
            start, end = _secret_span(m, rule.groups)
            q = text[start]
            if (
                end - start > 2
                and q in "\"'"
                and text[end - 1] == q
                and q not in text[start + 1 : end - 1]
            ):
                start, end = start + 1, end - 1  # the quotes around a secret are not part of it
            if (
                rule.priority != SPECIFIC and not rule.whole
            ):  # a value ends where its syntax ends it
                end = value_end(text, start, end)
            if start >= end:
                continue
            secret = text[start:end]
            if rule.entropy and entropy(secret) <= rule.entropy:
                continue
            # (a match's `token` group, where it has one, is what a stand-in is judged by: a
            # token glued to a run of filler is no placeholder for it)
            judged = m.group("token") if "token" in m.re.groupindex else None
            if published(secret, text, start) or _stand_in(rule, judged or secret):
                continue
            if rule.priority == SPECIFIC and _in_file_name(text, start, end):
                continue
            verdict = rule.check(secret, m) if rule.check is not None else True
            if not verdict:
                continue
            if _allowed(rule.allow, secret, m, text):
                continue
            # judged with it, masked without it: a final `.`, `,` or `)` is the sentence's
            while rule.priority != SPECIFIC and end - start > 1 and text[end - 1] in ".,)":
                end -= 1
            yield Span(start, end, verdict if isinstance(verdict, str) else rule.id, rule.priority)


# what an encoding, a concatenation or a YAML block scalar leaves in a text
_ENCODING_MARKS: tuple[str, ...] = ("%", "&", "\\u", "\\x", '" +', "' +", '"+', "'+", '" .')
_ENCODING_MARKS += (
    "' .",
    '"\n',
    "'\n",
    ">\n",
    "|\n",
    "-\n",
    "+\n",
    '\\"',
    '"""',
    "'''",
    "\\\n",
    '"\r\n',
    "'\r\n",
    "\\\r\n",
)


def _may_be_encoded(text: str) -> bool:
    """Whether `text` may say more once decoded (so that plain text does not load the
    decoded view)."""
    return any(mark in text for mark in _ENCODING_MARKS) or (
        # a quoted token running to a line's end: it may go on on the next line
        compiled(r"[\"'][\w+/=.-]{4,}\r?\n").search(text) is not None
    )


# where a language's own string syntax or a value on the next line may be (`literals.py`)
_LITERAL_MARKS: tuple[str, ...] = (
    'r"',
    "r#",
    'R"',
    '@"',
    "@'",
    '$"',
    "q{",
    "q(",
    "q[",
    "q<",
    "q/",
    "q|",
    "%q",
)
_LITERAL_MARKS += ("%Q", "%(", "%[", "%{", "`", "<<", ":\n", ":\r\n", 'b"', "b'", 'f"', "f'")
_LITERAL_MARKS += ('u"', "q!", "q^", "q~")


def _may_hold_literal(text: str) -> bool:
    return any(mark in text for mark in _LITERAL_MARKS)


def _may_be_dressed(text: str) -> bool:
    """Whether `text` may say more once escapes, lookalikes or line breaks are taken out
    (a cheap test, so that plain one-line text does not load `views`)."""
    return not text.isascii() or "\n" in text or "\x1b" in text or "\\" in text


# how far past its keyword a match of a `near` rule may reach (identifier, operator, value)
_REACH = 640


# gitleaks' rules that read a command over its continuation lines (`curl … \` then `-u …`):
# its first line is taken whole before the lines after it are tried, so a match starting at
# one `curl` reaches the `-u` of the next `curl` down, and the first one's is lost
_NEXT_LINES = "(?:[\\r\\n]{1,2}[^\\r\\n]*"


def _on_fewest_lines(pattern: re.Pattern[str], text: str) -> Iterable[re.Match[str]]:
    """The matches of `pattern`, each ending on the first line where one from its start can:
    the next is looked for after it."""
    pos = 0
    while pos <= len(text):
        m = pattern.search(text, pos)
        if m is None:
            return
        nl = text.find("\n", m.start())
        while -1 < nl < m.end():
            shorter = pattern.match(text, m.start(), nl)
            if shorter is not None:
                m = shorter
                break
            nl = text.find("\n", nl + 1)
        yield m
        pos = m.end() if m.end() > m.start() else m.end() + 1


def _matches(
    pattern: re.Pattern[str], rule: Rule, text: str, lower: str | None
) -> Iterable[re.Match[str]]:
    """The matches of `pattern` in `text`. A rule whose match holds its keyword and starts
    at most `near` characters before it (gitleaks' `<identifier with keyword> = <secret>`
    rules, whose lazy identifier prefixes make a scan of every position slow) is only tried
    at the positions before each keyword (lookbehinds still see the text before them)."""
    if _NEXT_LINES in rule.regex:
        yield from _on_fewest_lines(pattern, text)
        return
    if not rule.near or lower is None or len(lower) != len(text):
        yield from pattern.finditer(text)
        return
    found = sorted({(at, len(kw)) for kw in rule.keywords for at in _occurrences(lower, kw)})
    if len(found) * (rule.near + 1) > len(text):  # keywords everywhere: one scan is cheaper
        yield from pattern.finditer(text)
        return
    done = 0  # matches do not overlap: none starts before the end of the last one
    for at, n in found:
        if at < done:
            continue
        stop = min(len(text), at + n + _REACH)
        for pos in range(max(done, at - rule.near), at + 1):
            m = pattern.match(text, pos, stop)
            if m is None:
                continue
            if m.end() == stop < len(text):  # the window cut it: match again, unbounded
                m = pattern.match(text, pos) or m
            yield m
            done = max(m.end(), pos + 1)
            break


def _occurrences(lower: str, kw: str) -> Iterable[int]:
    at = lower.find(kw)
    while at != -1:
        yield at
        at = lower.find(kw, at + 1)


_NEAR = re.compile(r"^(?:\(\?i\))?\[\\w\.-\]\{0,(\d+)\}\?")


def _stand_in(rule: Rule, secret: str) -> bool:
    """A placeholder or a name in code where the rule expects a random token (standins.py):
    a provider's rule knows its prefix; a value after a credential's key is judged alone."""
    if rule.priority == SPECIFIC:
        low = secret.lower()
        prefix = next((k for k in rule.keywords if low.startswith(k)), "")
        return stand_in(secret, prefix)
    return stand_in(secret)


# what a web page's or a document's file is named with: its content's hash, its title
_ASSET = (
    r"\.(?:png|jpe?g|gif|svg|webp|ico|bmp|avif|css|js|mjs|map|html?|pdf|mp[34]|webm|woff2?|"
    r"ttf|eot|otf)(?![\w.-])"
)


def _in_file_name(text: str, start: int, end: int) -> bool:
    """A provider-like prefix inside a file's name (`2018-250-xoxo-indieweb-1.jpg`,
    `video_box.ico-<content hash>.png`): the match runs up to an asset's extension and is
    joined to a name or a path before it."""
    if start == 0 or text[start - 1] not in "-_./":
        return False
    return compiled(_ASSET, re.ASCII | re.IGNORECASE).match(text, end) is not None


def _secret_span(m: re.Match[str], groups: tuple[int | str, ...]) -> tuple[int, int]:
    for g in groups or range(1, (m.re.groups or 0) + 1):
        if m.group(g):
            return m.span(g)
    start, end = m.span()
    # gitleaks trims newlines off a whole-match secret
    while start < end and m.string[start] == "\n":
        start += 1
    while end > start and m.string[end - 1] == "\n":
        end -= 1
    return start, end


def _allowed(allows: Sequence[Allow], secret: str, m: re.Match[str], text: str) -> bool:
    for a in allows:
        if a.stopwords and a.stopword_in(secret.lower()):
            return True
        if a.regexes:
            if a.target == "match":
                target = m.group(0)
            elif a.target == "line":
                start = text.rfind("\n", 0, m.start()) + 1
                stop = text.find("\n", m.end())
                target = text[start : stop if stop != -1 else len(text)]
            else:
                target = secret
            if compiled(_one_of(a.regexes)).search(target):
                return True
    return False


_joined: dict[tuple[str, ...], str] = {}


def _one_of(regexes: tuple[str, ...]) -> str:
    """An allowlist's regexes as one pattern: one compile and one search, not a dozen."""
    found = _joined.get(regexes)
    if found is None:
        parts = [f"(?i:{r[4:]})" if r.startswith("(?i)") else r for r in regexes]
        found = _joined[regexes] = "|".join(f"(?:{r})" for r in parts)
    return found


def _near(regex: str) -> int:
    m = _NEAR.match(regex)
    return int(m.group(1)) + 16 if m else 0


def load_gitleaks(path: str = GITLEAKS) -> list[Rule]:
    """gitleaks' default rules, ported as data by scripts/gen_secret_rules.py; its global
    allowlist joins each rule's own (it is part of gitleaks' configuration, not ours).
    Each pattern's terminator is widened by `token_end`."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    glob = _allow(data.get("allow", ()))
    return [
        Rule(
            id=r["id"],
            regex=r["regex"] if r["id"] in GENERIC_IDS else token_end(r["regex"]),
            keywords=tuple(r["keywords"]),
            entropy=float(r.get("entropy", 0.0)),
            groups=(int(r["group"]),) if r.get("group") else (),
            allow=_allow(r.get("allow", ())) + glob,
            priority=GENERIC if r["id"] in GENERIC_IDS else SPECIFIC,
            near=_near(r["regex"]),
        )
        for r in data["rules"]
    ]
