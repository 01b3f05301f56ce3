#!/usr/bin/env python3
"""A tiny stand-in for the Hugging Face hub, for tests/cli/pull_test.sh. Loopback only, stdlib only.

Serves the URL layout `dacpp pull` uses:
  GET /api/models/<owner>/<name>/revision/<rev>[?blobs=true]  -> {"siblings": [{"rfilename", "size", "lfs"}]}
  GET /<owner>/<name>/resolve/<rev>/<file>                   -> 302 to /cdn/<owner>/<name>/<file>
  GET /cdn/<owner>/<name>/<file>                              -> the bytes, honouring "Range: bytes=N-[M]"

Config (JSON, --config): {"token": "...", "repos": {"owner/name": {
    "private": bool,             # 401 without "Authorization: Bearer <token>"
    "files": {"name": "/path"},  # served files; a path that does not exist is listed but answers 404
    "no_lfs": ["name"],          # listed without lfs info (no sha256), like config.json on the hub
    "bad_sha": ["name"],         # listed with a wrong sha256
    "cut_once": {"name": N},     # the first full GET of that file sends N bytes, then drops the connection
    "no_range": bool}}}          # ignore Range headers (always 200 with the whole file)
Every request is appended to --log as: "<path> auth=<Authorization or -> range=<Range or ->".
The chosen port is written to --port-file once the server listens.
"""
import argparse
import hashlib
import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Hub:
    def __init__(self, config, log_path):
        self.config = config
        self.log_path = log_path
        self.lock = threading.Lock()
        self.cut_done = set()

    def repo(self, repo_id):
        return self.config["repos"].get(repo_id)

    def log(self, line):
        with self.lock, open(self.log_path, "a") as f:
            f.write(line + "\n")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Handler(BaseHTTPRequestHandler):
    hub = None  # set in main()

    def log_message(self, *args):
        pass

    def send_json(self, code, obj, headers=()):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def authorized(self, repo):
        if not repo.get("private"):
            return True
        return self.headers.get("Authorization") == "Bearer " + self.hub.config.get("token", "")

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        self.hub.log("%s auth=%s range=%s" % (url.path, self.headers.get("Authorization", "-"),
                                              self.headers.get("Range", "-")))
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if len(parts) >= 6 and parts[:2] == ["api", "models"] and parts[4] == "revision":
            return self.listing("/".join(parts[2:4]), "blobs=true" in url.query)
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve("/".join(parts[0:2]), "/".join(parts[4:]))
        if len(parts) >= 4 and parts[0] == "cdn":
            return self.serve_file("/".join(parts[1:3]), "/".join(parts[3:]))
        self.send_json(404, {"error": "no such route"})

    def listing(self, repo_id, blobs):
        repo = self.hub.repo(repo_id)
        if repo is None:
            return self.send_json(404, {"error": "Repository not found"})
        if not self.authorized(repo):
            return self.send_json(401, {"error": "Invalid credentials"})
        siblings = []
        for name, path in repo["files"].items():
            entry = {"rfilename": name}
            if blobs and os.path.exists(path):
                entry["size"] = os.path.getsize(path)
                if name not in repo.get("no_lfs", []):
                    sha = "0" * 64 if name in repo.get("bad_sha", []) else sha256_of(path)
                    entry["lfs"] = {"sha256": sha, "size": entry["size"], "pointerSize": 130}
            siblings.append(entry)
        self.send_json(200, {"id": repo_id, "sha": "a" * 40, "siblings": siblings})

    def resolve(self, repo_id, name):
        repo = self.hub.repo(repo_id)
        if repo is None:
            return self.send_json(404, {"error": "Repository not found"})
        if not self.authorized(repo):
            return self.send_json(401, {"error": "Invalid credentials"})
        path = repo["files"].get(name)
        if path is None or not os.path.exists(path):
            return self.send_json(404, {"error": "Entry not found"}, [("X-Error-Code", "EntryNotFound")])
        self.send_response(302)
        self.send_header("Location", "/cdn/%s/%s" % (repo_id, urllib.parse.quote(name)))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def serve_file(self, repo_id, name):
        repo = self.hub.repo(repo_id)
        path = repo["files"].get(name) if repo else None
        if path is None or not os.path.exists(path):
            return self.send_json(404, {"error": "Entry not found"})
        data = open(path, "rb").read()
        start, end = 0, len(data) - 1
        rng = None if repo.get("no_range") else self.headers.get("Range")
        if rng:
            first, _, last = rng.replace("bytes=", "").partition("-")
            start = int(first)
            end = min(int(last), end) if last else end
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        body = data[start:end + 1]
        self.send_response(206 if rng else 200)
        if rng:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(data)))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        cut = repo.get("cut_once", {}).get(name)
        key = repo_id + "/" + name
        if cut is not None and not rng and key not in self.hub.cut_done:
            self.hub.cut_done.add(key)
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    Handler.hub = Hub(json.load(open(args.config)), args.log)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
