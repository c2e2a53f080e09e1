#!/usr/bin/env python3
"""An agent that reaches the user's object store (its workspace's clone borrows it): in round 1
it rewrites, deletes or forges what `argv[1]` names — a loose object (`argv[2]`, or puts a
FIFO, a socket or a link in its place), every pack,
a new pack holding other bytes under that object's name — or, the
honest control, packs and prunes the store as `git gc` does; every round lowers
src/value.txt. In the sandbox the repository is hidden: nothing is found to write."""

import os
import pathlib
import subprocess
import sys

attack = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else ""
iteration = int(os.environ["GITIMPROVE_ITERATION"])
pathlib.Path("src/value.txt").write_text(f"{90 - iteration}\n")
git_dir = next((p for p in pathlib.Path.cwd().parents if (p / "objects" / "pack").is_dir()), None)
if iteration != 1 or git_dir is None or not (git_dir / "HEAD").is_file():
    sys.exit(0)
objects = git_dir / "objects"
loose = objects / name[:2] / name[2:]
packs = sorted((objects / "pack").glob("pack-*.pack"))
if attack == "loose-rewrite":  # other bytes under the same name
    loose.chmod(0o644)
    loose.write_bytes(b"x\x01" + os.urandom(40))
elif attack == "loose-replace":  # a valid object of other content, renamed into its place
    other = objects / "planted"
    import zlib

    other.write_bytes(zlib.compress(b"blob 6\0forged"))
    os.replace(other, loose)
elif attack == "loose-delete":
    loose.unlink()
elif attack == "loose-delete-all":  # the records' own objects (the notes' tip) go too
    for folder in objects.glob("[0-9a-f][0-9a-f]"):
        for f in folder.iterdir():
            f.unlink()
elif attack == "pack-zero":  # the same size, some bytes zeroed in place
    for pack in packs:
        pack.chmod(0o644)
        with open(pack, "r+b") as f:
            f.seek(pack.stat().st_size // 2)
            f.write(b"\0" * 32)
elif attack == "pack-to-loose":  # the packs deleted, other bytes loose under the blob's name
    import zlib

    for pack in packs:
        pack.unlink()
        pack.with_suffix(".idx").unlink()
    loose.parent.mkdir(exist_ok=True)
    loose.write_bytes(zlib.compress(b"blob 15\0forged history\n"))
elif attack == "pack-delete":
    for pack in packs:
        pack.unlink()
        pack.with_suffix(".idx").unlink()
elif attack == "pack-forge":  # a new pack: other bytes under the blob's name, read first
    import hashlib
    import struct
    import zlib

    content = b"forged history\n"
    size, first, header = len(content) >> 4, (3 << 4) | (len(content) & 0x0F), bytearray()
    while size:
        header.append(first | 0x80)
        first, size = size & 0x7F, size >> 7
    header.append(first)
    entry = bytes(header) + zlib.compress(content)
    pack = b"PACK" + struct.pack(">II", 2, 1) + entry
    pack += hashlib.sha1(pack).digest()
    oid = bytes.fromhex(name)
    fanout = b"".join(struct.pack(">I", 1 if i >= oid[0] else 0) for i in range(256))
    idx = b"\xfftOc" + struct.pack(">I", 2) + fanout + oid
    idx += struct.pack(">II", zlib.crc32(entry), 12) + pack[-20:]
    idx += hashlib.sha1(idx).digest()
    stem = objects / "pack" / f"pack-{pack[-20:].hex()}"
    stem.with_suffix(".pack").write_bytes(pack)
    stem.with_suffix(".idx").write_bytes(idx)
elif attack == "loose-fifo":  # a reader of the object blocks for ever
    loose.unlink()
    os.mkfifo(loose)
elif attack == "loose-socket":
    import socket

    loose.unlink()
    os.chdir(loose.parent)  # a socket's path is short
    socket.socket(socket.AF_UNIX).bind(loose.name)
elif attack == "loose-zero-link":  # a reader of the object never ends
    loose.unlink()
    loose.symlink_to("/dev/zero")
elif attack == "loose-fifo-link":  # a link to a FIFO beside the store
    fifo = git_dir / "planted-fifo"
    os.mkfifo(fifo)
    loose.unlink()
    loose.symlink_to(fifo)
elif attack == "measure-fifo":  # the measured code (the bench runs src/plant.py) does it
    pathlib.Path("src/plant.py").write_text(
        "import os, pathlib\n"
        "g = next(p for p in pathlib.Path.cwd().parents if (p / 'objects' / 'pack').is_dir())\n"
        f"loose = g / 'objects' / {name[:2]!r} / {name[2:]!r}\n"
        "if loose.is_file() and not loose.is_symlink():\n"
        "    loose.unlink()\n"
        "    os.mkfifo(loose)\n"
    )
elif attack == "gc":  # what the user's own git does: nothing reachable is lost
    cmd = ["git", f"--git-dir={git_dir}", "gc", "-q", "--prune=now"]
    subprocess.run(cmd, check=True)
