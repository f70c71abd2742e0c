#!/bin/sh
# nightly.sh: the nightly job: measure the current commit of the branch,
# then write the trend report and post its summary.
#
# Environment: KGATE (default build/kgate, else kgate on PATH), KGATE_CONFIG
# (kgate.yaml), KGATE_DB (kgate.db), KGATE_BRANCH (main), KGATE_SINCE (90d),
# KGATE_REPORT (kgate-report.html), KGATE_WEBHOOK (post the summary there
# when set; a secret, never printed), KGATE_REPORT_URL (link in the summary).
# Exit status: that of kgate run when it failed, else that of kgate report.
set -u
kgate=${KGATE:-}
if [ -z "$kgate" ]; then
	if [ -x build/kgate ]; then kgate=build/kgate; else kgate=kgate; fi
fi
cfg=${KGATE_CONFIG:-kgate.yaml}
db=${KGATE_DB:-kgate.db}
branch=${KGATE_BRANCH:-main}
since=${KGATE_SINCE:-90d}
out=${KGATE_REPORT:-kgate-report.html}

commit=$(git rev-parse HEAD) || exit 2
"$kgate" run -c "$cfg" --db "$db" --commit "$commit" --branch "$branch"
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "nightly: kgate run failed (exit $rc); writing the report of what is stored" >&2
fi

set -- report --db "$db" --branch "$branch" --since "$since" --html "$out"
if [ -n "${KGATE_REPORT_URL:-}" ]; then
	set -- "$@" --link "$KGATE_REPORT_URL"
fi
if [ -n "${KGATE_WEBHOOK:-}" ]; then
	set -- "$@" --post "$KGATE_WEBHOOK"
fi
"$kgate" "$@"
rrc=$?
if [ "$rc" -ne 0 ]; then
	exit "$rc"
fi
exit "$rrc"
