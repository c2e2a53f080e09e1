"""What keeping a measurement checkout between runs saves: `Checkout.reset` on a tree of N
small files, kept (provably unchanged: the full listing, flags, extended attributes, mounts
checked) against written anew (the used folder removed, the commit written and hashed again).
And what a spare saves between attempts (git/renew.py): a checkout of a commit that differs
in one file made from a spare (proved, moved, patched), and an agent's workspace renewed from
the previous attempt's, against written whole. And what line ends cost: a workspace's tree
hashed from its files (every file read: none proven) and a checkout written anew, with no
setting that converts and with `core.autocrlf = true` (every file then goes through git's
text detection both ways: git/attributes.py).

Usage: python bench/checkout_bench.py [--files 2000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ENV, ROOT

sys.path.insert(0, str(ROOT))

from gitimprove.git.checkout import checkout
from gitimprove.git.renew import Spares
from gitimprove.git.repo import open_repo
from gitimprove.git.workspace import Workspaces, hash_workspace, made_workspace


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitimprove-checkout-bench-"))
    try:
        for i in range(a.files):
            folder = tmp / "lib" / f"d{i // 100:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i:05d}.py").write_text(f"# file {i}\nVALUE = {i}\n")
        for args in (
            ["init", "-q"],
            ["add", "-A"],
            ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"],
        ):
            subprocess.run(["git", *args], cwd=tmp, env=ENV, check=True)
        repo = open_repo(tmp)
        head = str(repo.raw.head.target)
        times: dict[str, list[float]] = {"kept": [], "written anew": []}
        with checkout(repo, head) as co:
            for _ in range(a.repeat):
                for what, rewrite in (("kept", False), ("written anew", True)):
                    t0 = time.perf_counter()
                    co.reset(rewrite=rewrite)
                    times[what].append(time.perf_counter() - t0)
        kept, anew = (statistics.median(times[k]) for k in ("kept", "written anew"))
        (tmp / "lib" / "d000" / "f00000.py").write_text("# changed\n")
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", "one file"],
            cwd=tmp, env=ENV, check=True,
        )  # fmt: skip
        other = str(repo.raw.revparse_single("HEAD").id)
        spares, pool = Spares(), Workspaces()
        patched, renewed = [], []
        try:
            with checkout(repo, head, spares=spares), made_workspace(repo, head, "b", pool):
                pass
            for i in range(a.repeat):
                commit = other if i % 2 == 0 else head
                t0 = time.perf_counter()
                with checkout(repo, commit, spares=spares):
                    patched.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                with made_workspace(repo, commit, f"b{i}", pool):
                    renewed.append(time.perf_counter() - t0)
        finally:
            spares.close()
            pool.close()
        print(f"{a.files} files, median of {a.repeat}:")
        print(f"  checkout kept (checked unchanged): {kept * 1000:8.1f} ms")
        print(f"  checkout written anew:             {anew * 1000:8.1f} ms")
        print(f"  ratio: {kept / anew:.2f}")
        print(f"  checkout patched from a spare:     {statistics.median(patched) * 1000:8.1f} ms")
        print(f"  workspace renewed (.git anew):     {statistics.median(renewed) * 1000:8.1f} ms")
        for autocrlf in ("false", "true"):
            subprocess.run(
                ["git", "config", "core.autocrlf", autocrlf], cwd=tmp, env=ENV, check=True
            )
            repo = open_repo(tmp)
            hashed, written = [], []
            with made_workspace(repo, head, "h") as made:
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    hash_workspace(repo, made.path)
                    hashed.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    with checkout(repo, head):
                        written.append(time.perf_counter() - t0)
            print(
                f"  core.autocrlf={autocrlf:5}: tree hashed from every file "
                f"{statistics.median(hashed) * 1000:8.1f} ms, checkout written "
                f"{statistics.median(written) * 1000:8.1f} ms"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
