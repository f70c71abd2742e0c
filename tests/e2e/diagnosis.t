#!/bin/sh
# diagnosis.t: "kgate explain" on counters kgate's own collector recorded on
# an H200 (tests/fixtures/h200/diag: metrics mode, the diagnostic set, one
# launch of each variant; scripts/record-diagnosis.sh), each injected
# regression against its base variant.  The cause must be named, and where
# Nsight Compute raised the same rule on the same launch
# (tests/fixtures/h200/ncu/<variant>.details.csv) the estimated speed-ups
# must agree within 10 percentage points; the differences that remain are
# in docs/EXPLAIN.md and asserted here as they are.
. "$(dirname "$0")/lib.sh"
. "$KGATE_SRC/tests/e2e/rules.sh"

D="$FIX/h200/diag"
N="$FIX/h200/ncu"
DB="$T/k.db"
unset GITHUB_STEP_SUMMARY

for f in "$D"/*.jsonl; do
	v=$(basename "$f" .jsonl)
	"$KGATE" ingest --db "$DB" --commit "c_$v" --branch main --benchmark "${v%%_*}" \
		--records "$f" >/dev/null 2>&1 || echo "# ingest of $v failed"
done
# agree OUT NCUFILE KGRULE [NCURULE]: kgate's estimate within 10 points of ncu's
agree() {
	want=$(ncurule "$2" "${4:-$3}")
	got=$(kgrule "$1" "$3")
	diag "$(basename "$2" .details.csv) $3: ncu ${want:-none}%, kgate ${got:-none}%"
	ok "$(basename "$2" .details.csv): $3 within 10 points of ncu's ${4:-$3} (${want:-none}%)" \
		within10 "${got:-999}" "${want:-999}"
}
explain() { # base head [args]
	b=$1 h=$2
	shift 2
	run "$KGATE" explain --db "$DB" --commit "c_$h" --baseline "c_$b" "$@"
}

# Transpose, tiled -> naive: the kernel is replaced and its stores uncoalesced.
explain transpose_tiled transpose_naive
is "$rc" 0 "tiled -> naive: exit 0"
like "$out" "tr_tiled.* -> .*tr_naive" "tiled -> naive: the replaced kernel is named"
like "$out" "global store sectors/request 4.0 -> 32.0 \\(uncoalesced\\)" "tiled -> naive: stores 4 -> 32 sectors a request"
like "$out" "UncoalescedGlobalAccess +base ok +head fires" "tiled -> naive: UncoalescedGlobalAccess newly fires"
agree "$out" "$N/transpose_naive.details.csv" UncoalescedGlobalAccess
agree "$out" "$N/transpose_naive.details.csv" AchievedOccupancy

# Transpose tiled with 5% more work (more rows, more blocks).
explain transpose_tiled transpose_tiled_extra
like "$out" "grid 65536 -> 68864 \\(\\+5.1%\\), instructions \\+5.1% \\(more work\\)" "tiled +5%: more work, and the grid that grew"
agree "$out" "$N/transpose_tiled_extra.details.csv" UncoalescedGlobalAccess

# Transpose tiled -> unpadded tile: 32-way shared-memory bank conflicts.
explain transpose_tiled transpose_unpadded
like "$out" "tr_tiled.* -> .*tr_unpadded" "tiled -> unpadded: the replaced kernel is named"
like "$out" "static shared memory/block 4224 -> 4096" "tiled -> unpadded: the padding column is gone"
like "$out" "shared loads 9[0-9].[0-9]% bank-conflict wavefronts" "tiled -> unpadded: the conflicts are in the sentence"
like "$out" "SharedMemoryConflicts +base ok +head fires" "tiled -> unpadded: SharedMemoryConflicts newly fires"
like "$out" "ncu rule SharedMemoryConflicts, est. speed-up" "tiled -> unpadded: the sentence names the rule"
agree "$out" "$N/transpose_unpadded.details.csv" SharedMemoryConflicts
# ncu also raises UncoalescedSharedAccess (from its source counters), a
# rule kgate does not have: docs/EXPLAIN.md
like "$(ncurule "$N/transpose_unpadded.details.csv" UncoalescedSharedAccess)" "^[0-9]" "tiled -> unpadded: ncu's UncoalescedSharedAccess, not in kgate"

# The tail grid: one wave and one block.
explain tail_wave tail_over_one_wave
like "$out" "grid 1056 -> 1057" "tail: the one more block"
like "$out" "TailEffect +base ok +head fires" "tail: TailEffect newly fires"
like "$out" "ncu rule TailEffect, est. speed-up" "tail: the sentence names the rule"
agree "$out" "$N/tail_over_one_wave.details.csv" TailEffect LaunchConfiguration
agree "$out" "$N/tail_over_one_wave.details.csv" AchievedOccupancy
agree "$out" "$N/tail_over_one_wave.details.csv" CPIStall

# Reduction, tree -> atomic: another kernel, a grid 62 times larger, issue-bound.
explain reduction_tree reduction_atomic
like "$out" "red_tree.* -> .*red_atomic" "tree -> atomic: the replaced kernel is named"
like "$out" "grid 1056 -> 65536" "tree -> atomic: the grid"
like "$out" "IssueSlotUtilization +base fires +head fires" "tree -> atomic: issue slots"
agree "$out" "$N/reduction_atomic.details.csv" IssueSlotUtilization
agree "$out" "$N/reduction_atomic.details.csv" AchievedOccupancy
# ncu's CPIStall on the atomic kernel (47.6%) is about the atomic
# instructions' own stall; kgate's stall reasons do not include it
like "$out" "CPIStall +base fires +head ok" "tree -> atomic: kgate's CPIStall does not fire (ncu's does: docs/EXPLAIN.md)"

# Matmul, tiled -> naive.
explain matmul_tiled matmul_naive
like "$out" "mm_tiled.* -> .*mm_naive" "tiled -> naive matmul: the replaced kernel is named"
like "$out" "static shared memory/block 2112 -> 0" "tiled -> naive matmul: the shared memory tile is gone"
agree "$out" "$N/matmul_naive.details.csv" IssueSlotUtilization

# Stream triad at 32 threads a block: not slower on the H200 (memory-bound),
# so the gate does not fail it; explained on request with --pair.
explain stream_triad stream_triad_block32
like "$(cat "$T/.err")" "nothing to explain" "block 32: no kernel failed"
explain stream_triad stream_triad_block32 --pair triad=triad
like "$out" "block 256 -> 32" "block 32: the block size is named"
like "$out" "TheoreticalOccupancy +base ok +head fires 50.0%" "block 32: TheoreticalOccupancy newly fires"
like "$(ncurule "$N/stream_triad_block32.details.csv" TheoreticalOccupancy)" "^[0-9]" "block 32: ncu raises TheoreticalOccupancy too (its estimate is weighted: docs/EXPLAIN.md)"

# Stream triad with 5% more elements: slower, explained from counters.
explain stream_triad stream_triad_extra
like "$out" "^stream \\[stream/compute\\]: triad.* \\+[0-9]+% time" "triad +5%: the slowdown"
unlike "$out" "diagnostic counters were not collected" "triad +5%: counters of the warm-up launch, launched alike, stand in"
like "$out" "global memory requests \\+5.0% \\(more work\\)" "triad +5%: more work, from the global memory requests"

done_testing
