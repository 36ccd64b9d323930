"""How long the file tools take on an archive (core/archives.py): a support bundle as a customer sends
one, its logs rotated and gzipped, as a zip and as a tar.gz. What a file_read of the archive (its
files' list), of one of its logs (unpacked at its first read, then kept) and a file_search of all of
it (each file unpacked once, then searched) wait for, through the real tools.

    python benchmarks/archives.py [--logs 12] [--mb 10] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.memory.working import WorkingMemory  # noqa: E402
from core.tools.context import ToolContext  # noqa: E402
from core.tools.files import file_read  # noqa: E402
from core.tools.search import file_search  # noqa: E402


def log_text(megabytes: int, seed: int) -> bytes:
    """`megabytes` of a web service's log, one ERROR line in it."""
    rng = random.Random(seed)
    lines, size, n = [], 0, 0
    while size < megabytes * 2**20:
        line = (f"2026-11-28 10:{n // 3600 % 60:02d}:{n % 60:02d} INFO  http  POST /orders 201 "
                f"{rng.randint(40, 180)}ms req={rng.randint(10000, 99999)}\n")
        lines.append(line)
        size += len(line)
        n += 1
    lines[len(lines) // 2] = "2026-11-28 10:07:12 ERROR db    pool exhausted (5/5 connections in use)\n"
    return "".join(lines).encode()


def bundle_files(logs: int, megabytes: int) -> dict[str, bytes]:
    files = {"bundle/logs/orders.log": log_text(megabytes, 0)}
    for k in range(1, logs):
        files[f"bundle/logs/orders.log.{k}.gz"] = gzip.compress(log_text(megabytes, k), compresslevel=6)
    files["bundle/config/settings.py"] = b"DB_POOL_SIZE = 5\nWORKERS = 16\n"
    files["bundle/crash/orders.core"] = random.Random(1).randbytes(20 * 2**20)
    return files


def write_archives(folder: Path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(folder / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with tarfile.open(folder / "bundle.tar.gz", "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def timed(call) -> tuple[float, str]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def measure(root: Path, name: str) -> dict[str, float]:
    ctx = ToolContext(workdir=root / "work", session_dir=root / f"session-{name}",
                      memory=WorkingMemory(root / f"session-{name}"))
    figures = {}
    figures["list_ms"], _ = timed(lambda: file_read(ctx, name))
    member = f"{name}/bundle/logs/orders.log.3.gz"
    figures["first_read_ms"], _ = timed(lambda: file_read(ctx, member, offset=1000, limit=5))
    figures["again_read_ms"], _ = timed(lambda: file_read(ctx, member, offset=2000, limit=5))
    figures["first_search_ms"], found = timed(lambda: file_search(ctx, "pool exhausted", path=name))
    assert found.count("pool exhausted") >= 2, found
    figures["again_search_ms"], _ = timed(lambda: file_search(ctx, "pool exhausted", path=name))
    return {key: round(value * 1000, 1) for key, value in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=int, default=12)
    parser.add_argument("--mb", type=int, default=10, help="each log's size, unpacked")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / "work").mkdir()
        files = bundle_files(args.logs, args.mb)
        write_archives(root / "work", files)
        unpacked = sum(len(data) for data in files.values())
        results = {name: measure(root, name) for name in ("bundle.zip", "bundle.tar.gz")}
        sizes = {name: (root / "work" / name).stat().st_size for name in results}
    if args.json:
        print(json.dumps({"benchmark": "archives", "unpacked_bytes": unpacked, "sizes": sizes, **results}))
        return
    print(f"A support bundle: {args.logs} logs of {args.mb} MB ({args.logs - 1} of them gzipped in it), a config and "
          f"a 20 MB core dump; {unpacked / 2**20:.0f} MB as its files are stored in it.")
    for name, figures in results.items():
        print(f"{name} ({sizes[name] / 2**20:.0f} MB): its list {figures['list_ms']} ms; a log in it read "
              f"{figures['first_read_ms']} ms the first time, {figures['again_read_ms']} ms again; all of it searched "
              f"{figures['first_search_ms']} ms the first time, {figures['again_search_ms']} ms again")


if __name__ == "__main__":
    main()
