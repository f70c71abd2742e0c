# rules.sh: sourced by the e2e tests that hold kgate's rule estimates
# against Nsight Compute's (explain.t, diagnosis.t).

# ncurule FILE RULE: ncu's estimated speed-up of a rule row in a details
# page (the first row with one).
ncurule() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
for r in csv.reader(open(sys.argv[1])):
    if len(r) >= 20 and r[15] == sys.argv[2] and r[19]:
        print(r[19]); break
PY
}
# kgrule TEXT RULE: kgate's head estimate of the rule in text details.
kgrule() { printf '%s\n' "$1" | awk -v r="$2" '$1 == r { sub("%", "", $6); print $6; exit }'; }
# within10 A B: whether two percentages are at most 10 points apart.
within10() { python3 -c "import sys; sys.exit(0 if abs(float('$1') - float('$2')) <= 10 else 1)"; }
