#!/usr/bin/env python3
"""Materialise a notebook corpus (suites/notebooks/*.json; by default tutorials-dev.json) from git mirrors of
its repositories.

    python3 scripts/notebook_corpus.py DEST [--manifest suites/notebooks/tutorials-dev.json]
                                             [--mirrors /work/.mirror] [--repo owner/name=PATH ...]

Each notebook (and each data folder or file) is read from its repository at the manifest's commit with
`git show`/`git archive`, so any clone or bare mirror that has the commit serves; nothing is downloaded.
A mirror is looked up as MIRRORS/<owner>+<name>/repo, then MIRRORS/<owner>+<name>, unless --repo
names its path. DEST should lie outside this repository (the notebooks are not ours to commit); then:

    crane-bench notebooks DEST --trial off --timeout 60 --out results.jsonl
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dest", type=Path)
    p.add_argument("--manifest", type=Path, default=ROOT / "suites" / "notebooks" / "tutorials-dev.json")
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH")
    args = p.parse_args()
    manifest = json.loads(args.manifest.read_text(encoding="utf-8"))
    paths = dict(item.split("=", 1) for item in args.repo)

    def git_dir(repo: str) -> str:
        if repo in paths:
            return paths[repo]
        for candidate in (
            args.mirrors / repo.replace("/", "+") / "repo",
            args.mirrors / repo.replace("/", "+"),
        ):
            if candidate.exists():
                return str(candidate)
        sys.exit(f"no mirror of {repo} under {args.mirrors}; give --repo {repo}=PATH")

    def git(repo: str, *argv: str) -> bytes:
        done = subprocess.run(["git", "-C", git_dir(repo), *argv], capture_output=True, check=False)
        if done.returncode:
            sys.exit(f"{repo}: git {' '.join(argv)}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    for entry in manifest["notebooks"]:
        target = args.dest / entry["dest"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git(entry["repo"], "show", f"{entry['commit']}:{entry['path']}"))
    for entry in manifest.get("data", []):
        # A data entry names a folder (its files land under dest) or one file (written as dest), so a
        # folder whose other files the mirror lacks (large blobs left out) can still be served.
        archive = git(entry["repo"], "archive", "--format=tar", entry["commit"], entry["path"])
        path = entry["path"].rstrip("/")
        written = 0
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if not member.isfile():
                    continue
                if member.name == path:
                    target = args.dest / entry["dest"]
                elif member.name.startswith(path + "/"):
                    target = args.dest / entry["dest"] / member.name[len(path) + 1 :]
                else:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None
                target.write_bytes(source.read())
                written += 1
        if not written:
            sys.exit(f"{entry['repo']}: no file at {entry['path']} in {entry['commit']}")
    print(
        f"{len(manifest['notebooks'])} notebooks and {len(manifest.get('data', []))} data folders or files "
        f"in {args.dest}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
