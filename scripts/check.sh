#!/bin/bash
# Build what the selected test groups need, run each group in its own guest boot, print a
# per-test table and end with "N passed, N failed[, N skipped]".
#   TESTS=<glob>   select groups (default: every group with DEFAULT=1)
#   FLAVOUR=...    the kernel to test (default full)
#   ONLY_ARCHES=.. limit the architectures (default: every one a selected group runs on)
#   MATRIX=0       skip the three-kernel check
#   KDEBUG=1       the debug build of the kernel (configs/<arch>/debug/: KASAN, lockdep, ...)
#   CHECK_JOBS=N   guests booted at once (default 1)
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
	ARCHES=x86_64 DEFAULT=1 FEATURE=
	# shellcheck disable=SC1091
	. "$gdir/group.conf"
	if [ -n "$pattern" ]; then
		# shellcheck disable=SC2053
		[[ $g == $pattern ]] || continue
	elif [ "$DEFAULT" != 1 ]; then
		continue
	fi
	for a in $ARCHES; do
		case " ${ONLY_ARCHES:-$a} " in *" $a "*) groups_of[$a]+="$g " ;; esac
	done
	[ -n "$FEATURE" ] && [ -d "$TOP/patches/$FEATURE" ] && matrix_groups+=("$g")
done
if [ ${#groups_of[@]} = 0 ]; then
	echo "check: no test group matches '${pattern:-<default>}'" >&2
	exit 2
fi

# Guests booted at once (default 1).  CHECK_JOBS=2 cut a cold run's x86_64 group time by a
# fifth, but under that load bpf-prog-bind-map-fuzz saw stock free its maps later than full
# (a timing-dependent observation, since given a longer wait): one at a time until a cold
# run with two guests is green.
CHECK_JOBS=${CHECK_JOBS:-1}

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

# run_groups FLAVOUR DIR: build and run every selected group of every arch on one kernel,
# CHECK_JOBS guests at a time; the results are collected in the groups' order.
run_groups() {
	local flav=$1 dir=$2 a g
	for a in x86_64 s390x; do
		[ -n "${groups_of[$a]:-}" ] || continue
		FLAVOUR=$flav ARCH=$a "$TOP/scripts/build.sh"
		FLAVOUR=$flav ARCH=$a "$TOP/scripts/initramfs.sh"
		for g in ${groups_of[$a]}; do
			while [ "$(jobs -rp | wc -l)" -ge "$CHECK_JOBS" ]; do
				wait -n || true
			done
			stage "run $g ($a, $flav)"
			run_one "$flav" "$a" "$g" "$dir/$a/$g" &
		done
		wait
		for g in ${groups_of[$a]}; do
			cat "$dir/$a/$g/results.tsv" >>"$dir/results.tsv"
		done
	done
}

: >"$top_run/results.tsv"
run_groups "$FLAVOUR" "$top_run"

if [ "$FLAVOUR" = full ] && [ "${MATRIX:-1}" = 1 ] && [ ${#matrix_groups[@]} -gt 0 ]; then
	for a in "${!groups_of[@]}"; do
		keep=""
		for g in ${groups_of[$a]}; do
			case " ${matrix_groups[*]} " in *" $g "*) keep+="$g " ;; esac
		done
		groups_of[$a]=$keep
	done
	for flav in stock baseline; do
		mkdir -p "$top_run/$flav"
		: >"$top_run/$flav/results.tsv"
		run_groups "$flav" "$top_run/$flav"
	done
	# Back to the flavour under test, so the tree is left as it was asked for.
	"$TOP/scripts/tree.sh"
	python3 "$TOP/scripts/matrix.py" "$top_run" "${matrix_groups[@]}" >>"$top_run/results.tsv"
fi

python3 "$TOP/scripts/summary.py" "$top_run/results.tsv" "$FLAVOUR"
