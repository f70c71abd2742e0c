#!/bin/sh
# ranks.t: a distributed job's processes (synthetic records, ranks_gen.py:
# not GPU measurements): each rank's kernels under their own identity, a
# slowdown on rank 1 caught on rank 1 and not on rank 0, the slowest rank
# named, the ranks pooled when asked, rank: in thresholds rules, NCCL
# kernels named as communication, runs of different device sets never
# compared, and records without a rank still read as before.
. "$(dirname "$0")/lib.sh"

GEN="$KGATE_SRC/tests/e2e/ranks_gen.py"
DB="$T/k.db"
mkdir -p "$T/base" "$T/head" "$T/one" "$T/same"
python3 "$GEN" "$T/base" 1 2 -1 0
python3 "$GEN" "$T/head" 2 2 1 0.10
python3 "$GEN" "$T/same" 3 2 -1 0
python3 "$GEN" "$T/one" 4 1 -1 0 1

run "$KGATE" ingest --db "$DB" --commit base --benchmark train --records "$T/base/train.rank0.jsonl" \
	--records "$T/base/train.rank1.jsonl"
is "$rc" 0 "a two-rank job ingests"
is "$(sqlite3 "$DB" "SELECT group_concat(DISTINCT rank) FROM (SELECT rank FROM samples ORDER BY rank)")" "0,1" \
	"each sample stored with its rank"
is "$(sqlite3 "$DB" "SELECT count(*) FROM samples WHERE rank IS NULL")" 0 "no sample without a rank"
is "$(sqlite3 "$DB" "SELECT json_array_length(devices) FROM runs")" 2 "the run's fingerprint holds both devices"
like "$(sqlite3 "$DB" "SELECT devices FROM runs")" '"uuid":"GPU-0+-0000-0000-0000-0+1"' "each device by its uuid"
"$KGATE" ingest --db "$DB" --commit head --benchmark train --records "$T/head/train.rank0.jsonl" \
	--records "$T/head/train.rank1.jsonl" 2>/dev/null
"$KGATE" ingest --db "$DB" --commit same --benchmark train --records "$T/same/train.rank0.jsonl" \
	--records "$T/same/train.rank1.jsonl" 2>/dev/null

# --- per-rank verdicts ----------------------------------------------------
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store
printf '%s\n' "$out" >"$T/ranks.json"
ok "json with ranks: valid under docs/check.schema.json (rank, category, nccl, slowest_ranks)" \
	python3 -c 'import json, sys, jsonschema; jsonschema.Draft7Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))' \
	"$KGATE_SRC/docs/check.schema.json" "$T/ranks.json"
is "$rc" 1 "rank 1's slower compute kernel fails the check"
J="$out"
v() { printf '%s' "$J" | jq -r "[.results[] | select(.kernel | startswith(\"$1\")) | select(.metric == \"gpu__time_duration.sum\") | select(.rank == $2) | .verdict] | join(\",\")"; }
is "$(v _Z4gemm 1)" FAIL "the compute kernel FAILs on rank 1"
is "$(v _Z4gemm 0)" PASS "the compute kernel PASSes on rank 0"
is "$(v _Z40nccl 0),$(v _Z40nccl 1)" PASS,PASS "the all-reduce PASSes on both ranks"
is "$(printf '%s' "$J" | jq -r '[.results[] | select(.verdict == "FAIL")] | length')" 1 \
	"one FAIL only: the kernel on rank 1"
is "$(printf '%s' "$J" | jq -r '.slowest_ranks[] | select(.kernel | startswith("_Z4gemm")) | "\(.rank) \(.ranks) \(.fastest_rank)"')" \
	"1 2 0" "json: rank 1 named the slowest of 2 ranks, rank 0 the fastest"
is "$(printf '%s' "$J" | jq -r '[.results[] | select(.kernel | startswith("_Z40nccl")) | .category] | unique | join(",")')" \
	communication "json: the NCCL kernel's category is communication"
is "$(printf '%s' "$J" | jq -r '[.results[] | select(.kernel | startswith("_Z40nccl")) | .nccl | "\(.collective) \(.op) \(.type) \(.algorithm) \(.protocol)"] | unique | join(",")')" \
	"AllReduce Sum bf16 RING LL" "json: its collective, operator, type, algorithm and protocol"
is "$(printf '%s' "$J" | jq -r '[.results[] | select(.kernel | startswith("_Z4gemm")) | .category] | unique | join(",")')" \
	compute "json: the gemm's category is compute"

run "$KGATE" check --db "$DB" --commit head --baseline base --no-store
is "$rc" 1 "text: FAIL"
like "$out" "^FAIL +train \[step\] \(rank 1\): gemm\(float const\*, float const\*, flo.* +gpu__time_duration.sum" \
	"text: the FAIL row names rank 1"
