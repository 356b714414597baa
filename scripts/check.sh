#!/bin/bash
# Build what the selected test groups need, run each group in its own guest boot, print a
# per-test table and end with "N passed, N failed[, N skipped]".
#   TESTS=<glob>   select groups (default: every group with DEFAULT=1); several globs: "a* b"
#   FLAVOUR=...    the kernel to test (default full)
#   ONLY_ARCHES=.. limit the architectures (default: every one a selected group runs on)
#   MATRIX=0       skip the three-kernel check
#   KDEBUG=1       the debug build of the kernel (configs/<arch>/debug/: KASAN, lockdep, ...)
#   CHECK_JOBS=N   guests booted at once (default 2; 1 with KDEBUG=1)
# With FLAVOUR=full, each selected group whose feature has landed (patches/$FEATURE exists) is
# also run on stock (must pass: upstream's implementation is the reference) and on baseline
# (must fail: the feature is absent there), and each of those verdicts is one more result row.
. "$(dirname "$0")/lib.sh"

pattern=${TESTS:-}
# One fuzz seed for the whole run: stock and full see the same cases (FUZZ_SEED= replays one).
export KTEST_SEED=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export KTEST_FUZZ_CASES=${FUZZ_CASES:-}
stage "fuzz seed $KTEST_SEED (FUZZ_SEED=$KTEST_SEED replays it)"
top_run=$RUNS/$(date +%Y%m%d-%H%M%S)-$FLAVOUR
[ "$KDEBUG" != 1 ] || top_run=$top_run-debug
mkdir -p "$top_run"
ln -sfn "$top_run" "$RUNS/latest"

