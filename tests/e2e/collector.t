#!/bin/sh
# collector.t: what libkgate-collector.so does without a GPU: its exports and
# links, the offline metric queries through the CUPTI host API (names, pass
# counts, errors naming the bad metric or chip), and the injection entry
# point run in a process with no CUDA driver: the records file must still be
# a header, error records and a footer, valid JSON with hostile argv bytes
# escaped, that kgate ingest reads; the host program must exit 0.
. "$(dirname "$0")/lib.sh"

COLL=${KGATE_COLLECTOR:?KGATE_COLLECTOR must name libkgate-collector.so}
CC=${CC:-cc}

ok "the collector library exists" test -f "$COLL"

syms=$(nm -D --defined-only "$COLL" | awk '{print $3}')
for s in InitializeInjection kgate_metrics_list kgate_metrics_passes kgate_metrics_default; do
	like "$syms" "^$s\$" "exports $s"
done
unlike "$(printf '%s\n' "$syms" | grep -v -E '^(InitializeInjection|kgate_metrics_[a-z]+|_init|_fini|_edata|_end|__bss_start)$')" . \
	"exports nothing else"
needed=$(readelf -d "$COLL" | sed -n 's/.*NEEDED.*\[\(.*\)\].*/\1/p')
like "$needed" "^libcupti\.so" "links libcupti"
unlike "$needed" "jansson|stdc\+\+|libcuda\.so|yaml|sqlite|curl" "links no jansson, libstdc++, libcuda or CLI library"

# A driver for the offline queries: dlopen the collector like the CLI does.
cat >"$T/drv.c" <<'CEOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef int (*list_fn)(const char *, char ***, size_t *, char *, size_t);
typedef int (*passes_fn)(const char *, const char *const *, size_t, int *, char *, size_t);
typedef const char *const *(*default_fn)(void);
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	char err[1024] = "";
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
	if (strcmp(argv[2], "list") == 0) {
		list_fn l = (list_fn)dlsym(h, "kgate_metrics_list");
		char **names; size_t n;
		if (l(argv[3], &names, &n, err, sizeof(err))) { printf("error: %s\n", err); return 1; }
		for (size_t i = 0; i < n; i++) { puts(names[i]); free(names[i]); }
		free(names);
		return 0;
	}
	if (strcmp(argv[2], "default") == 0) {
		const char *const *d = ((default_fn)dlsym(h, "kgate_metrics_default"))();
		for (; *d; d++) puts(*d);
		return 0;
	}
	passes_fn p = (passes_fn)dlsym(h, "kgate_metrics_passes");
	int passes = -7;
	int rc = p(argv[3], (const char *const *)argv + 4, (size_t)(argc - 4), &passes, err, sizeof(err));
	printf("rc=%d passes=%d err=%s\n", rc, rc ? -1 : passes, err);
	return 0;
}
CEOF
# The injection entry point, called the way the driver would.
cat >"$T/inj.c" <<'CEOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	printf("init=%d argc=%d\n", init(), argc);
	return 0;
}
CEOF
ok "the query driver compiles" "$CC" -o "$T/drv" "$T/drv.c" -ldl
ok "the injection driver compiles" "$CC" -o "$T/inj" "$T/inj.c" -ldl

# --- metric names ------------------------------------------------------
run "$T/drv" "$COLL" list GH100
is "$rc" 0 "kgate_metrics_list(GH100) succeeds"
n=$(printf '%s\n' "$out" | wc -l)
ok "lists over 1000 base metrics (got $n)" test "$n" -gt 1000
for m in gpu__time_duration dram__bytes_read smsp__inst_executed sm__throughput; do
	like "$out" "^$m\$" "lists $m"
done
is "$(printf '%s\n' "$out" | LC_ALL=C sort -u | wc -l)" "$n" "sorted, no duplicates"
is "$(printf '%s\n' "$out" | LC_ALL=C sort)" "$out" "sorted in byte order"
run "$T/drv" "$COLL" list gh100
is "$(printf '%s\n' "$out" | wc -l)" "$n" "the chip name is case-insensitive"
run "$T/drv" "$COLL" list XX999
is "$rc" 1 "an unknown chip is an error"
like "$out" "chip 'XX999'" "the error names the chip"

# --- pass counts -------------------------------------------------------
default=$("$T/drv" "$COLL" default)
like "$default" "^gpu__time_duration\.sum$" "the default set has the duration"
like "$default" "^smsp__inst_executed\.sum$" "the default set has instructions"
like "$default" "^dram__bytes_read\.sum$" "the default set has DRAM reads"
like "$default" "^dram__bytes_write\.sum$" "the default set has DRAM writes"
like "$default" "pct_of_peak" "the default set has a throughput percentage"
# shellcheck disable=SC2086
run "$T/drv" "$COLL" passes GH100 $default
is "$out" "rc=0 passes=1 err=" "the default set is one pass on GH100"
diag "default set ($(printf '%s\n' "$default" | wc -l) metrics): $out"
run "$T/drv" "$COLL" passes GH100 sm__throughput.avg.pct_of_peak_sustained_elapsed
like "$out" "^rc=0 passes=([2-9]|[1-9][0-9]+) " "sm__throughput...elapsed needs more than one pass"
diag "sm__throughput.avg.pct_of_peak_sustained_elapsed alone: $out"
# shellcheck disable=SC2086
run "$T/drv" "$COLL" passes GH100 $default sm__throughput.avg.pct_of_peak_sustained_elapsed
diag "the default set plus sm__throughput: $out"
like "$out" "^rc=0 passes=([2-9]|[1-9][0-9]+) " "adding sm__throughput makes the set multi-pass"
run "$T/drv" "$COLL" passes GH100 gpu__time_duration.sum bogus__metric.sum dram__bytes_read.sum
is "$out" "rc=-1 passes=-1 err=unknown metric 'bogus__metric.sum' for chip GH100" \
	"a bogus name: -1 and an error naming it"