like "$out" "^FAIL train \[step\]: gemm\(float const\*, float const\*, float\*, int\) \(rank 1\) gpu__time_duration.sum: slower by" \
	"text: the FAIL line names rank 1"
unlike "$out" "\(rank 0\)" "text: rank 0 is not listed (it passes)"
like "$out" "^slowest rank: train: gemm\(float const\*, float const\*, float\*, int\) gpu__time_duration.sum: rank 1 \+[0-9.]+% \(of 2 ranks; rank 0 " \
	"text: the slowest-rank line names rank 1"
run "$KGATE" check --db "$DB" --commit head --baseline base --no-store --all
like "$out" "^communication: ncclDevKernel_AllReduce_Sum_bf16_RING_LL.*: AllReduce Sum bf16 RING/LL$" \
	"text: the NCCL kernel named as communication"
like "$out" "^slowest rank: train: ncclDevKernel_AllReduce" "text --all: a slowest-rank line for the all-reduce too"
run "$KGATE" check --db "$DB" --commit head --baseline base --no-store --format markdown
like "$out" "<code>gemm\(float const\*, float const\*, float\*, int\)</code> rank 1 \|" "markdown: the FAIL row names rank 1"
like "$out" "^- train: <code>gemm.*</code> <code>gpu__time_duration.sum</code>: \*\*rank 1\*\* \+" \
	"markdown: the slowest rank named"

run "$KGATE" check --db "$DB" --commit head --baseline base --no-store --format junit
like "$out" '<testcase classname="train/step" name="gemm\(float const\*, float const\*, float\*, int\) \(rank 1\) gpu__time_duration.sum">' \
	"junit: the failing test case names rank 1"
run "$KGATE" check --db "$DB" --commit head --baseline base --no-store --format github
like "$out" "^::error title=kgate FAIL%3A train rank 1::gemm" "github: the annotation names rank 1"

run "$KGATE" check --db "$DB" --commit same --baseline base --format json --no-store
is "$rc" 0 "no slowdown: PASS"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.metric == "gpu__time_duration.sum") | .verdict] | unique | join(",")')" PASS \
	"every rank PASSes"

# --- stored verdicts keep the rank ------------------------------------------
run "$KGATE" check --db "$DB" --commit head --baseline base
is "$(sqlite3 "$DB" "SELECT rank FROM verdicts WHERE verdict = 'fail'")" 1 "the stored FAIL has rank 1"

# --- pooled -------------------------------------------------------------------
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store --pool-ranks
P="$out"
is "$(printf '%s' "$P" | jq -r '[.results[] | select(.rank != null)] | length')" 0 "--pool-ranks: no result has a rank"
is "$(printf '%s' "$P" | jq -r '.results[] | select(.kernel | startswith("_Z4gemm")) | select(.metric == "gpu__time_duration.sum") | .n_head')" \
	"$(printf '%s' "$J" | jq -r '[.results[] | select(.kernel | startswith("_Z4gemm")) | select(.metric == "gpu__time_duration.sum") | .n_head] | add')" \
	"--pool-ranks: one series holds both ranks' launches"
printf 'version: 1\nstatistics:\n  pool_ranks: true\ndefaults:\n  gpu__time_duration.sum: { regression: 3%% }\n' >"$T/pool.yaml"
printf 'version: 1\ndefaults:\n  gpu__time_duration.sum: { regression: 3%% }\n' >"$T/nopool.yaml"
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store -t "$T/nopool.yaml" --pool-ranks
P2=$(printf '%s' "$out" | jq -c '[.results[] | [.kernel, .metric, .rank, .verdict, .n_head]]')
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store -t "$T/pool.yaml"
is "$(printf '%s' "$out" | jq -c '[.results[] | [.kernel, .metric, .rank, .verdict, .n_head]]')" "$P2" \
	"statistics: pool_ranks: true pools as --pool-ranks does"
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store -t "$T/nopool.yaml"
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.rank != null)] | length')" 4 \
	"without them, the two kernels' times on two ranks are four results"
printf 'version: 1\nstatistics:\n  pool_ranks: maybe\n' >"$T/bad.yaml"
run "$KGATE" check --db "$DB" --commit head --baseline base --no-store -t "$T/bad.yaml"
is "$rc" 2 "a bad pool_ranks is a config error"
like "$err" "bad.yaml:3:15: 'pool_ranks' must be true or false, got 'maybe'" "named by file:line:column"

