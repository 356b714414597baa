# Shared settings for the scripts; sourced, not run.
# shellcheck shell=bash
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KWORK=${KWORK:-$HOME/.cache/kdev}
SRC=$KWORK/linux
ARCH=${ARCH:-x86_64}
FLAVOUR=${FLAVOUR:-full}
OUT=$KWORK/build/$ARCH-$FLAVOUR
# KDEBUG=1: the same flavour with the checkers of configs/<arch>/debug/ (KASAN, lockdep,
# kmemleak ...), built in a directory of its own.
KDEBUG=${KDEBUG:-0}
[ "$KDEBUG" != 1 ] || OUT=$OUT-debug
RUNS=${RUNS:-$KWORK/runs}
# Where the initramfs and test programs of this arch/flavour are staged (default: beside the build).
STAGE=${KSTAGE:-$OUT}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# The flavours build from one source tree into different output directories: without this,
# ccache would hash each output directory into debug-info builds and share nothing between them.
export CCACHE_NOHASHDIR=1
# Hash each header once per build, not once per object that includes it (a fully cached x86_64
# build: 72 s -> 68 s).
export CCACHE_INODECACHE=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# Debian's tarball version the series is tested on.
TESTED_DEB_VERSION=6.1.192-3

# Other names only for a kernel staged by hand in $KWORK/build/<arch>-<name> and run without a
# build (BENCH_NO_BUILD=1: a patch-by-patch benchmark, for instance).
case $FLAVOUR in
stock|baseline|full) ;;
*) [ "${BENCH_NO_BUILD:-0}" = 1 ] && [ -d "$OUT" ] ||
	{ echo "FLAVOUR must be stock, baseline or full (got '$FLAVOUR')" >&2; exit 2; } ;;
esac

case $ARCH in
x86_64) KARCH=x86; CROSS= ; IMAGE=arch/x86/boot/bzImage ;;
s390x)  KARCH=s390; CROSS=s390x-linux-gnu- ; IMAGE=arch/s390/boot/bzImage ;;
*) echo "ARCH must be x86_64 or s390x (got '$ARCH')" >&2; exit 2 ;;
esac

kmake() {
	make -C "$SRC" O="$OUT" ARCH="$KARCH" ${CROSS:+CROSS_COMPILE=$CROSS} \
		CC="ccache ${CROSS}gcc" HOSTCC="ccache gcc" -j"$(nproc)" "$@"
}

# Progress lines: stage and time since the script started.
T0=${T0:-$(date +%s)}
export T0
stage() { printf '[%4ds] %s\n' $(( $(date +%s) - T0 )) "$*"; }

# Run a long command with its output in a log file; show the tail on failure.
logged() {
	local log=$1; shift
	mkdir -p "$(dirname "$log")"
	if ! "$@" >"$log" 2>&1; then
		echo "FAILED: $* (last lines of $log):" >&2
		tail -n 40 "$log" >&2
		return 1
	fi
}

# What a host-root guest (GUEST=hostroot) must not see of the host: homes, temporary
# directories, the checkout, the directory it lives in (shared/, other clones) and the work dir.
# scripts/hostroot-view.sh covers each with an empty tmpfs in the exported view.
hostroot_hidden() {
	printf '%s\n' /root /home /tmp /var/tmp "$TOP" "$KWORK"
	[ "$(dirname "$TOP")" = / ] || dirname "$TOP"
}

# Where hostroot-selftest's host-setup leaves its canary files (in the exported view).
hostroot_canary_dir() { echo /var/lib/kdev-hostroot; }
