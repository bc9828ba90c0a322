#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub's resolve endpoint, for the tests (tests/hub/).

Speaks the protocol huggingface_hub's file_download.py expects: HEAD/GET on
/{org}/{name}/resolve/{revision}/{file} answer with X-Repo-Commit, ETag (git files) or a 302 to a
second port (the "CDN", another host) with X-Linked-Etag (the SHA-256) and X-Linked-Size (LFS files:
*.safetensors, *.bin, *.pth); the CDN honours Range (206). Errors carry X-Error-Code as the hub's do.

Python's standard library only; binds 127.0.0.1 on ephemeral ports and prints "HUB_PORT CDN_PORT" on
its first line. Stops by itself when its stdin closes (the test that started it ended) or after
--lifetime seconds.

Repositories are folders ROOT/{org}/{name}/ holding the files. A file `.behaviour.json` there makes
the server misbehave (read at each request, so a test can change it between pulls):
  {"<file>" or "*": "404" | "401" | "403" | "500" | "drop_once" | "stall" | "short" | "long" |
                    "badhash" | "loop" | "ignore_range",
   "token": "T"          requests without "Authorization: Bearer T" get 401 (GatedRepo),
   "renamed_to": "o/n"   a relative 307 to the new name (as a renamed repository),
   "commit": "40 hex"    the commit the repository is at (default: derived from its name)}
Every request is logged as one JSON line in --log: server, method, path, range, auth.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS_SUFFIXES = (".safetensors", ".bin", ".pth", ".pt")
STATE = {"dropped": set()}
LOCK = threading.Lock()
STOP = threading.Event()


def git_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def behaviour_of(repo_dir):
    try:
        with open(os.path.join(repo_dir, ".behaviour.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-hub/1"

    def log_message(self, fmt, *args):  # quiet; the JSON log says what happened
        pass

    def log_request_json(self):
        entry = {
            "server": self.server.role,
            "method": self.command,
            "path": self.path,
            "range": self.headers.get("Range"),
            "auth": self.headers.get("Authorization"),
        }
        with LOCK:
            with open(self.server.args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def do_HEAD(self):
        self.handle_any(head=True)

    def do_GET(self):
        self.handle_any(head=False)

    def send_error_code(self, status, code, head):
        body = json.dumps({"error": code}).encode()
        self.send_response(status)
        if code:
            self.send_header("X-Error-Code", code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def handle_any(self, head):
        self.log_request_json()
        try:
            if self.server.role == "hub":
                self.hub(head)
            else:
                self.cdn(head)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # /{org}/{name}/resolve/{revision}/{file...}
    def hub(self, head):
        url = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")]
        if len(parts) < 6 or parts[3] != "resolve":
            return self.send_error_code(404, "RepoNotFound", head)
        repo_id = parts[1] + "/" + parts[2]
        revision, filename = parts[4], "/".join(parts[5:])
        repo_dir = os.path.join(self.server.args.root, parts[1], parts[2])
        if not os.path.isdir(repo_dir):
            return self.send_error_code(401, "RepoNotFound", head)
        b = behaviour_of(repo_dir)
        if "renamed_to" in b:
            self.send_response(307)
            new = "/" + b["renamed_to"] + "/resolve/" + urllib.parse.quote(revision, safe="") + "/" + urllib.parse.quote(filename)
            self.send_header("Location", new)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if "token" in b and self.headers.get("Authorization") != "Bearer " + b["token"]:
            return self.send_error_code(401, "GatedRepo", head)
        commit = b.get("commit") or hashlib.sha1(("commit:" + repo_id).encode()).hexdigest()
        if revision not in ("main", commit):
            return self.send_error_code(404, "RevisionNotFound", head)
        mode = b.get(filename, b.get("*", ""))
        errors = {"404": (404, "EntryNotFound"), "401": (401, "RepoNotFound"), "403": (403, "GatedRepo"), "500": (500, "")}
        if mode in errors:
            return self.send_error_code(*errors[mode], head)
        path = os.path.join(repo_dir, filename)
        if not os.path.isfile(path) or filename.startswith("."):
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("X-Repo-Commit", commit)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = open(path, "rb").read()
        if filename.endswith(LFS_SUFFIXES):
            sha = hashlib.sha256(data).hexdigest()
            cdn = "http://127.0.0.1:%d/blob/%s?%s" % (
                self.server.cdn_port,
                sha,
                urllib.parse.urlencode({"repo": repo_id, "file": filename}),
            )
            self.send_response(302)
            self.send_header("Location", cdn)
            self.send_header("X-Repo-Commit", commit)
            self.send_header("X-Linked-Etag", '"%s"' % sha)
            self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("ETag", '"%s"' % git_sha1(b"version https://git-lfs.github.com/spec/v1\n"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", '"%s"' % git_sha1(data))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if not head:
            self.wfile.write(data)

    # /blob/<sha256>?repo=ORG/NAME&file=F ; /loop?n=K
    def cdn(self, head):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/loop":
            n = int(query.get("n", "0")) + 1
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:%d/loop?n=%d" % (self.server.server_address[1], n))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        repo_id, filename = query.get("repo", ""), query.get("file", "")
        repo_dir = os.path.join(self.server.args.root, *repo_id.split("/"))
        path = os.path.join(repo_dir, filename)
        if not repo_id or not os.path.isfile(path):
            return self.send_error_code(404, "", head)
        data = open(path, "rb").read()
        mode = behaviour_of(repo_dir).get(filename, behaviour_of(repo_dir).get("*", ""))
        if mode == "loop":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:%d/loop?n=0" % self.server.server_address[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "badhash":
            mid = len(data) // 2
            data = data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1 :]
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and mode != "ignore_range":
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        body = data[start:]
        announced = len(body)
        if mode == "short":
            body = body[:-100]
            announced = len(body)
        elif mode == "long":
            body = body + b"\0" * 100
            announced = len(body)
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.send_header("Content-Length", str(announced))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if head:
            return
        key = (repo_id, filename)
        if mode == "drop_once" and key not in STATE["dropped"]:
            with LOCK:
                STATE["dropped"].add(key)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if mode == "stall":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            while not STOP.is_set():  # no more bytes until the client gives up
                time.sleep(0.05)
            return
        self.wfile.write(body)


def serve(role, args, cdn_port=0):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.role = role
    httpd.args = args
    httpd.cdn_port = cdn_port
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--lifetime", type=float, default=300)
    args = p.parse_args()
    cdn = serve("cdn", args)
    hub = serve("hub", args, cdn.server_address[1])
    print(hub.server_address[1], cdn.server_address[1], flush=True)

    def watch_stdin():
        try:
            sys.stdin.read()
        finally:
            STOP.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    STOP.wait(args.lifetime)
    STOP.set()
    hub.shutdown()
    cdn.shutdown()


if __name__ == "__main__":
    main()
