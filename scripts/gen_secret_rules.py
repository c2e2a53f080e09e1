"""Port gitleaks' default rules to the data file gitimprove's redactor loads.

    python scripts/gen_secret_rules.py [scripts/gitleaks/gitleaks.toml]

reads gitleaks' `config/gitleaks.toml` (vendored beside this script with gitleaks' MIT
licence) and writes `gitimprove/resources/secrets/gitleaks.json`: every rule that has a
content regex, its keywords, entropy threshold, secret group and the allowlists that can
apply to text without a file path. The regexes are translated from
Go's RE2 syntax to Python's `re` (the redactor compiles them with `re.ASCII`, as RE2's
classes are ASCII):

- a flag group in the middle of a pattern, `ab(?i)cd`, holds to the end of its group in
  RE2; Python only allows flags at the start, so it becomes a scoped group `ab(?i:cd)`
  (one per alternative that follows it);
- `\\z` becomes `\\Z`; POSIX classes (`[[:alnum:]]`) are spelled out; a `[` inside a class
  is escaped (Python warns about nested sets);
- a few patterns that RE2 runs in linear time but a backtracking engine would not are
  rewritten to an equivalent without nested unbounded repeats (`SAFE`, below), each
  checked to still be present upstream so a change there is noticed.

To update: copy the new `config/gitleaks.toml` over the vendored one (noting the commit in
`SOURCE` below), run this script, and run `pytest tests/test_secret_rules.py`.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOML = ROOT / "scripts" / "gitleaks" / "gitleaks.toml"
OUT = ROOT / "gitimprove" / "resources" / "secrets" / "gitleaks.json"
SOURCE = {
    "project": "gitleaks",
    "url": "https://github.com/gitleaks/gitleaks",
    "file": "config/gitleaks.toml",
    "commit": "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b",
    "license": "MIT, Copyright (c) 2019 Zachary Rice (see LICENSE-gitleaks)",
}

POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "space": " \\t\\n\\r\\f\\v",
    "word": "a-zA-Z0-9_",
    "xdigit": "0-9a-fA-F",
    "punct": "!-/:-@\\[-`{-~",
}

# RE2 runs these in linear time; Python's engine backtracks through the nested repeats over
# several lines. Each rewrite matches the same texts (up to six lines after `curl`).
SAFE: dict[str, list[tuple[str, str]]] = {
    "curl-auth-header": [
        (r"(?:.*?|.*?(?:[\r\n]{1,2}.*?){1,5})", r"[^\r\n]*?(?:[\r\n]{1,2}[^\r\n]*?){0,5}?")
    ],
    "curl-auth-user": [
        (r"(?:.*|.*(?:[\r\n]{1,2}.*){1,5})", r"[^\r\n]*(?:[\r\n]{1,2}[^\r\n]*){0,5}?")
    ],
}


def _class_end(rx: str, i: int) -> int:
    """Index just past the character class opening at rx[i] == '['."""
    j = i + 1
    if j < len(rx) and rx[j] == "^":
        j += 1
    if j < len(rx) and rx[j] == "]":
        j += 1
    while j < len(rx):
        c = rx[j]
        if c == "\\":
            j += 2
            continue
        if c == "[" and rx.startswith("[:", j):
            end = rx.find(":]", j + 2)
            if end != -1:
                j = end + 2
                continue
        if c == "]":
            return j + 1
        j += 1
    raise ValueError(f"unterminated character class in {rx!r}")


def _translate_class(body: str) -> str:
    """The inside of a class, POSIX names spelled out and nested-set lookalikes escaped."""
    out = []
    j = 0
    while j < len(body):
        c = body[j]
        if c == "\\":
            out.append(body[j : j + 2])
            j += 2
            continue
        if body.startswith("[:", j):
            end = body.find(":]", j + 2)
            name = body[j + 2 : end]
            if end != -1 and name in POSIX:
                out.append(POSIX[name])
                j = end + 2
                continue
        if c == "[":
            out.append("\\[")
        elif c in "&~|" and j + 1 < len(body) and body[j + 1] == c:
            out.append("\\" + c)
        else:
            out.append(c)
        j += 1
    return "".join(out)


def _tokens(rx: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) for each token: 'esc', 'class', '(', ')', '|' or 'char'."""
    out = []
    i = 0
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            out.append((i, i + 2, "esc"))
            i += 2
        elif c == "[":
            end = _class_end(rx, i)
            out.append((i, end, "class"))
            i = end
        elif c in "()|":
            out.append((i, i + 1, c))
            i += 1
        else:
            out.append((i, i + 1, "char"))
            i += 1
    return out


_FLAGS = re.compile(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]*)?)\)")


