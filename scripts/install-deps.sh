#!/bin/sh
# install-deps.sh: install what building and testing kgate needs, on Debian or
# Ubuntu.  Installs only the packages that are missing; does nothing (and needs
# no network) when everything is there.  Run as root, or with sudo on PATH.
#
#   scripts/install-deps.sh          build and test dependencies
#   scripts/install-deps.sh --min    only what `make` needs
set -eu

BUILD_PKGS="build-essential pkg-config libyaml-dev libsqlite3-dev sqlite3 \
libjansson-dev libjsmn-dev libcurl4-openssl-dev libiberty-dev zlib1g-dev"
TEST_PKGS="libcmocka-dev perl python3 valgrind clang yamllint shellcheck \
chromium jq groff-base libjson-c-dev afl++ postgresql python3-jsonschema"

pkgs=$BUILD_PKGS
[ "${1:-}" = "--min" ] || pkgs="$pkgs $TEST_PKGS"

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	echo "install-deps: all dependencies are installed" >&2
	exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing:$missing" >&2
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
