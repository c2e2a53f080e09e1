"""What keeping a measurement checkout between runs saves: `Checkout.reset` on a tree of N
small files, kept (provably unchanged: the full listing, flags, extended attributes, mounts
checked) against written anew (the used folder removed, the commit written and hashed again).

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
from gitimprove.git.repo import open_repo


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
        print(f"{a.files} files, median of {a.repeat}:")
        print(f"  checkout kept (checked unchanged): {kept * 1000:8.1f} ms")
        print(f"  checkout written anew:             {anew * 1000:8.1f} ms")
        print(f"  ratio: {kept / anew:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