# --- rank: in rules -------------------------------------------------------------
printf 'version: 1\ndefaults:\n  gpu__time_duration.sum: { regression: 3%% }\nrules:\n  - match: { rank: 1, kernel: "regex:^_Z4gemm" }\n    metrics:\n      gpu__time_duration.sum: { regression: 50%% }\n' >"$T/r1.yaml"
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store -t "$T/r1.yaml"
is "$rc" 0 "a rule for rank 1 with a 50% limit lets its 10% pass"
printf 'version: 1\ndefaults:\n  gpu__time_duration.sum: { regression: 3%% }\nrules:\n  - match: { rank: 0 }\n    metrics:\n      gpu__time_duration.sum: { regression: 50%% }\n' >"$T/r0.yaml"
run "$KGATE" check --db "$DB" --commit head --baseline base --format json --no-store -t "$T/r0.yaml"
is "$rc" 1 "a rule for rank 0 leaves rank 1 under the default: FAIL"
printf 'version: 1\nrules:\n  - match: { rank: one }\n    metrics:\n      gpu__time_duration.sum: { regression: 5%% }\n' >"$T/rbad.yaml"
run "$KGATE" check --db "$DB" --commit head --baseline base --no-store -t "$T/rbad.yaml"
is "$rc" 2 "a bad rank: is a config error"
like "$err" "rbad.yaml:3:20: 'rank' must be an integer from 0 to [0-9]+, got 'one'" "named by file:line:column"

# --- device sets ------------------------------------------------------------------
"$KGATE" ingest --db "$DB" --commit one --benchmark train --records "$T/one/train.rank0.jsonl" 2>/dev/null
run "$KGATE" check --db "$DB" --commit one --baseline base --no-store
is "$rc" 2 "an explicit baseline of another device set is refused"
like "$err" "was recorded on 2 x Synthetic GPU, the head run on 1 x Synthetic GPU, and runs of different device sets are never compared" \
	"the message names both device sets"

# --- kgate db copy keeps the ranks and the device set ---------------------------
run "$KGATE" db copy "$DB" "$T/copy.db"
is "$rc" 0 "db copy of the ranked runs"
is "$(sqlite3 "$T/copy.db" "SELECT rank, count(*) FROM samples GROUP BY rank ORDER BY rank" | tr '\n' ' ')" \
	"$(sqlite3 "$DB" "SELECT rank, count(*) FROM samples GROUP BY rank ORDER BY rank" | tr '\n' ' ')" \
	"the copy's samples keep their ranks"
is "$(sqlite3 "$T/copy.db" "SELECT devices FROM runs ORDER BY time, commit_sha" | sort)" \
	"$(sqlite3 "$DB" "SELECT devices FROM runs ORDER BY time, commit_sha" | sort)" "the copy's runs keep their device sets"
run "$KGATE" check --db "$T/copy.db" --commit head --baseline base --format json --no-store
is "$(printf '%s' "$out" | jq -r '[.results[] | select(.verdict == "FAIL") | .rank] | join(",")')" 1 \
	"a check of the copy fails rank 1 alone"

# --- records without a rank -------------------------------------------------------
REC="$FIX/records"
run "$KGATE" ingest --db "$T/old.db" --commit old --records "$REC/good.jsonl"
is "$rc" 0 "a format 1 file (no rank) still ingests"
is "$(sqlite3 "$T/old.db" "SELECT count(*) FROM samples WHERE rank IS NOT NULL")" 0 "its samples have no rank"
run "$KGATE" check --db "$T/old.db" --commit old --baseline old --format json --no-store
unlike "$out" '"slowest_ranks"' "a check without ranks has no slowest-rank list"

# --- kgate stats: communication apart from compute ----------------------------
run "$KGATE" stats --db "$DB" --commit head --report kernel_sum
is "$rc" 0 "stats of the two-rank run"
like "$out" "Category" "stats: a Category column when a kernel is NCCL's"
like "$out" "ncclDevKernel_AllReduce_Sum_bf16_RING_LL.* communication$" "stats: the all-reduce is communication"
like "$out" "gemm\(float const\*, float const\*, float\*, int\) +compute$" "stats: the gemm is compute"
like "$out" "^communication: [0-9.]+% \(NCCL kernels\), compute: [0-9.]+%$" "stats: the share of each"
run "$KGATE" stats --db "$DB" --commit head --report kernel_sum --format json
is "$(printf '%s' "$out" | jq -r '[.rows[] | .category] | sort | join(",")')" "communication,compute" \
	"stats json: each row's category"
run "$KGATE" stats --db "$T/old.db" --commit old --report kernel_sum
unlike "$out" "Category|communication" "stats of a run without NCCL kernels: no Category column"

done_testing
