#!/bin/bash
# Build and stage kernels: for each FLAVOUR:ARCH=GROUP,GROUP... argument, the kernel
# (scripts/build.sh) and an initramfs with those test groups and no benchmarks
# (scripts/initramfs.sh), then write "ok" (or "failed", and stop) to READYDIR/FLAVOUR:ARCH.
# make check runs it in the background while the guests of the kernels already staged run.
#   Usage: stage-kernels.sh READYDIR FLAVOUR:ARCH=GROUPS...
# The flavours come in the order of their first argument, each once: the shared tree is
# switched between flavours only.  Within a flavour the arches come in argument order, and
# each one's kernel build starts when the one before it is built, beside that one's
# initramfs (whose module and test-program builds leave a CPU idle much of the time).
. "$(dirname "$0")/lib.sh"

ready=$1; shift
mkdir -p "$ready"
flavs=()
for arg in "$@"; do
	flav=${arg%%:*}
	case " ${flavs[*]} " in *" $flav "*) ;; *) flavs+=("$flav") ;; esac
done

# stage_initramfs KEY GROUPS: the initramfs of a built kernel, then its verdict in READYDIR.
stage_initramfs() {
	local key=$1 groups=$2
	if FLAVOUR=${key%%:*} ARCH=${key#*:} INITRAMFS_BENCH=0 INITRAMFS_GROUPS="${groups//,/ }" \
		"$TOP/scripts/initramfs.sh"; then
		echo ok >"$ready/$key"
	else
		echo failed >"$ready/$key"
		return 1
	fi
}

for flav in "${flavs[@]}"; do
	FLAVOUR=$flav "$TOP/scripts/tree.sh"
	pids=()
	for arg in "$@"; do
		key=${arg%%=*} groups=${arg#*=}
		[ "${key%%:*}" = "$flav" ] || continue
		if ! FLAVOUR=$flav ARCH=${key#*:} "$TOP/scripts/build.sh"; then
			echo failed >"$ready/$key"
			wait "${pids[@]}" 2>/dev/null || true
			exit 1
		fi
		stage_initramfs "$key" "$groups" &
		pids+=($!)
	done
	# The tree stays on this flavour until every initramfs of it is built.
	for p in "${pids[@]}"; do
		wait "$p" || exit 1
	done
done
