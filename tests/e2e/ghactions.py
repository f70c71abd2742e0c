#!/usr/bin/env python3
"""ghactions.py: run a composite GitHub Action's steps in order, locally.

A small stand-in for the Actions runner, for kgate's end-to-end tests: it
reads an action.yml, evaluates the ${{ }} expressions it uses (contexts
inputs, github, steps, env, secrets; operators || && == != ! and
parentheses; always(), success(), failure(), format()), runs every run:
step with the shell it names (bash as the runner calls it: --noprofile
--norc -eo pipefail), passes GITHUB_OUTPUT, GITHUB_ENV and
GITHUB_STEP_SUMMARY between steps as the runner does, and plays the three
uses: steps the action needs against local directories:
actions/cache/restore, actions/cache/save (immutable keys, the newest
entry of a restore-keys prefix) and actions/upload-artifact.

    ghactions.py ACTION.yml JOB.json

JOB: {"inputs": {...}, "github": {... the github context, "event": {...}},
      "workspace": DIR, "runner_temp": DIR, "cache_dir": DIR,
      "artifact_dir": DIR, "env": {...}, "secrets": {...},
      "outputs": FILE (the action's outputs are written there as JSON)}
Each step is logged on stdout ("::step NAME: ran|skipped|failed (SECONDS s)").  Exit
status: 0 when every step that ran succeeded, 1 otherwise.
Standard library and PyYAML only.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import yaml


# ---------------------------------------------------------------- expressions
TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)"
                   r"|(?P<op>\|\||&&|==|!=|<=|>=|[!()<>,.\[\]])"
                   r"|(?P<id>[A-Za-z_][A-Za-z0-9_-]*))")


def tokenize(s):
    out, i = [], 0
    while i < len(s):
        if s[i:].strip() == "":
            break
        m = TOKEN.match(s, i)
        if not m or m.end() == i:
            raise SyntaxError("cannot parse expression %r at %d" % (s, i))
        i = m.end()
        for kind in ("str", "num", "op", "id"):
            if m.group(kind) is not None:
                out.append((kind, m.group(kind)))
                break
    return out


def truthy(v):
    return v not in (None, False, "", 0)


def as_str(v):
    if v is None:
        return ""
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


class Expr:
    def __init__(self, text, ctx):
        self.t = tokenize(text)
        self.i = 0
        self.ctx = ctx

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def take(self, val=None):
        tok = self.peek()
        if val is not None and tok[1] != val:
            raise SyntaxError("expected %r, got %r" % (val, tok[1]))
        self.i += 1
        return tok

    def parse(self):
        v = self.or_()
        if self.i != len(self.t):
            raise SyntaxError("trailing tokens in expression")
        return v

    def or_(self):
        v = self.and_()
        while self.peek()[1] == "||":
            self.take()
            w = self.and_()
            v = v if truthy(v) else w
        return v

    def and_(self):
        v = self.cmp()
        while self.peek()[1] == "&&":
            self.take()
            w = self.cmp()
            v = w if truthy(v) else v
        return v

    def cmp(self):
        v = self.unary()
        while self.peek()[1] in ("==", "!="):
            op = self.take()[1]
            w = self.unary()
            a, b = as_str(v).lower(), as_str(w).lower()
            v = (a == b) if op == "==" else (a != b)
        return v

    def unary(self):
        if self.peek()[1] == "!":
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self):
        kind, val = self.take()
        if kind == "str":
            return val[1:-1].replace("''", "'")
        if kind == "num":
            return float(val) if "." in val else int(val)
        if val == "(":
            v = self.or_()
            self.take(")")
            return v
        if kind != "id":
            raise SyntaxError("unexpected %r" % val)
        if val in ("true", "false"):
            return val == "true"
        if val == "null":
            return None
        if self.peek()[1] == "(":
            self.take("(")
            args = []
            while self.peek()[1] != ")":
                args.append(self.or_())
                if self.peek()[1] == ",":
                    self.take()
            self.take(")")
            return self.call(val, args)
        v = self.ctx.get(val)
        while self.peek()[1] in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = as_str(self.or_())
                self.take("]")
            v = v.get(key) if isinstance(v, dict) else None
        return v

    def call(self, name, args):
        if name == "always":
            return True
        if name == "success":
            return not self.ctx["_failed"]
        if name == "failure":
            return self.ctx["_failed"]
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: as_str(args[1 + int(m.group(1))]), as_str(args[0]))
        raise SyntaxError("unknown function %s()" % name)


def evaluate(text, ctx):
    return Expr(text, ctx).parse()


def interpolate(s, ctx):
    """A string with every ${{ expr }} replaced by its value."""
    if not isinstance(s, str):
        return as_str(s)
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: as_str(evaluate(m.group(1), ctx)), s, flags=re.S)


def condition(s, ctx):
    if s is None:
        return not ctx["_failed"]
    if isinstance(s, bool):
        return s
    s = s.strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", s, flags=re.S)
    return truthy(evaluate(m.group(1) if m else s, ctx))


# ------------------------------------------------------------------ the steps
def read_kv(path):
    """name=value lines and name<<DELIM heredocs, as GITHUB_OUTPUT holds them."""
    out = {}
    if not os.path.exists(path):
        return out
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^([^=<]+)<<(.+)$", ln)
        if m:
            val = []
            i += 1
            while i < len(lines) and lines[i] != m.group(2):
                val.append(lines[i])
                i += 1
            out[m.group(1)] = "\n".join(val)
        elif "=" in ln:
            k, v = ln.split("=", 1)
            out[k] = v
        i += 1
    return out


def cache_entries(cache_dir):
    """(sequence, key) of every stored entry, newest first."""
    ents = []
    for k in os.listdir(cache_dir) if os.path.isdir(cache_dir) else []:
        seq = os.path.join(cache_dir, k, ".seq")
        if os.path.exists(seq):
            ents.append((int(open(seq).read()), k))
    return sorted(ents, reverse=True)


def uses_step(uses, w, job, log):
    ws = job["workspace"]
    if uses.startswith("actions/cache/restore@"):
        key, path = w["key"], w["path"]
        prefixes = [p.strip() for p in w.get("restore-keys", "").split("\n") if p.strip()]
        ents = cache_entries(job["cache_dir"])
        hit = next((k for _, k in ents if k == key), None)
        for p in prefixes:
            if hit:
                break
            hit = next((k for _, k in ents if k.startswith(p)), None)
        if hit:
            shutil.copy(os.path.join(job["cache_dir"], hit, os.path.basename(path)),
                        os.path.join(ws, path))
            log("cache restored from key: %s" % hit)
        else:
            log("cache not found for input keys: %s" % ", ".join([key] + prefixes))
        return {"cache-hit": "true" if hit == key else "false", "cache-matched-key": hit or ""}
    if uses.startswith("actions/cache/save@"):
        key, path = w["key"], os.path.join(ws, w["path"])
        d = os.path.join(job["cache_dir"], key)
        if os.path.exists(d):
            log("cache entry %s exists: not saved (caches are immutable)" % key)
            return {}
        if not os.path.exists(path):
            log("path %s does not exist: not saved" % w["path"])
            return {}
        os.makedirs(d)
        shutil.copy(path, d)
        seq = max([s for s, _ in cache_entries(job["cache_dir"])] + [0]) + 1
        open(os.path.join(d, ".seq"), "w").write(str(seq))
        log("cache saved with key: %s" % key)
        return {}
    if uses.startswith("actions/upload-artifact@"):
        d = os.path.join(job["artifact_dir"], w["name"])
        os.makedirs(d, exist_ok=True)
        for p in (x.strip() for x in w.get("path", "").split("\n")):
            src = os.path.join(ws, p) if p else ""
            if p and os.path.isfile(src):
                shutil.copy(src, d)
        log("artifact %s: %s" % (w["name"], ", ".join(sorted(os.listdir(d)))))
        return {}
    raise SystemExit("ghactions.py: cannot play uses: %s" % uses)


def main():
    action = yaml.safe_load(open(sys.argv[1]))
    job = json.load(open(sys.argv[2]))
    action_path = os.path.dirname(os.path.abspath(sys.argv[1]))
    gh = dict(job["github"])
    gh.setdefault("action_path", action_path)
    gh.setdefault("token", job.get("secrets", {}).get("GITHUB_TOKEN", ""))
    tmp = job["runner_temp"]
    os.makedirs(tmp, exist_ok=True)
    files = {n: os.path.join(tmp, "_" + n) for n in ("env", "summary", "event.json")}
    for n in ("env", "summary"):
        open(files[n], "a").close()
    json.dump(gh.get("event", {}), open(files["event.json"], "w"))
    ctx = {"github": gh, "steps": {}, "env": {}, "secrets": job.get("secrets", {}),
           "runner": {"temp": tmp}, "_failed": False}
    inputs = {}
    for k, spec in (action.get("inputs") or {}).items():
        if k in job.get("inputs", {}):
            inputs[k] = as_str(job["inputs"][k])
        else:
            inputs[k] = interpolate(as_str((spec or {}).get("default", "")), ctx)
    ctx["inputs"] = inputs

    def log(msg):
        print(msg, flush=True)

    base_env = dict(os.environ)
    base_env.update(job.get("env", {}))
    base_env.update({
        "CI": "true", "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": gh.get("event_name", ""),
        "GITHUB_EVENT_PATH": files["event.json"],
        "GITHUB_SHA": gh.get("sha", ""), "GITHUB_REF": gh.get("ref", ""),
        "GITHUB_REF_NAME": gh.get("ref_name", ""),
        "GITHUB_HEAD_REF": gh.get("head_ref", ""), "GITHUB_BASE_REF": gh.get("base_ref", ""),
        "GITHUB_REPOSITORY": gh.get("repository", ""),
        "GITHUB_RUN_ID": str(gh.get("run_id", "")), "GITHUB_JOB": gh.get("job", ""),
        "GITHUB_SERVER_URL": gh.get("server_url", "https://github.com"),
        "GITHUB_API_URL": gh.get("api_url", "https://api.github.com"),
        "GITHUB_WORKSPACE": job["workspace"], "GITHUB_ACTION_PATH": action_path,
        "GITHUB_ENV": files["env"], "GITHUB_STEP_SUMMARY": files["summary"],
        "RUNNER_TEMP": tmp,
    })
    for i, st in enumerate(action["runs"]["steps"]):
        name = st.get("name") or st.get("uses") or "step %d" % i
        ctx["env"] = dict(read_kv(files["env"]))
        if not condition(st.get("if"), ctx):
            log("::step %s: skipped" % name)
            continue
        outputs, ok, t0 = {}, True, time.time()
        if "uses" in st:
            w = {k: interpolate(v, ctx) for k, v in (st.get("with") or {}).items()}
            outputs = uses_step(st["uses"], w, job, log)
        else:
            env = dict(base_env)
            env.update(read_kv(files["env"]))
            for k, v in (st.get("env") or {}).items():
                env[k] = interpolate(v, ctx)
            out = os.path.join(tmp, "_output_%d" % i)
            open(out, "w").close()
            env["GITHUB_OUTPUT"] = out
            script = os.path.join(tmp, "_step_%d.sh" % i)
            with open(script, "w") as f:
                f.write(st["run"])
            shell = st.get("shell", "bash")
            argv = (["bash", "--noprofile", "--norc", "-eo", "pipefail", script]
                    if shell == "bash" else ["sh", "-e", script])
            rc = subprocess.call(argv, cwd=job["workspace"], env=env)
            ok = rc == 0
            outputs = read_kv(out)
        if "id" in st:
            ctx["steps"][st["id"]] = {"outputs": outputs,
                                      "outcome": "success" if ok else "failure"}
        if not ok:
            ctx["_failed"] = True
        log("::step %s: %s (%.1f s)" % (name, "ran" if ok else "failed", time.time() - t0))
    result = {k: interpolate(as_str(v.get("value", "")), ctx)
              for k, v in (action.get("outputs") or {}).items()}
    result["_summary"] = open(files["summary"]).read()
    if job.get("outputs"):
        json.dump(result, open(job["outputs"], "w"), indent=1)
    return 1 if ctx["_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
