#!/usr/bin/env python3
"""An agent that reaches the user's object store (its workspace's clone borrows it): in round 1
it rewrites, deletes or forges what `argv[1]` names — a loose object (`argv[2]`, or puts a
FIFO, a socket or a link in its place), every pack,
a new pack holding other bytes under that object's name, a file git derives from the objects
(a commit-graph, a pack's index or reverse index, a bitmap, `info/packs`) — or, the
honest controls, packs and prunes the store as `git gc` does (and writes a commit-graph and a
multi-pack-index); every round lowers
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
if attack.startswith("alt-"):  # the store the repository borrows from (`git clone --shared`)
    objects = pathlib.Path((objects / "info" / "alternates").read_text().split()[0])
    attack = attack[len("alt-") :]
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
# a derived file lies, its checksum made anew
elif attack in ("graph-lie", "idx-swap", "rev-swap", "midx-swap"):
    import hashlib

    if attack == "graph-lie":  # a commit made parentless: `git log` stops there
        cmd = ["git", f"--git-dir={git_dir}", "commit-graph", "write", "--reachable"]
        subprocess.run(cmd, check=True)  # every commit in it, then one lie
        path = objects / "info" / "commit-graph"
        data = bytearray(path.read_bytes())
        chunks = {}
        for i in range(data[6] + 1):
            at = 8 + 12 * i
            chunks[bytes(data[at : at + 4])] = int.from_bytes(data[at + 4 : at + 12], "big")
        cdat, count = chunks[b"CDAT"], (chunks[b"CDAT"] - chunks[b"OIDL"]) // 20
        for i in range(count):
            at = cdat + 36 * i + 20
            if int.from_bytes(data[at : at + 4], "big") != 0x70000000:
                data[at : at + 4] = (0x70000000).to_bytes(4, "big")
                break
    elif attack == "midx-swap":  # the multi-pack-index sends two names to each other's bytes
        cmd = ["git", f"--git-dir={git_dir}", "multi-pack-index", "write"]
        subprocess.run(cmd, check=True)
        path = objects / "pack" / "multi-pack-index"
        data = bytearray(path.read_bytes())
        chunks = {}
        for i in range(data[6] + 1):
            at = 12 + 12 * i
            chunks[bytes(data[at : at + 4])] = int.from_bytes(data[at + 4 : at + 12], "big")
        at = chunks[b"OOFF"]
        data[at : at + 16] = data[at + 8 : at + 16] + data[at : at + 8]
    elif attack == "idx-swap":  # two names sent to each other's bytes in the pack
        path = packs[0].with_suffix(".idx")
        data = bytearray(path.read_bytes())
        count = int.from_bytes(data[8 + 1020 : 8 + 1024], "big")
        at = 8 + 1024 + count * 24
        data[at : at + 8] = data[at + 4 : at + 8] + data[at : at + 4]
    else:  # the reverse index's first two positions swapped
        path = packs[0].with_suffix(".rev")
        data = bytearray(path.read_bytes())
        data[12:20] = data[16:20] + data[12:16]
    data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    path.chmod(0o644)
    path.write_bytes(bytes(data))
elif attack == "peel-lie":  # packed-refs says the tag peels to the tag object itself
    refs = git_dir / "packed-refs"
    lines = refs.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("^") and i:
            lines[i] = "^" + lines[i - 1].split()[0]
    refs.write_text("\n".join(lines) + "\n")
elif attack == "bitmap-plant":  # a bitmap beside a pack git did not write anew
    packs[0].with_suffix(".bitmap").write_bytes(b"BITM\0\1" + os.urandom(64))
elif attack == "info-packs":  # the dumb-HTTP list names a pack that is not there
    (objects / "info" / "packs").write_text("P pack-" + "0" * 40 + ".pack\n\n")
elif attack == "derived-honest":  # the user's own gc, commit-graph and multi-pack-index
    for args in (
        ["-c", "pack.writeReverseIndex=true", "gc", "-q", "--prune=now"],
        ["commit-graph", "write", "--reachable", "--split"],
        ["multi-pack-index", "write"],
        ["update-server-info"],
    ):
        subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True)
elif attack == "gc":  # what the user's own git does: nothing reachable is lost
    cmd = ["git", f"--git-dir={objects.parent}", "gc", "-q", "--prune=now"]
    subprocess.run(cmd, check=True)
