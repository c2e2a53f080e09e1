"""A file made whole or not at all, once (util/files.py `create_whole`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitimprove.util.files import create_whole


@pytest.mark.parametrize("tmpfile", [True, False], ids=["O_TMPFILE", "named temporary"])
def test_made_once_whole_with_its_mode_and_nothing_left_beside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmpfile: bool
) -> None:
    if not tmpfile:
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    path = tmp_path / "key"
    assert create_whole(path, b"first secret", 0o600)
    assert path.read_bytes() == b"first secret"
    assert path.stat().st_mode & 0o777 == 0o600
    assert not create_whole(path, b"second", 0o600)  # never replaced
    assert path.read_bytes() == b"first secret"
    assert os.listdir(tmp_path) == ["key"]
    with pytest.raises(FileNotFoundError):
        create_whole(tmp_path / "absent" / "key", b"x")
    assert os.listdir(tmp_path) == ["key"]
