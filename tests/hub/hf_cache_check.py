#!/usr/bin/env python3
"""An independent implementation of huggingface_hub's cache layout, for the tests (tests/hub/).

Written from huggingface_hub's rules (file_download.py: repo_folder_name, try_to_load_from_cache,
_create_symlink, _cache_commit_hash_for_specific_revision; utils/_cache_manager.py: scan_cache_dir),
with no code of the app and no package beyond Python's standard library.

  hf_cache_check.py find CACHE REPO FILE [REVISION]
      try_to_load_from_cache: prints the cached file's path, or "None" (exit 1).
  hf_cache_check.py verify CACHE
      scan_cache_dir plus the invariants a reader relies on; prints a JSON report and exits 1 on
      any problem: every snapshot file a relative symlink into ../../blobs/ that exists; an LFS blob
      (64-hex name) whose SHA-256 is its name; a git blob whose git SHA-1 is its name (when the
      file was written by a hub: the etag is the blob's id); refs holding a 40-hex commit that has a
      snapshot; no `.incomplete` file counted as a blob.
  hf_cache_check.py write CACHE REPO REVISION COMMIT NAME=SOURCE...
      what hf_hub_download leaves behind: blobs/<etag> (etag: SHA-256 for *.safetensors / *.bin,
      else the git blob SHA-1), snapshots/<commit>/<NAME> a relative symlink to it, refs/<REVISION>.
"""
import hashlib
import json
import os
import re
import shutil
import sys

COMMIT = re.compile(r"^[0-9a-f]{40}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def repo_folder_name(repo_id):
    return "--".join(["models"] + repo_id.split("/"))


def try_to_load_from_cache(cache, repo_id, filename, revision="main"):
    repo_cache = os.path.join(cache, repo_folder_name(repo_id))
    if not os.path.isdir(repo_cache):
        return None
    refs_dir = os.path.join(repo_cache, "refs")
    snapshots_dir = os.path.join(repo_cache, "snapshots")
    no_exist_dir = os.path.join(repo_cache, ".no_exist")
    if os.path.isdir(refs_dir):
        revision_file = os.path.join(refs_dir, revision)
        if os.path.isfile(revision_file):
            with open(revision_file) as f:
                revision = f.read()
    if os.path.isfile(os.path.join(no_exist_dir, revision, filename)):
        return None
    if not os.path.exists(snapshots_dir):
        return None
    cached_shas = os.listdir(snapshots_dir)
    if revision not in cached_shas:
        return None
    cached_file = os.path.join(snapshots_dir, revision, filename)
    return cached_file if os.path.isfile(cached_file) else None


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_sha1_of(path):
    data = open(path, "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def verify(cache):
    problems, repos = [], []
    for name in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        if not name.startswith("models--"):
            continue
        repo_path = os.path.join(cache, name)
        repo_id = "/".join(name.split("--")[1:])
        blobs_dir = os.path.join(repo_path, "blobs")
        blobs = {}
        for b in os.listdir(blobs_dir) if os.path.isdir(blobs_dir) else []:
            p = os.path.join(blobs_dir, b)
            if b.endswith(".incomplete"):
                continue
            blobs[b] = os.path.getsize(p)
            if SHA256.match(b) and sha256_of(p) != b:
                problems.append("%s: blob %s does not hash to its name" % (repo_id, b))
            elif re.match(r"^[0-9a-f]{40}$", b) and git_sha1_of(p) != b:
                problems.append("%s: git blob %s does not hash to its name" % (repo_id, b))
        revisions = []
        snaps = os.path.join(repo_path, "snapshots")
        for commit in sorted(os.listdir(snaps)) if os.path.isdir(snaps) else []:
            files = []
            for root, _, names in os.walk(os.path.join(snaps, commit)):
                for n in names:
                    p = os.path.join(root, n)
                    rel = os.path.relpath(p, os.path.join(snaps, commit))
                    files.append(rel)
                    if not os.path.islink(p):
                        problems.append("%s: %s/%s is not a symlink" % (repo_id, commit, rel))
                        continue
                    target = os.readlink(p)
                    if os.path.isabs(target):
                        problems.append("%s: %s/%s links to an absolute path" % (repo_id, commit, rel))
                    real = os.path.realpath(p)
                    if os.path.dirname(real) != os.path.realpath(blobs_dir) or not os.path.isfile(real):
                        problems.append("%s: %s/%s does not point at a blob" % (repo_id, commit, rel))
            revisions.append({"commit": commit, "files": sorted(files)})
        refs = {}
        refs_dir = os.path.join(repo_path, "refs")
        for root, _, names in os.walk(refs_dir):
            for n in names:
                ref = os.path.relpath(os.path.join(root, n), refs_dir)
                commit = open(os.path.join(root, n)).read()
                refs[ref] = commit
                if not COMMIT.match(commit):
                    problems.append("%s: refs/%s holds %r, not a commit" % (repo_id, ref, commit))
                elif not os.path.isdir(os.path.join(snaps, commit)):
                    problems.append("%s: refs/%s points at a missing snapshot" % (repo_id, ref))
        repos.append({"repo_id": repo_id, "size_on_disk": sum(blobs.values()), "refs": refs, "revisions": revisions})
    print(json.dumps({"repos": repos, "problems": problems}, indent=1))
    return 1 if problems else 0


def write(cache, repo_id, revision, commit, items):
    repo_path = os.path.join(cache, repo_folder_name(repo_id))
    for item in items:
        name, source = item.split("=", 1)
        data = open(source, "rb").read()
        if name.endswith((".safetensors", ".bin", ".pth", ".pt")):
            etag = hashlib.sha256(data).hexdigest()
        else:
            etag = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        blob = os.path.join(repo_path, "blobs", etag)
        pointer = os.path.join(repo_path, "snapshots", commit, name)
        os.makedirs(os.path.dirname(blob), exist_ok=True)
        os.makedirs(os.path.dirname(pointer), exist_ok=True)
        shutil.copyfile(source, blob + ".incomplete")
        os.replace(blob + ".incomplete", blob)
        if os.path.lexists(pointer):
            os.remove(pointer)
        os.symlink(os.path.relpath(blob, os.path.dirname(pointer)), pointer)
    if revision != commit:
        ref = os.path.join(repo_path, "refs", revision)
        os.makedirs(os.path.dirname(ref), exist_ok=True)
        with open(ref, "w") as f:
            f.write(commit)
    return 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "find":
        p = try_to_load_from_cache(argv[2], argv[3], argv[4], argv[5] if len(argv) > 5 else "main")
        print(p)
        return 0 if p else 1
    if len(argv) == 3 and argv[1] == "verify":
        return verify(argv[2])
    if len(argv) >= 7 and argv[1] == "write":
        return write(argv[2], argv[3], argv[4], argv[5], argv[6:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