def _scope_first_flag(rx: str) -> str | None:
    """Rewrite the first mid-pattern flag group as scoped groups; None when there is none."""
    toks = _tokens(rx)
    depth_at: list[int] = []
    depth = 0
    for _start, _, kind in toks:
        if kind == ")":
            depth -= 1
        depth_at.append(depth)
        if kind == "(":
            depth += 1
    for n, (start, _, kind) in enumerate(toks):
        if kind != "(":
            continue
        m = _FLAGS.match(rx, start)
        if not m or start == 0:
            continue
        level = depth_at[n] + 1  # the level of the tokens that follow, inside this group
        # the end of the enclosing group: the first ')' that closes below `level`
        stop = len(rx)
        k = n + 1
        while k < len(toks) and toks[k][0] < m.end():
            k += 1
        pieces: list[tuple[int, int]] = []
        piece_start = m.end()
        d = level - 1
        for s, _e, kd in toks[k:]:
            if kd == "(":
                d += 1
            elif kd == ")":
                if d == level - 1:
                    stop = s
                    break
                d -= 1
            elif kd == "|" and d == level - 1:
                pieces.append((piece_start, s))
                piece_start = s + 1
        pieces.append((piece_start, stop))
        flags = m.group(1)
        scoped = "|".join(f"(?{flags}:{rx[a:b]})" for a, b in pieces)
        return rx[:start] + scoped + rx[stop:]
    return None


def translate(rx: str) -> str:
    """Go RE2 syntax to Python `re` syntax (see the module docstring)."""
    out = []
    for start, end, kind in _tokens(rx):
        text = rx[start:end]
        if kind == "esc" and text == "\\z":
            out.append("\\Z")
        elif kind == "class":
            neg = "^" if text.startswith("[^") else ""
            body = text[1 + len(neg) : -1]
            out.append("[" + neg + _translate_class(body) + "]")
        else:
            out.append(text)
    result = "".join(out)
    while True:
        scoped = _scope_first_flag(result)
        if scoped is None:
            return result
        result = scoped


def _safe(rule_id: str, rx: str) -> str:
    for old, new in SAFE.get(rule_id, []):
        if old not in rx:
            raise SystemExit(f"{rule_id}: the pattern changed upstream; review SAFE for it")
        rx = rx.replace(old, new)
    return rx


def _allowlists(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The allowlists that can apply without a file path or commit (we redact text)."""
    out = []
    for al in raw:
        has_path = bool(al.get("paths") or al.get("commits"))
        condition = str(al.get("condition", "OR")).upper()
        if has_path and condition == "AND":
            continue  # needs a path to match, and text has none
        regexes = [translate(r) for r in al.get("regexes", [])]
        stopwords = sorted({s.lower() for s in al.get("stopwords", [])})
        if not regexes and not stopwords:
            continue
        entry: dict[str, Any] = {"target": al.get("regexTarget", "secret")}
        if regexes:
            entry["regexes"] = regexes
        if stopwords:
            entry["stopwords"] = stopwords
        out.append(entry)
    return out


def build(toml_text: str) -> dict[str, Any]:
    cfg = tomllib.loads(toml_text)
    rules: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for raw in cfg["rules"]:
        if not raw.get("regex"):
            skipped.append({"id": raw["id"], "why": "matches file paths only"})
            continue
        rule: dict[str, Any] = {
            "id": raw["id"],
            "regex": translate(_safe(raw["id"], raw["regex"])),
            "keywords": sorted({k.lower() for k in raw.get("keywords", [])}),
        }
        if raw.get("entropy"):
            rule["entropy"] = float(raw["entropy"])
        if raw.get("secretGroup"):
            rule["group"] = int(raw["secretGroup"])
        allow = _allowlists(raw.get("allowlists", []))
        if allow:
            rule["allow"] = allow
        rules.append(rule)
    glob = _allowlists([cfg.get("allowlist", {})])
    return {
        "source": SOURCE,
        "allow": glob,
        "rules": rules,
        "skipped": skipped,
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def main(argv: list[str]) -> int:
    toml = Path(argv[0]) if argv else TOML
    text = render(build(toml.read_text(encoding="utf-8")))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    licence = (TOML.parent / "LICENSE").read_text(encoding="utf-8")
    (OUT.parent / "LICENSE-gitleaks").write_text(
        "The rules in gitleaks.json are ported from gitleaks' config/gitleaks.toml\n"
        f"({SOURCE['url']}, commit {SOURCE['commit']}), under this licence:\n\n" + licence,
        encoding="utf-8",
    )
    print(f"wrote {OUT.relative_to(ROOT)}: {len(json.loads(text)['rules'])} rules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
