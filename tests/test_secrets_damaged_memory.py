"""`doctor --secrets --repair` on a damaged memory branch (its FORMAT file unreadable): the
secrets of the notes, of the memory entries and of the imports are masked all the same, what
could not be repaired is named with the reason, and the command exits 1 with the hint."""

from __future__ import annotations

import json

import pytest

from gitimprove.git import memory, notes, refs
from gitimprove.memory import signals, spool
from tests.conftest import TmpRepo
from tests.secret_corpus import corpus
from tests.test_secrets_doctor import raw_commit
from tests.test_secrets_writers import left_in

FAKES = corpus(seed=141)[:6]

BROKEN = [
    "{not json at all\n",
    "\x00\x01\x02",
    "",
    '{"layout": "two"}\n',
    '{"layout": 9, "min_reader": 9}\n',
]


@pytest.mark.parametrize("broken", BROKEN)
def test_repair_masks_every_record_when_format_is_unreadable(
    tmp_repo: TmpRepo, broken: str
) -> None:
    head = tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    repo = tmp_repo.open()
    line = json.dumps({"v": 1, "op": "create", "ts": "2026-01-01", "description": FAKES[0].text})
    raw_commit(repo, refs.NOTES, {f"{head[:2]}/{head[2:]}": line + "\n"}, "notes")
    entries = {
        "FORMAT": broken,
        "signals/2026/01/a.json": json.dumps({"id": "SIG-a", "content": FAKES[1].text}),
        "learnings/2026/01/b.md": f"+++\ncategory = 'x'\n+++\n{FAKES[2].text}\n",
        "imports/0123456789abcdef.jsonl": json.dumps({"commit": "dead", "d": FAKES[3].text}),
        "reports/2026/01/r.md": f"archive report: {FAKES[4].text}\n",
    }
    raw_commit(repo, refs.MEMORY, entries, "memory")
    res = tmp_repo.cli("doctor", "--secrets", "--repair")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out
    assert not left_in(out, FAKES[:5]), "doctor printed a secret in the clear"
    assert "FORMAT" in out and "unreadable" in out, out  # what could not be repaired, and why
    assert "fix:" in out
    repo = tmp_repo.open()
    tips = notes.read_note(repo, head).decode()
    tips += "".join(d.decode("utf-8", "replace") for _, d in memory.iter_entries(repo))
    assert not left_in(tips, FAKES[:5]), "a secret is still at a tip"
    assert tips.count("[REDACTED:") >= 5
    # no record lost: every entry is still there, the FORMAT file as it was
    paths = {p for p, _ in memory.iter_entries(repo)}
    assert set(entries) - {"FORMAT"} <= paths
    assert memory.read_entry(repo, "FORMAT") == broken.encode()


def test_repair_names_what_it_could_not_repair(tmp_repo: TmpRepo) -> None:
    """An unreadable memory entry cannot be quarantined on a damaged branch: doctor says so
    (and why), masks the secrets anyway, and the entry is kept."""
    tmp_repo.commit("initial", {".gitimprove.toml": '[metric]\ncommand = "echo 1"\n'})
    repo = tmp_repo.open()
    entries = {
        "FORMAT": "{damaged\n",
        "signals/2026/01/bad.json": "{not json " + FAKES[5].text,
    }
    raw_commit(repo, refs.MEMORY, entries, "memory")
    improve = str(repo.common_dir / "improve")
    sig = signals.make_signal(type_="gotcha", content="a hook's signal", session="s", hook="t")
    spooled = spool.put(improve, signals.path_for(sig), sig)
    res = tmp_repo.cli("doctor", "--secrets", "--repair", "--json")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    found = [json.loads(x) for x in res.stdout.splitlines()]
    bad = [f for f in found if f["check"] == "memory entries"]
    assert bad and not bad[0]["repaired"] and "not repaired" in bad[0]["message"], found
    assert "FORMAT" in bad[0]["message"] and bad[0]["fix"]
    assert [f for f in found if f["check"] == "secrets" and f["repaired"]], found
    (waiting,) = [f for f in found if f["check"] == "spool"]  # kept until it can be written
    assert not waiting["repaired"] and "not repaired" in waiting["message"], waiting
    assert [p for _, p in spool.pending(improve)] == [spooled], [f["message"] for f in found]
    assert not left_in(res.stdout + res.stderr, FAKES[5:6])
    data = memory.read_entry(tmp_repo.open(), "signals/2026/01/bad.json") or b""
    assert data.startswith(b"{not json") and not left_in(data.decode(), FAKES[5:6])
