"""The sandbox hides the files git takes your HTTPS credentials from (docs/integrity.md).

Its network is shared, and a clone of your project says where it is hosted: a token the agent
(or the measured code) could read from git's credential store or `~/.netrc` would push to your
remote, outside the sandbox, as a key in `~/.ssh` would log in to this machine. Each is an
empty file there; the user's own files are left as they were.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import TmpRepo
from tests.loop_helpers import kept_at_90, value_project
from tests.test_integrity import needs_bwrap

STORES = {
    ".git-credentials": "https://user:ghp_secret@example.com\n",
    ".netrc": "machine example.com login user password ghp_secret\n",
    ".config/git/credentials": "https://user:ghp_secret@example.com\n",
}
READER = """import os, pathlib
home = pathlib.Path(os.path.expanduser("~"))
found = []
for name in NAMES:
    try:
        found += [name] if "ghp_secret" in (home / name).read_text() else []
    except OSError:
        pass
# a token it could read would push to the user's remote, outside the sandbox
pathlib.Path("src/value.txt").write_text("80\\n" if found else "90\\n")
"""


@needs_bwrap
def test_the_sandbox_hides_the_credentials_git_would_push_with(
    tmp_repo: TmpRepo, tmp_path: Path, visible_home: Path
) -> None:
    home = visible_home
    for name, text in STORES.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    reader = READER.replace("NAMES", repr(list(STORES)))
    agent = tmp_path / "reader.py"
    agent.write_text(reader)
    bench = reader.replace('pathlib.Path("src/value.txt").write_text(', "assert not (", 1)
    bench = bench.replace(' else "90\\n")', ' else "")', 1)
    bench += "print(f\"METRIC score={float(open('src/value.txt').read()):g}\")\n"
    value_project(tmp_repo, f"{sys.executable} {agent}", bench, sandbox="bwrap", timeouts=True)
    kept_at_90(tmp_repo, {home / name: text for name, text in STORES.items()})