run "$T/drv" "$COLL" passes GH100 gpu__time_duration.sum dram__bytes_read
like "$out" "^rc=-1 .*'dram__bytes_read' .*rollup" "a name without its rollup: -1, named, the fix said"
run "$T/drv" "$COLL" passes GH100 launch__registers_per_thread
like "$out" "^rc=-1 .*'launch__registers_per_thread'" "an ncu-only launch__ name is not a CUPTI metric"
run "$T/drv" "$COLL" passes GH100
like "$out" "^rc=-1 .*no metrics" "an empty set is an error"
run "$T/drv" "$COLL" passes XX999 gpu__time_duration.sum
like "$out" "^rc=-1 .*chip 'XX999'" "passes for an unknown chip: the chip is named"

# --- the injection entry point without a GPU -----------------------------
# Hostile bytes in argv: quote, backslash, control character, a lone
# continuation byte, a truncated sequence, an overlong '/', and good UTF-8.
hostile=$(printf 'q"b\\s\001\377x\303(\300\257 h\303\251')
mkdir -p "$T/rec"
run env KGATE_RECORDS="$T/rec/r.%p.jsonl" "$T/inj" "$COLL" "$hostile"
is "$rc" 0 "the host program exits 0 without a driver"
like "$out" "^init=1 " "InitializeInjection returns 1 (success) even so"
like "$err" "^kgate-collector: no CUDA driver" "one stderr line says why nothing was recorded"
f=$(ls "$T"/rec/r.*.jsonl 2>/dev/null | head -1)
ok "KGATE_RECORDS got its file" test -n "$f"
pid=${f##*/r.}
pid=${pid%.jsonl}
ok "%p became the pid ($pid)" test "$pid" -gt 0
is "$(wc -l <"$f" | tr -d ' ')" 3 "header, one error, footer"
is "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" '\n' "the last line ends with a newline"
check=$(python3 - "$f" "$pid" <<'PYEOF'
import json, sys
lines = open(sys.argv[1], "rb").read().decode("utf-8").splitlines()
recs = [json.loads(l) for l in lines]
h, e, f = recs
print(h["type"], h["format"], h["mode"], h["pid"] == int(sys.argv[2]), h["devices"], h["replay"], h["passes"])
print(ascii(h["argv"][2])[1:-1])
print(e["type"], e["code"])
print(f["type"], f["kernels"], f["errors"], f["dropped"])
PYEOF
)
like "$check" "^header 1 trace True \[\] kernel 1$" "header: format 1, trace, the pid, no devices"
want_argv='q"b\\s\x01\ufffdx\ufffd(\ufffd\ufffd h\xe9'
is "$(printf '%s\n' "$check" | sed -n 2p)" "$want_argv" \
	"argv survives: escapes, control char, bad bytes as U+FFFD, good UTF-8 kept"
like "$check" "^error no_device$" "the error record says no_device"
like "$check" "^footer 0 1 0$" "the footer counts 0 kernels and 1 error"
run "$KGATE" ingest --db "$T/k.db" --commit abc --records "$f"
like "$err" "collector error no_device: no CUDA driver" "kgate ingest reads it and warns about the error record"
unlike "$err" "bad JSON|truncated|no footer|must be" "kgate ingest finds nothing malformed"

# A bad setting is an error record too, and collection goes on.
rm -f "$T"/rec/*
run env KGATE_RECORDS="$T/rec/b.jsonl" KGATE_MODE=fast KGATE_LAUNCH_SKIP=-3 "$T/inj" "$COLL"
is "$rc" 0 "bad settings: the host program still exits 0"
like "$(cat "$T/rec/b.jsonl")" '"code":"bad_config","message":"KGATE_MODE=.fast. is not trace or metrics' "a bad KGATE_MODE is reported"
like "$(cat "$T/rec/b.jsonl")" '"code":"bad_config","message":"KGATE_LAUNCH_SKIP=.-3. is not an integer' "a negative launch skip is reported"
like "$(tail -1 "$T/rec/b.jsonl")" '^\{"type":"footer","kernels":0,"dropped":0,"errors":3' "the footer counts all three errors"

# An unwritable records path: say so, record nothing, keep the host alive.
run env KGATE_RECORDS="$T/no/such/dir/r.jsonl" "$T/inj" "$COLL"
is "$rc" 0 "an unwritable records path: the host program exits 0"
like "$err" "^kgate-collector: cannot open '$T/no/such/dir/r.jsonl': No such file" "the path and the reason are printed"

done_testing
