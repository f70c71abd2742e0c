#!/usr/bin/env python3
"""restore-db.py: bring back kgate's history database from the newest
artifact of the default branch, for when the Actions cache is gone.

The GitHub Action (ci/action.yml) keeps the SQLite database in the Actions
cache, which GitHub evicts after 7 days without use, and also uploads it as
an artifact of every run (kept 30 days).  When the cache has nothing, this
script asks the GitHub REST API for the newest completed push runs of the
branch, takes the first whose artifact of the given name (its run id put
in) exists and has not expired, downloads it, and writes the database file
inside it to OUT.

    restore-db.py --repo OWNER/NAME --branch BRANCH --artifact 'kgate-{run_id}-gate'
                  --file kgate.db --out kgate.db [--runs 20] [--max-bytes N]

GITHUB_TOKEN is the token (needs actions: read; never printed);
GITHUB_API_URL the API (default https://api.github.com).  Requests:
GET /repos/R/actions/runs?branch=B&event=push&status=completed, then per
run GET /repos/R/actions/runs/ID/artifacts?name=NAME, then GET
/repos/R/actions/artifacts/ID/zip, which answers with a redirect to a
signed URL: that one is fetched without the token.  Each request times out
after 60 s.  OUT is written whole (a temporary file renamed) and only when
the archive held an SQLite database of at most --max-bytes; an existing OUT
is never replaced.

Exit status: 0 restored; 1 nothing to restore (no such run or artifact);
2 bad usage (OUT exists); 3 the API or the download failed, or the archive
held no SQLite database: nothing written.  Standard library only.
"""
import argparse
import io
import json
import os
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile

TIMEOUT = 60
SQLITE_MAGIC = b"SQLite format 3\x00"


def say(msg):
    print("restore-db: " + msg, file=sys.stderr)


class Failed(Exception):
    pass


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def get(url, token, accept="application/vnd.github+json", limit=None):
    """(status, headers, body) of GET url; a redirect is returned, not followed."""
    req = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "kgate-restore-db",
                                               "X-GitHub-Api-Version": "2022-11-28"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with OPENER.open(req, timeout=TIMEOUT) as r:
            body = r.read(limit + 1 if limit else -1)
            return r.status, r.headers, body
    except urllib.error.HTTPError as e:
        if e.code in (301, 302, 303, 307, 308):
            return e.code, e.headers, b""
        raise Failed("GET %s: HTTP %d %s" % (url.split("?")[0], e.code, e.reason))
    except (urllib.error.URLError, OSError) as e:
        raise Failed("GET %s: %s" % (url.split("?")[0], getattr(e, "reason", e)))


def get_json(url, token):
    status, _, body = get(url, token)
    if status != 200:
        raise Failed("GET %s: HTTP %d" % (url.split("?")[0], status))
    try:
        return json.loads(body)
    except ValueError:
        raise Failed("GET %s: the answer is not JSON" % url.split("?")[0])


def download(api, repo, art, token, max_bytes):
    url = "%s/repos/%s/actions/artifacts/%d/zip" % (api, repo, art["id"])
    status, headers, body = get(url, token, accept="application/vnd.github+json",
                                limit=max_bytes)
    if status in (301, 302, 303, 307, 308):
        loc = headers.get("Location")
        if not loc:
            raise Failed("GET %s: a redirect without a Location" % url)
        # the signed URL of the archive: never sent the token
        status, headers, body = get(urllib.parse.urljoin(url, loc), None,
                                    accept="application/zip", limit=max_bytes)
    if status != 200:
        raise Failed("GET %s: HTTP %d" % (url, status))
    if len(body) > max_bytes:
        raise Failed("artifact %s is over %d bytes" % (art.get("name"), max_bytes))
    return body


def extract(blob, name, max_bytes):
    """The bytes of the member whose base name is name, or None."""
    try:
        z = zipfile.ZipFile(io.BytesIO(blob))
    except zipfile.BadZipFile:
        raise Failed("the artifact is not a zip archive")
    with z:
        hits = [i for i in z.infolist()
                if not i.is_dir() and os.path.basename(i.filename) == name]
        if not hits:
            return None
        # the shortest path: the database at the top, not one in a subdirectory
        info = min(hits, key=lambda i: (i.filename.count("/"), i.filename))
        if info.file_size > max_bytes:
            raise Failed("%s in the artifact is over %d bytes" % (info.filename, max_bytes))
        try:
            with z.open(info) as f:
                data = f.read(max_bytes + 1)
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise Failed("cannot read %s from the artifact: %s" % (info.filename, e))
        if len(data) > max_bytes:
            raise Failed("%s in the artifact is over %d bytes" % (info.filename, max_bytes))
        return data


def main():
    ap = argparse.ArgumentParser(description="Restore kgate's database from the newest artifact.")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--branch", required=True)
    ap.add_argument("--artifact", required=True, help="artifact name; {run_id} is the run's id")
    ap.add_argument("--file", required=True, help="the database's file name in the artifact")
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=20, help="newest runs looked at (max 100)")
    ap.add_argument("--max-bytes", type=int, default=4 << 30)
    a = ap.parse_args()
    if os.path.exists(a.out):
        say("'%s' exists; not replaced" % a.out)
        return 2
    api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    api = api.rstrip("/")
    token = os.environ.get("GITHUB_TOKEN") or None
    repo = a.repo
    try:
        q = urllib.parse.urlencode({"branch": a.branch, "event": "push", "status": "completed",
                                    "exclude_pull_requests": "true",
                                    "per_page": max(1, min(a.runs, 100))})
        runs = get_json("%s/repos/%s/actions/runs?%s" % (api, repo, q), token)
        runs = runs.get("workflow_runs") or []
        runs.sort(key=lambda r: (r.get("created_at") or "", r.get("id") or 0), reverse=True)
        for r in runs:
            if r.get("head_branch") != a.branch or r.get("event") != "push":
                continue
            name = a.artifact.replace("{run_id}", str(r["id"]))
            arts = get_json("%s/repos/%s/actions/runs/%d/artifacts?%s" %
                            (api, repo, r["id"], urllib.parse.urlencode({"name": name})), token)
            arts = [x for x in arts.get("artifacts") or []
                    if x.get("name") == name and not x.get("expired")]
            if not arts:
                continue
            art = max(arts, key=lambda x: (x.get("created_at") or "", x.get("id") or 0))
            data = extract(download(api, repo, art, token, a.max_bytes), a.file, a.max_bytes)
            if data is None:
                say("artifact %s of run %d holds no '%s'; trying an older run"
                    % (name, r["id"], a.file))
                continue
            if not data.startswith(SQLITE_MAGIC):
                raise Failed("'%s' in artifact %s is not an SQLite database" % (a.file, name))
            d = os.path.dirname(os.path.abspath(a.out))
            fd, tmp = tempfile.mkstemp(prefix=".restore-", dir=d)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                if os.path.exists(a.out):
                    say("'%s' appeared meanwhile; not replaced" % a.out)
                    os.unlink(tmp)
                    return 2
                os.rename(tmp, a.out)
            except OSError as e:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise Failed("cannot write '%s': %s" % (a.out, e.strerror))
            say("restored '%s' (%d bytes) from artifact %s of run %d (%s, commit %.12s)"
                % (a.out, len(data), name, r["id"], r.get("created_at", "?"),
                   r.get("head_sha") or "?"))
            return 0
    except Failed as e:
        say("%s; nothing restored" % e)
        return 3
    say("no unexpired artifact %s of a push run of '%s' among the newest %d runs; nothing restored"
        % (a.artifact, a.branch, len(runs)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