declare -A groups_of=()
matrix_groups=()
for gdir in "$TOP"/tests/*/; do
	g=$(basename "$gdir")
	ARCHES=x86_64 DEFAULT=1 FEATURE= ANY_KERNEL=0
	# shellcheck disable=SC1091
	. "$gdir/group.conf"
	if [ -n "$pattern" ]; then
		# Several globs, separated by spaces: a group matching any of them runs.
		read -ra pats <<<"$pattern"
		hit=0
		for p in "${pats[@]}"; do
			# shellcheck disable=SC2053
			[[ $g == $p ]] && hit=1
		done
		[ "$hit" = 1 ] || continue
	elif [ "$DEFAULT" != 1 ]; then
		continue
	fi
	for a in $ARCHES; do
		case " ${ONLY_ARCHES:-$a} " in *" $a "*) groups_of[$a]+="$g " ;; esac
	done
	# A landed feature's group, or one that tests nothing the series changes (ANY_KERNEL=1:
	# the harness itself, upstream suites of untouched code), runs on all three kernels.
	if { [ -n "$FEATURE" ] && [ -d "$TOP/patches/$FEATURE" ]; } || [ "$ANY_KERNEL" = 1 ]; then
		matrix_groups+=("$g")
	fi
done
if [ ${#groups_of[@]} = 0 ]; then
	echo "check: no test group matches '${pattern:-<default>}'" >&2
	exit 2
fi

# Guests booted at once: a guest alone leaves a CPU idle much of the time, so two by default.
# Debug kernels boot one at a time: their long fuzz runs are bounded in time.
if [ "$KDEBUG" = 1 ]; then CHECK_JOBS=${CHECK_JOBS:-1}; else CHECK_JOBS=${CHECK_JOBS:-2}; fi

# The kernels the run needs, in the order they are built and their groups run: the flavour
# under test, then (for the three-kernel check) stock and baseline, which run only the groups
# of landed features; within a flavour x86_64, then s390x (built from the same state of the
# tree, beside x86_64's initramfs: scripts/stage-kernels.sh).
flavours=("$FLAVOUR")
if [ "$FLAVOUR" = full ] && [ "${MATRIX:-1}" = 1 ] && [ ${#matrix_groups[@]} -gt 0 ]; then
	flavours+=(stock baseline)
fi
declare -A run_groups_of=()
plan=()
for flav in "${flavours[@]}"; do
	for a in x86_64 s390x; do
		keep=""
		for g in ${groups_of[$a]:-}; do
			[ "$flav" = "$FLAVOUR" ] || case " ${matrix_groups[*]} " in
				*" $g "*) ;; *) continue ;; esac
			keep+="$g "
		done
		[ -n "$keep" ] || continue
		plan+=("$flav:$a")
		run_groups_of[$flav:$a]=$keep
	done
done

# Kernels are built while the guests of the kernels before them run: the guests leave much of
# the two CPUs idle (they wait on timers, disks and each other), and the builds take what is
# left.  The builder runs at SCHED_IDLE (nice 19 where that is refused), so that a guest has
# the CPU whenever it wants it, in a session of its own, so that it can be stopped with all its
# children.  It alone switches the shared tree: the guests and results.py only read tools/,
# which the series does not touch.
ready=$top_run/ready
idle=(chrt -i 0)
chrt -i 0 true 2>/dev/null || idle=(nice -n 19)
stage_args=()
for key in "${plan[@]}"; do
	g=${run_groups_of[$key]% }
	stage_args+=("$key=${g// /,}")
done
setsid "${idle[@]}" "$TOP/scripts/stage-kernels.sh" "$ready" "${stage_args[@]}" &
builder=$!
trap 'kill -- -"$builder" 2>/dev/null || true' EXIT

# wait_ready KEY: wait until the builder has staged KEY; fail if it could not.
wait_ready() {
	while [ ! -s "$ready/$1" ]; do
		kill -0 "$builder" 2>/dev/null || [ -s "$ready/$1" ] ||
			{ echo "check: the build of $1 stopped (see above)" >&2; exit 1; }
		sleep 2
	done
	[ "$(cat "$ready/$1")" = ok ] || { echo "check: the build of $1 failed (see above)" >&2; exit 1; }
}

# run_one FLAVOUR ARCH GROUP DIR: one group in one guest; its verdicts land in DIR/results.tsv.
run_one() {
	local flav=$1 a=$2 g=$3 dir=$4 DRIVER=
	# shellcheck disable=SC1090
	. "$TOP/tests/$g/group.conf"
	if [ -n "$DRIVER" ]; then
		FLAVOUR=$flav ARCH=$a "$TOP/tests/$g/$DRIVER" "$dir" || true
	else
		FLAVOUR=$flav ARCH=$a "$TOP/scripts/run-group.sh" "$g" "$dir" || true
	fi
}

: >"$top_run/results.tsv"
for key in "${plan[@]}"; do
	flav=${key%%:*} a=${key#*:}
	dir=$top_run
	[ "$flav" = "$FLAVOUR" ] || dir=$top_run/$flav
	mkdir -p "$dir"
	[ -f "$dir/results.tsv" ] || : >"$dir/results.tsv"
	wait_ready "$key"
	# CHECK_JOBS guests at a time; the results are collected in the groups' order.
	# A group with EXCLUSIVE=1 in its group.conf boots alone: the others wait for it and it
	# waits for them (a timing-bound upstream script, QEMU's 9p server needing a CPU).
	for g in ${run_groups_of[$key]}; do
		excl=$(EXCLUSIVE=0; . "$TOP/tests/$g/group.conf"; echo "$EXCLUSIVE")
		limit=$CHECK_JOBS
		[ "$excl" != 1 ] || limit=1
		while [ "$(jobs -rp | grep -vcx "$builder")" -ge "$limit" ]; do
			wait -n || true
		done
		stage "run $g ($a, $flav)"
		run_one "$flav" "$a" "$g" "$dir/$a/$g" &
		if [ "$excl" = 1 ]; then
			while [ "$(jobs -rp | grep -vcx "$builder")" -gt 0 ]; do
				wait -n || true
			done
		fi
	done
	while [ "$(jobs -rp | grep -vcx "$builder")" -gt 0 ]; do
		wait -n || true
	done
	for g in ${run_groups_of[$key]}; do
		cat "$dir/$a/$g/results.tsv" >>"$dir/results.tsv"
	done
done
# Every kernel the builder staged was checked by wait_ready; a `wait -n` above may already have
# reaped it (it is one of this shell's jobs), and then this wait has nothing left to wait for.
wait "$builder" 2>/dev/null || true

if [ ${#flavours[@]} -gt 1 ]; then
	# Back to the flavour under test, so the tree is left as it was asked for.
	"$TOP/scripts/tree.sh"
	python3 "$TOP/scripts/matrix.py" "$top_run" "${matrix_groups[@]}" >>"$top_run/results.tsv"
fi

python3 "$TOP/scripts/summary.py" "$top_run/results.tsv" "$FLAVOUR"
