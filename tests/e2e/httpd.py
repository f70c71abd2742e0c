#!/usr/bin/env python3
"""httpd.py: a loopback HTTP server for kgate's end-to-end tests.

It plays a small part of the GitHub REST API (pull request comments with
pagination, edits, commit statuses) and a webhook, records every request to
a JSON Lines file, and can be told to misbehave: a fault list in the script
answers matching requests, in order, before the normal handling: a status
with headers and body (403 with Retry-After, 500, 401, ...), a slow reply,
or a reset connection.

    httpd.py SCRIPT.json LOG.jsonl PORTFILE

SCRIPT: {"token": "...",                  # required bearer token, or absent
         "user": {"login": "kgate-bot", "id": 99, "type": "User"},  # the token's
                                          # user (GET /user; the author of POSTs),
         "user_status": 403,              # or GET /user refused, as for an app token
         "page_size": 2,                  # comments per page (default 30)
         "comments": {"7": [{"id": 1, "body": "..."}]},   # PRs that exist
         "any_pr": false,                 # true: every PR number exists
         "faults": [{"method": "GET", "path": "/repos/", "status": 403,
                     "headers": {"Retry-After": "1"}, "body": "{}",
                     "delay": 0, "reset": false}],
         "actions": {"runs": [...],               # workflow runs, as GET
                                                  # /repos/O/N/actions/runs lists them
                     "artifacts": {"RUN_ID": [...]},   # each run's artifacts
                     "zips": {"ARTIFACT_ID": "PATH"}}} # each artifact's archive
The actions part answers the runs list (filtered by branch, event and
status), a run's artifacts (by name), and an artifact's download with a
redirect to /blob/ID?sig=..., which serves the archive without asking for
the token, as GitHub's signed storage URLs do.
Only the standard library is used.  It listens on 127.0.0.1, on a free port
it writes to PORTFILE, until it is killed.
"""
import json
import socket
import struct
import sys
import threading
import time
import io
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
LOCK = threading.Lock()
COMMENTS = {k: list(v) for k, v in SCRIPT.get("comments", {}).items()}
FAULTS = list(SCRIPT.get("faults", []))
NEXT_ID = [1000]
USER = SCRIPT.get("user", {"login": "kgate-bot", "id": 99, "type": "User"})
PAGE = int(SCRIPT.get("page_size", 30))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj=None, headers=None, raw=None):
        body = raw.encode() if raw is not None else (
            b"" if obj is None else json.dumps(obj).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        url = urlsplit(self.path)
        with LOCK:
            with open(LOG, "a") as f:
                f.write(json.dumps({"method": method, "path": url.path, "query": url.query,
                                    "headers": dict(self.headers.items()),
                                    "body": body, "time": time.time()}) + "\n")
            fault = None
            for i, flt in enumerate(FAULTS):
                if flt.get("method", method) == method and url.path.startswith(flt.get("path", "/")):
                    fault = FAULTS.pop(i)
                    break
        if fault:
            if fault.get("delay"):
                time.sleep(fault["delay"])
            if fault.get("reset"):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
                self.wfile = io.BytesIO()
                self.close_connection = True
                return
            if "status" in fault:
                self.reply(fault["status"], headers=fault.get("headers"),
                           raw=fault.get("body", '{"message": "scripted fault"}'))
                return
        actions = SCRIPT.get("actions", {})
        if url.path.startswith("/blob/") and method == "GET":
            path = actions.get("zips", {}).get(url.path[len("/blob/"):])
            if not path or parse_qs(url.query).get("sig") != ["synthetic"]:
                self.reply(403, raw="<Error>AuthenticationFailed</Error>")
                return
            data = open(path, "rb").read()
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        token = SCRIPT.get("token")
        if token and self.headers.get("Authorization") != "Bearer " + token:
            self.reply(401, {"message": "Bad credentials"})
            return
        parts = url.path.strip("/").split("/")
        q = parse_qs(url.query)
        host = "http://%s:%d" % self.server.server_address[:2]
        if url.path == "/user" and method == "GET":
            if SCRIPT.get("user_status"):
                self.reply(SCRIPT["user_status"],
                           {"message": "Resource not accessible by integration"})
            else:
                self.reply(200, USER)
            return
        # GET/POST /repos/O/N/issues/PR/comments
        if len(parts) == 6 and parts[0] == "repos" and parts[3] == "issues" and parts[5] == "comments":
            pr = parts[4]
            with LOCK:
                if pr not in COMMENTS and SCRIPT.get("any_pr"):
                    COMMENTS[pr] = []
                if pr not in COMMENTS:
                    self.reply(404, {"message": "Not Found"})
                    return
                if method == "GET":
                    page = int(q.get("page", ["1"])[0])
                    items = COMMENTS[pr]
                    last = max(1, (len(items) + PAGE - 1) // PAGE)
                    chunk = items[(page - 1) * PAGE: page * PAGE]
                    links = []
                    base = host + url.path + "?per_page=%d&page=" % PAGE
                    if page < last:
                        links.append('<%s%d>; rel="next"' % (base, page + 1))
                        links.append('<%s%d>; rel="last"' % (base, last))
                    if page > 1:
                        links.append('<%s%d>; rel="prev"' % (base, page - 1))
                    self.reply(200, chunk, {"Link": ", ".join(links)} if links else None)
                    return
                if method == "POST":
                    NEXT_ID[0] += 1
                    c = {"id": NEXT_ID[0], "body": json.loads(body)["body"],
                         "html_url": host + "/c/%d" % NEXT_ID[0], "user": USER}
                    COMMENTS[pr].append(c)
                    self.reply(201, c)
                    return
        # PATCH /repos/O/N/issues/comments/ID
        if len(parts) == 6 and parts[3] == "issues" and parts[4] == "comments" and method == "PATCH":
            cid = int(parts[5])
            with LOCK:
                for items in COMMENTS.values():
                    for c in items:
                        if c["id"] == cid:
                            c["body"] = json.loads(body)["body"]
                            c["html_url"] = host + "/c/%d" % cid
                            self.reply(200, c)
                            return
            self.reply(404, {"message": "Not Found"})
            return
        # POST /repos/O/N/statuses/SHA
        if len(parts) == 5 and parts[3] == "statuses" and method == "POST":
            self.reply(201, json.loads(body))
            return
        # GET /repos/O/N/actions/runs, .../runs/ID/artifacts, .../artifacts/ID/zip
        if len(parts) >= 5 and parts[0] == "repos" and parts[3] == "actions" and method == "GET":
            if parts[4:] == ["runs"]:
                def keep(r):
                    return (("branch" not in q or r.get("head_branch") == q["branch"][0]) and
                            ("event" not in q or r.get("event") == q["event"][0]) and
                            ("status" not in q or q["status"][0] in
                             (r.get("status"), r.get("conclusion"))))
                runs = [r for r in actions.get("runs", []) if keep(r)]
                per = int(q.get("per_page", ["30"])[0])
                self.reply(200, {"total_count": len(runs), "workflow_runs": runs[:per]})
                return
            if len(parts) == 7 and parts[4] == "runs" and parts[6] == "artifacts":
                arts = [a for a in actions.get("artifacts", {}).get(parts[5], [])
                        if "name" not in q or a.get("name") == q["name"][0]]
                self.reply(200, {"total_count": len(arts), "artifacts": arts})
                return
            if len(parts) == 7 and parts[4] == "artifacts" and parts[6] == "zip":
                if parts[5] not in actions.get("zips", {}):
                    self.reply(404, {"message": "Not Found"})
                    return
                self.reply(302, raw="", headers={"Location": host + "/blob/%s?sig=synthetic" % parts[5]})
                return
        if url.path == "/hook" and method == "POST":
            self.reply(200, raw="ok")
            return
        self.reply(404, {"message": "Not Found"})

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
srv.serve_forever()
