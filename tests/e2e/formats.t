#!/bin/sh
# formats.t: one way of writing numbers and names in every output.  One
# fixture (the H200 suite recorded on a GPU, tests/fixtures/h200/suite/: a
# baseline, and a head where transpose_tiled does 5% more work) is checked
# in every format of `kgate check` and in the PR comment for: values in
# their unit as the text table writes them, commits at one length (12 digits
# in human outputs, whole in JSON), the NVTX path wherever a kernel is
# named, commit links where the server is known, and the JSON against
# docs/check.schema.json.
. "$(dirname "$0")/lib.sh"
SUITE="$SHARED_FIX/suite/trace"
BASE=2137f284ef62aa0b1c9e3d4f5a6b7c8d9e0f1a2b
HEAD=9fe4c1d2b3a4f5e6d7c8b9a0f1e2d3c4b5a69788
DB="$T/k.db"
for side in base head; do
	set --
	for f in "$SUITE/$side"/*.jsonl; do
		b=$(basename "$f")
		set -- "$@" --benchmark "${b%%.*}" --records "$f"
	done
	c=$BASE; br=main
	[ "$side" = head ] && { c=$HEAD; br=pr; }
	"$KGATE" ingest --db "$DB" --commit "$c" --branch "$br" "$@" 2>/dev/null
done
ok "the fixture is stored" test -s "$DB"

# the time of the regressed kernel, as the text table writes it
run "$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE --no-store
is "$rc" 1 "the fixture fails the check"
text=$out
base_t=$(printf '%s\n' "$text" | awk '/^FAIL .*tr_tiled.*gpu__time_duration/ {print $(NF-6), $(NF-5); exit}')
head_t=$(printf '%s\n' "$text" | awk '/^FAIL .*tr_tiled.*gpu__time_duration/ {print $(NF-4), $(NF-3); exit}')
like "$base_t $head_t" '^[0-9.]+ us [0-9.]+ us$' "text: the times in their unit ($base_t -> $head_t)"

# shas LENGTH TEXT: every hex run of 7 or more digits in TEXT is LENGTH long
shas_are() {
	bad=$(printf '%s\n' "$2" | grep -oE '[0-9a-f]{7,}' | awk -v n="$1" 'length($0) != n' | head -3)
	[ -z "$bad" ] || { diag "other lengths: $bad"; return 1; }
	printf '%s\n' "$2" | grep -qE '[0-9a-f]{7,}'
}
ok "text: commits at 12 digits" shas_are 12 "$text"
like "$text" "^kgate check: $(printf '%.12s' $HEAD) against $(printf '%.12s' $BASE) " "text: the heading names both commits"
like "$text" '^FAIL transpose_tiled \[compute\]: tr_tiled\(.*\) gpu__time_duration.sum: slower' "text: the detail line names benchmark and NVTX path"
unlike "$text" '^(FAIL|INCONCLUSIVE|CHANGED) [^ ]*\(' "text: no detail line names a kernel without its benchmark"

for fmt in markdown junit github; do
	run "$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE --no-store --format $fmt
	ok "$fmt: commits at 12 digits" shas_are 12 "$out"
	like "$out" "$base_t" "$fmt: the baseline time as the text table writes it"
	like "$out" "$head_t" "$fmt: the head time as the text table writes it"
	like "$out" "compute" "$fmt: the NVTX path of the regressed kernel"
	unlike "$out" '[0-9]{6}(\.[0-9]+)? ?(->|→)' "$fmt: no raw nanoseconds"
done
run env GITHUB_SERVER_URL=https://github.example GITHUB_REPOSITORY=o/n \
	"$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE --no-store --format markdown
like "$out" "\[\`$(printf '%.12s' $HEAD)\`\]\(https://github.example/o/n/commit/$HEAD\)" "markdown: the head commit links to its page where the server is known"

# JSON: whole commits, the baseline without prose, the schema holds
run "$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE --no-store --format json
printf '%s\n' "$out" >"$T/check.json"
is "$(jq -r .head "$T/check.json")" "$HEAD" "json: head is the whole commit"
is "$(jq -r .baseline "$T/check.json")" "$BASE" "json: baseline is the whole commit, no prose"
is "$(jq -r '.results[] | select(.verdict == "FAIL") | .nvtx' "$T/check.json" | sort -u | tr '\n' ' ')" "compute " "json: the failing result carries its NVTX path"
validate() {
	python3 - "$KGATE_SRC/docs/check.schema.json" "$1" <<'PYEOF'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
errs = list(jsonschema.Draft7Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errs[:5]:
    print("#", list(e.path), e.message)
sys.exit(1 if errs else 0)
PYEOF
}
ok "json: valid under docs/check.schema.json" validate "$T/check.json"
run "$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE --no-store --format json --explain
printf '%s\n' "$out" >"$T/explain.json"
ok "json with --explain: valid under the schema" validate "$T/explain.json"
jq '.baseline = "x (merge base with main)" | .extra = 1' "$T/check.json" >"$T/bad.json"
run validate "$T/bad.json"
is "$rc" 1 "the schema refuses a field it does not name"
# a check with no baseline stored for this GPU: null commit, the reason apart
"$KGATE" ingest --db "$T/one.db" --commit $HEAD --branch pr --benchmark transpose_tiled \
	--records "$(ls "$SUITE/head"/transpose_tiled.*.jsonl | head -n 1)" 2>/dev/null
run "$KGATE" check --db "$T/one.db" --commit $HEAD --no-store --format json
printf '%s\n' "$out" >"$T/nb.json"
is "$(jq -r .verdict "$T/nb.json") $(jq -r .baseline "$T/nb.json")" "NO BASELINE null" "json without a baseline: NO BASELINE, baseline null"
ok "json without a baseline: valid under the schema" validate "$T/nb.json"

# the PR comment of the stored check
"$KGATE" check --db "$DB" --commit $HEAD --baseline $BASE >/dev/null 2>&1
run env GITHUB_SERVER_URL=https://github.example GITHUB_REPOSITORY=o/n \
	"$KGATE" comment --db "$DB" --commit $HEAD --print
is "$rc" 0 "comment --print exits 0"
comment=$out
like "$comment" "$base_t" "comment: the baseline time as the text table writes it"
like "$comment" "$head_t" "comment: the head time as the text table writes it"
unlike "$comment" '[0-9]{6}(\.[0-9]+)? (->|→)' "comment: no raw nanoseconds"
ok "comment: commits at 12 digits, besides the links" shas_are 12 "$(printf '%s\n' "$comment" | sed 's|/commit/[0-9a-f]*||g')"
like "$comment" "transpose\\\\_tiled \\[compute\\]" "comment: the NVTX path beside the benchmark"
like "$comment" "\(https://github.example/o/n/commit/$BASE\)" "comment: the baseline links to its commit"
like "$comment" 'FAIL: 1 regressed kernel \(1 failing comparison\)' "comment: one change counts once in the headline"
like "$comment" '1 changed \(launch configuration' "comment: the launch configuration change is said, apart"
done_testing
