#!/bin/sh
# calibrate.t: scripts/calibrate.sh, small, on the H200 calibration records
# (tests/fixtures/h200/calib): stream_triad only, A/A with one process a
# side, A/B at 5% more work with two a side, four comparisons each.  The
# verdicts come from real kgate ingest and check runs on real data, so a
# gate that cries wolf on A/A or misses a 5% slowdown fails here.
. "$(dirname "$0")/lib.sh"

CAL="$KGATE_SRC/scripts/calibrate.sh"
export KGATE

run bash "$CAL" -o "$T/cal" -b stream_triad -k 1 -a 2 -l 0.05 -n 4 -j 1
is "$rc" 0 "a small calibration run exits 0"
like "$out" '^\| stream_triad \| 6 \| 50 \| [0-9.]+% \([0-9.]+%\) \| [0-9.]+% \|' \
	"the noise table: 6 processes of 50 launches"
like "$out" '^\| stream_triad \| 1 \| 4 \| 0 \| [0-9]+ \| [0-9]+ \| [0-9]+ \| 0 \|$' \
	"A/A: 4 checks, no timing and no counter FAIL"
like "$out" '^False-alarm rate \(compute timing FAIL\): 0 of 4 = 0.00%' "the false-alarm line"
like "$out" '^\| stream_triad \| 0.05 \| 2 \| 4 \| 4 \| 0 \| 0 \| 1.00 \| \+[0-9.]+% \|$' \
	"A/B: 5% more work fails all 4 checks"
like "$out" '^\| stream_triad \| 0\+1 \| 4\+5 \| PASS \|' "early against late rounds passes"
ok "results.tsv has a line per kernel comparison" test "$(grep -c . "$T/cal/results.tsv")" -ge 12
ok "every line of results.tsv has 11 or more fields" \
	awk -F'\t' 'NF < 11 { bad = 1 } END { exit bad }' "$T/cal/results.tsv"

# Against another job's recording (-J): the afternoon job's two rounds.
run bash "$CAL" -o "$T/job" -b tail_wave -l 0.05 -j 1 -J "$FIX/h200/calib-job2"
is "$rc" 0 "-J: exit 0"
like "$out" '^\| tail_wave \| 0 \| default \| 15 \| 0 \| 0 \| ' "-J: no A/A false alarm across jobs at 3% (15 checks)"
like "$out" '^\| tail_wave \| 0.05 \| default \| 15 \| 15 \| 0 \| \+[0-9.]+% \|$' "-J: 5% more work fails all 15 checks across jobs"
run bash "$CAL" -o "$T/job2" -J "$T/nowhere"
is "$rc" 2 "-J: a missing directory is an input error"

run bash "$CAL" -o "$T/cal2" -n x
is "$rc" 2 "a bad -n is a usage error"
like "$err" "-n must be a whole number, got 'x'" "and says so"
run bash "$CAL" -o "$T/cal3" -d "$T/nowhere"
is "$rc" 2 "a missing records directory is an input error"
like "$err" "cannot open '$T/nowhere': no such directory" "named in the message"

done_testing
