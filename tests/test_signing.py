"""Integrity tags on the records the harness writes, and doctor telling forged lines apart
from old unsigned records, imports, lines signed in another clone and masked lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitimprove.state import signing
from gitimprove.state.records import make_line
from tests.conftest import TmpRepo
from tests.loop_helpers import run_rows
from tests.test_integrity import hostile_project

KEY = signing.Key("a1b2c3d4e5f6", b"k" * 32)
OTHER = signing.Key("0f0f0f0f0f0f", b"o" * 32)


def line(fields: dict[str, Any], key: signing.Key | None = KEY) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(make_line("create", fields, key=key))
    return obj


def test_a_tag_covers_every_field_and_round_trips() -> None:
    rec = line({"run": "r", "status": "keep", "metric": {"value": 0.1 + 0.2}, "note": "é\u2028"})
    assert signing.verify(rec, KEY) and signing.key_id_of(rec) == KEY.id
    for change in ({"status": "discard"}, {"metric": {"value": 0.3}}, {"extra": 1}):
        assert not signing.verify({**rec, **change}, KEY)
    assert not signing.verify(rec, OTHER)
    # a caller's own tag field is never taken as the tag
    assert signing.verify(line({"run": "r", "integrity": f"{KEY.id}:00"}), KEY)


def test_classify_tells_forged_lines_from_the_others() -> None:
    base = line({"run": "r", "status": "baseline"})
    keep = line({"run": "r", "status": "keep", "metric": {"value": 1}})
    notes: dict[str, list[dict[str, Any]]] = {
        "b" * 40: [base],
        "c" * 40: [keep],
        "d" * 40: [line({"run": "old", "status": "baseline"}, None)],  # before signing
        "e" * 40: [line({"import_id": "x", "status": "keep"}, None)],  # an import
        "f" * 40: [  # a run signed in another clone (brought by sync)
            line({"run": "s", "status": "baseline"}, OTHER),
            line({"run": "s", "status": "keep"}, OTHER),
        ],
        "9" * 40: [
            {
                **line({"run": "r", "status": "keep", "reason": "k"}),
                "reason": "[REDACTED:aws-access-key:1a2b]",
            }
        ],
    }
    v = signing.classify(notes, KEY)
    assert (v.verified, v.foreign, v.unsigned, v.masked, v.forged) == (2, 2, 2, 1, [])
    forged = {
        "unsigned": line({"run": "r", "status": "keep"}, None),
        "edited": {**keep, "metric": {"value": 0.001}},
        "other key": line({"run": "r", "status": "keep"}, OTHER),
        "bad id": {**line({"run": "r", "status": "keep"}), "integrity": "garbage"},
    }
    for why, rec in forged.items():
        got = signing.classify({**notes, "c" * 40: [keep, rec]}, KEY)
        assert [c for c, _ in got.forged] == ["c" * 40], why
    # a line with no run on a commit of a signed run (and not an import row)
    got = signing.classify({**notes, "c" * 40: [keep, line({"status": "keep"}, None)]}, KEY)
    assert got.forged == [("c" * 40, "a record without a run on a commit of a signed run")]
    # a forged baseline of another key does not take the run from the harness's own
    fake = line({"run": "r", "status": "baseline"}, OTHER)
    got = signing.classify({**notes, "8" * 40: [fake]}, KEY)
    assert [c for c, _ in got.forged] == ["8" * 40]
    # without the key (another clone's doctor) nothing can be checked, nothing is forged
    assert signing.classify(notes, None).forged == []


def test_the_key_is_private_and_made_once(tmp_path: Path) -> None:
    a = signing.load_key(tmp_path)
    b = signing.load_key(tmp_path)
    assert a is not None and a == b
    assert (tmp_path / "key").stat().st_mode & 0o777 == 0o600
    assert signing.load_key(tmp_path / "none", create=False) is None


_RACE = """
import os, sys, time
from pathlib import Path
from gitimprove.util.keys import load_key
folder = Path(sys.argv[1])
while not (folder / "go").exists():
    time.sleep(0.001)
key = load_key(folder)
empty = 0
for _ in range(200):  # what every other process finds there meanwhile
    try:
        if os.path.getsize(folder / "key") == 0:
            empty += 1
    except FileNotFoundError:
        pass
print(key.id if key else "none", empty)
"""


def test_processes_making_the_key_at_once_all_sign_with_one(tmp_path: Path) -> None:
    """The first signers of a repository race to make the key: each process pins the one key
    that is there, and none ever finds the file empty (a hook that read it half made signed
    nothing, or with a key no other process had)."""
    for round_ in range(3):
        folder = tmp_path / str(round_)
        folder.mkdir()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _RACE, str(folder)], stdout=subprocess.PIPE, text=True
            )
            for _ in range(6)
        ]
        time.sleep(0.3)
        (folder / "go").touch()
        found = [p.communicate(timeout=60)[0].split() for p in procs]
        assert all(p.returncode == 0 for p in procs), found
        ids = {f[0] for f in found}
        assert ids == {signing.load_key(folder, create=False).id}, found  # type: ignore[union-attr]
        assert all(f[1] == "0" for f in found), found
        assert sorted(os.listdir(folder)) == ["go", "key"]  # no temporary file left


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param("unsigned", marks=pytest.mark.slow),
        "edited",
        pytest.param("nameless", marks=pytest.mark.slow),
    ],
)
def test_doctor_reports_a_keep_line_the_harness_did_not_write(
    tmp_repo: TmpRepo, attack: str
) -> None:
    hostile_project(tmp_repo, {"1": "set:99"}, "none")
    res = tmp_repo.cli("run", "--run", "h", "-n", "1", "--json")
    assert res.returncode == 0, res.stderr
    rows = run_rows(tmp_repo, "h")
    key = signing.load_key(tmp_repo.path / ".git" / "improve", create=False)
    assert key is not None
    for r in rows:
        note = tmp_repo.git("notes", "--ref=improve", "show", r["commit"]).splitlines()
        assert note and all(signing.verify(json.loads(x), key) for x in note), note
    doctor = tmp_repo.cli("doctor")
    assert "2 record(s) written by this repository's harness verify" in doctor.stdout, doctor.stdout
    commit = rows[1]["commit"]
    note = tmp_repo.git("notes", "--ref=improve", "show", commit).splitlines()
    rec = json.loads(note[-1])
    if attack == "unsigned":
        forged = {k: v for k, v in rec.items() if k != "integrity"} | {"metric": {"value": 1}}
    elif attack == "edited":
        forged = {**rec, "metric": {**rec["metric"], "value": 1}}
    else:
        forged = {"v": 1, "op": "update", "status": "keep", "metric": {"value": 1}}
    tmp_repo.git("notes", "--ref=improve", "append", "-m", json.dumps(forged), commit)
    doctor = tmp_repo.cli("doctor")
    out = doctor.stdout + doctor.stderr
    assert doctor.returncode != 0 and "record(s) the harness did not write" in out, out
    assert commit[:10] in out and "Traceback" not in out
