#!/bin/bash
# Boot the $ARCH/$FLAVOUR kernel under QEMU (TCG, always under a timeout) to run one test group,
# then judge the run with results.py.  Usage: run-group.sh GROUP [RUNDIR]
# GROUP is a test group (tests/GROUP) or a benchmark (bench/NAME).
# Kernel console -> RUNDIR/console.log; the group's KTAP -> RUNDIR/results.ktap (virtio console).
# A guest panic ends the run: panic=-1 reboots at once and -no-reboot makes QEMU exit instead.
. "$(dirname "$0")/lib.sh"

group=$1
dir=${2:-$RUNS/manual/$ARCH-$FLAVOUR/$group}
case $group in bench/*) gdir=$TOP/$group ;; *) gdir=$TOP/tests/$group ;; esac
# The group's own archive (its files and the base), else the one with every group.
initrd=$STAGE/cpio/$(basename "$(dirname "$gdir")")-$(basename "$gdir").cpio.gz
[ -f "$initrd" ] || initrd=$STAGE/initramfs.cpio.gz
[ -f "$gdir/group.conf" ] || { echo "run-group: no test group '$group'" >&2; exit 2; }
TIMEOUT=300 MEM=2G SMP=2 KUNIT_FILTER= KUNIT_FLAVOURS= CMDLINE= ICOUNT=0 EXPECTED_WARN=
GUEST=busybox
FUZZ_CASES=1000 FUZZ_CASES_FULL=10000 FUZZ_CASES_BASELINE=100
# shellcheck disable=SC1091
. "$gdir/group.conf"
GUEST=${KTEST_GUEST:-$GUEST}
# Debug kernels (KASAN, lockdep, kmemleak) run several times slower: give them the time.
[ "$KDEBUG" != 1 ] || TIMEOUT=$((TIMEOUT * 4))
TIMEOUT=${KTEST_TIMEOUT:-$TIMEOUT}
rm -rf "$dir" && mkdir -p "$dir"
cmdline="panic=-1 oops=panic softlockup_panic=1 ktest.group=$group $CMDLINE"
# Which kernel this is (stock, baseline, full, ...): a test that must not make a call known to
# crash stock 6.1 (a bug patches/fixes/ fixes) reads it as KTEST_FLAVOUR.
cmdline="$cmdline ktest.flavour=$FLAVOUR"
# KASAN under TCG runs long stretches (ACPI at boot) far slower than any real CPU: stall and
# lockup detectors keep watching, with thresholds that fit an emulated debug kernel.
[ "$KDEBUG" != 1 ] || cmdline="$cmdline rcupdate.rcu_cpu_stall_timeout=120 watchdog_thresh=60"
[ -n "${KTEST_CASE:-}" ] && cmdline="$cmdline ktest.case=$KTEST_CASE"
# Extra parameters for one run by hand (a test may read its own from /proc/cmdline).
[ -n "${KTEST_CMDLINE:-}" ] && cmdline="$cmdline $KTEST_CMDLINE"
# Fuzz groups: one seed for every kernel of a check run (so stock and full see the same
# cases), a short run by default and the full one on debug kernels or when FUZZ_CASES says.
seed=${KTEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
[ "$KDEBUG" != 1 ] || FUZZ_CASES=$FUZZ_CASES_FULL
# On baseline the feature is absent and every fuzz group fails on its first probe; the cases
# are compared between stock and full only, so baseline runs few of them (clean errors for
# random input on a kernel without the feature), not the hundreds of seconds of the full set.
[ "$FLAVOUR" != baseline ] || FUZZ_CASES=$FUZZ_CASES_BASELINE
# A fuzz program stops drawing cases after KTEST_FUZZ_SECONDS (seven tenths of the group's
# timeout, which debug kernels multiply by four) and says how many it ran.
cmdline="$cmdline ktest.seed=$seed ktest.fuzz_cases=${KTEST_FUZZ_CASES:-$FUZZ_CASES}"
cmdline="$cmdline ktest.fuzz_seconds=$((TIMEOUT * 7 / 10))"
echo "$seed" >"$dir/seed"
if [ -n "$KUNIT_FILTER" ]; then
	cmdline="$cmdline kunit.filter_glob=$KUNIT_FILTER"
fi
res=(-chardev "file,id=res,path=$dir/results.ktap")
case $ARCH in
x86_64)
	qemu=(qemu-system-x86_64 -accel tcg -cpu max -m "$MEM" -smp "$SMP"
	      -device virtio-serial-pci -device virtconsole,chardev=res)
	con=(-serial "file:$dir/console.log")
	cmdline="console=ttyS0 $cmdline" ;;
s390x)
	qemu=(qemu-system-s390x -machine s390-ccw-virtio -cpu max -m 1G -smp 1
	      -device virtio-serial-ccw -device virtconsole,chardev=res)
	# The console is the SCLP VT220 console (ttysclp0), QEMU's sclpconsole device, named
	# here; -serial none, or QEMU's default serial becomes a second VT220 console and fails.
	con=(-serial none -chardev "file,id=con,path=$dir/console.log"
	     -device sclpconsole,chardev=con)
	cmdline="console=ttysclp0 $cmdline" ;;
esac
[ "$ICOUNT" = 1 ] && qemu+=(-icount shift=0,sleep=off)
# GUEST=hostroot: the guest's root is the host's system, read-only over virtio-9p, with a tmpfs
# overlay on top (guest/ktest-hostroot).  QEMU runs in a mount namespace of its own in which
# the exported directory is a read-only view of / without the homes, the project and the work
# dir (scripts/hostroot-view.sh); readonly=on makes QEMU refuse every write besides.
wrap=()
case $GUEST in
busybox) ;;
hostroot)
	[ "$ARCH" = x86_64 ] || { echo "run-group: GUEST=hostroot is x86_64 only" >&2; exit 2; }
	view=$dir/hostroot-view
	mapfile -t hide < <(hostroot_hidden)
	wrap=(unshare --mount --propagation private "$TOP/scripts/hostroot-view.sh" "$view"
	      "${hide[@]}" --)
	qemu+=(-fsdev "local,id=hostroot,path=$view,security_model=none,readonly=on,multidevs=remap"
	       -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot)
	cmdline="$cmdline ktest.guest=hostroot" ;;
*) echo "run-group: unknown GUEST '$GUEST' in $gdir/group.conf" >&2; exit 2 ;;
esac
printf "%q " "${wrap[@]}" "${qemu[@]}" >"$dir/qemu.cmd"

# boot: one boot of the group; QEMU's exit status in rc.
boot() {
	local extra=()
	if [ -x "$gdir/host-setup" ]; then
		# The group's host-side preparation (disk images ...) prints extra QEMU arguments.
		mapfile -t extra < <(ARCH=$ARCH "$gdir/host-setup" "$dir")
	fi
	rc=0
	timeout --kill-after=10 "$TIMEOUT" "${wrap[@]}" "${qemu[@]}" "${res[@]}" \
		-display none -no-reboot -net none -monitor none "${con[@]}" \
		-kernel "$OUT/$IMAGE" -initrd "$initrd" -append "$cmdline" \
		"${extra[@]}" </dev/null >"$dir/qemu.log" 2>&1 || rc=$?
	# Disk images a host-setup made are scratch: the results are what stays.
	rm -f "$dir"/*.img
	# The group's host-side check after the boot (a host-root guest left the host unchanged)
	# prints KTAP of its own, judged with the guest's.
	if [ -x "$gdir/host-check" ]; then
		ARCH=$ARCH "$gdir/host-check" "$dir" >"$dir/host.ktap" 2>&1 || true
	fi
}
boot
# QEMU itself killed by a signal other than the timeout's (124: TERM, 137: KILL) is the
# emulator crashing, not a verdict on the kernel (a SIGSEGV of qemu-system-x86_64 in the
# middle of the guest's PCI scan, seen once in a day of runs on this machine).  The group
# boots once more; the first attempt's files stay in qemu-crash/.  A second crash is judged
# as it is.
if [ $rc -gt 128 ] && [ $rc != 137 ]; then
	echo "run-group: QEMU died of signal $((rc - 128)) running $group ($ARCH, $FLAVOUR);" \
		"booting again (first attempt: $dir/qemu-crash)" >&2
	mkdir -p "$dir/qemu-crash"
	mv "$dir/console.log" "$dir/results.ktap" "$dir/qemu.log" "$dir/host.ktap" \
		"$dir/qemu-crash/" 2>/dev/null || true
	boot
fi
timed=()
[ $rc = 124 ] || [ $rc = 137 ] && timed=(--timed-out "$TIMEOUT")
[ $rc = 0 ] || [ ${#timed[@]} != 0 ] || echo "run-group: QEMU exited with status $rc (see $dir/qemu.log)" >&2
# KUnit results are expected on every flavour, or only on those KUNIT_FLAVOURS names (a suite
# the series adds does not exist on stock or baseline).
kunit=()
if [ -n "$KUNIT_FILTER" ]; then
	case " ${KUNIT_FLAVOURS:-$FLAVOUR} " in *" $FLAVOUR "*) kunit=(--kunit) ;; esac
fi
# A group that checks a documented WARN_ON_ONCE names where it fires (a regex over the
# "WARNING: CPU: n PID: n at <where>" lines); any other WARNING still fails the run.
warn=()
[ -n "$EXPECTED_WARN" ] && warn=(--expected-warn "$EXPECTED_WARN")
python3 "$TOP/scripts/results.py" "$group" "$dir" "$SRC" "${kunit[@]}" "${timed[@]}" "${warn[@]}"
