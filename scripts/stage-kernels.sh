#!/bin/bash
# Build and stage kernels one after the other: for each FLAVOUR:ARCH=GROUP,GROUP... argument,
# the kernel (scripts/build.sh) and an initramfs with those test groups and no benchmarks
# (scripts/initramfs.sh), then write "ok" (or "failed", and stop) to READYDIR/FLAVOUR:ARCH.
# make check runs it in the background while the guests of the kernels already staged run.
#   Usage: stage-kernels.sh READYDIR FLAVOUR:ARCH=GROUPS...
. "$(dirname "$0")/lib.sh"

ready=$1; shift
mkdir -p "$ready"
for arg in "$@"; do
	key=${arg%%=*} groups=${arg#*=}
	flav=${key%%:*} a=${key#*:}
	if FLAVOUR=$flav ARCH=$a "$TOP/scripts/build.sh" &&
	   FLAVOUR=$flav ARCH=$a INITRAMFS_BENCH=0 INITRAMFS_GROUPS="${groups//,/ }" \
		"$TOP/scripts/initramfs.sh"; then
		echo ok >"$ready/$key"
	else
		echo failed >"$ready/$key"
		exit 1
	fi
done
