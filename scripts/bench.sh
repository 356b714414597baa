#!/bin/bash
# Benchmarks: run every bench/<name>/ on two kernels, booting them alternately for $ROUNDS rounds
# (A, B, A, B, ...), then print one table per benchmark (bench-report.py) and write it as JSON
# and TSV to $RUNS/bench-<stamp>/.  Exits non-zero when a run fails, a number is missing, or a
# ratio B/A exceeds the benchmark's limits (MAX_RATIO and GOALS in its group.conf).
#   BENCH=<glob>            only the matching benchmarks (default: every bench/*/ but those
#                           whose group.conf sets DEFAULT=0)
#   BENCH_CASE=<glob>       only the matching cases (passed to the guest as ktest.case)
#   ROUNDS=3                boots of each kernel per benchmark
#   BENCH_FLAVOURS="stock full"   kernel A (the reference) and kernel B
#   BENCH_NO_BUILD=1        use the kernels already built in $KWORK/build/<arch>-<flavour>
#   BENCH_STAGE=<dir>       stage each flavour's initramfs in <dir>/<flavour> (default: beside
#                           its build, as scripts/initramfs.sh does)
# Method and limits of the timing: docs/benchmarks.md.
. "$(dirname "$0")/lib.sh"

pattern=${BENCH:-*}
rounds=${ROUNDS:-3}
read -r -a flavours <<<"${BENCH_FLAVOURS:-stock full}"
[ ${#flavours[@]} = 2 ] || { echo "bench: BENCH_FLAVOURS needs two kernels (A B)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench: ROUNDS must be a positive number" >&2; exit 2; }
for f in "${flavours[@]}"; do
	# Without a build, any kernel staged as $KWORK/build/<arch>-<name> (bzImage, .config,
	# usr/include) will do: a patch-by-patch comparison, for instance.
	case $f in stock|baseline|full) ;; *)
		[ "${BENCH_NO_BUILD:-0}" = 1 ] && [ -d "$KWORK/build/$ARCH-$f" ] ||
			{ echo "bench: unknown flavour '$f'" >&2; exit 2; } ;;
	esac
done

benches=()
for bdir in "$TOP"/bench/*/; do
	[ -f "$bdir/group.conf" ] || continue
	b=$(basename "$bdir")
	# shellcheck disable=SC2053
	[[ $b == $pattern ]] || continue
	ARCHES=x86_64 DEFAULT=1
	# shellcheck disable=SC1091
	. "$bdir/group.conf"
	# DEFAULT=0 keeps a benchmark out of the default run; BENCH= still selects it.
	[ "$DEFAULT" = 1 ] || [ -n "${BENCH:-}" ] || continue
	case " $ARCHES " in *" $ARCH "*) benches+=("$b") ;; esac
done
if [ ${#benches[@]} = 0 ]; then
	echo "bench: no benchmark matches '$pattern' on $ARCH" >&2
	exit 2
fi

top=$RUNS/bench-$(date +%Y%m%d-%H%M%S)
mkdir -p "$top"
ln -sfn "$top" "$RUNS/bench-latest"
stage "bench: ${benches[*]} on $ARCH, ${flavours[0]} (A) vs ${flavours[1]} (B), $rounds rounds; results in $top"

# Kernels and initramfs, one flavour at a time (the build switches the shared tree's branch,
# and the initramfs builds the flavour's test modules against it).
staged=" "
for f in "${flavours[@]}"; do
	case $staged in *" $f "*) continue ;; esac
	if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
		FLAVOUR=$f "$TOP/scripts/build.sh"
	fi
	[ -e "$KWORK/build/$ARCH-$f/$IMAGE" ] ||
		{ echo "bench: no $ARCH-$f kernel at $KWORK/build/$ARCH-$f/$IMAGE" >&2; exit 1; }
	FLAVOUR=$f KSTAGE=${BENCH_STAGE:+$BENCH_STAGE/$f} "$TOP/scripts/initramfs.sh"
	staged+="$f "
done
if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
	# Leave the tree on the flavour it is asked to be on, as check.sh does.
	"$TOP/scripts/tree.sh"
fi

# One line per boot: benchmark, round, kernel (A/B), flavour, run directory, status, seconds.
manifest=$top/runs.tsv
: >"$manifest"
for b in "${benches[@]}"; do
	(
		MAX_RATIO=1.00 GOALS="" NOISE=0.5
		# shellcheck disable=SC1090
		. "$TOP/bench/$b/group.conf"
		printf '%s\t%s\t%s\t%s\n' "$b" "$MAX_RATIO" "$NOISE" "$GOALS"
	) >>"$top/limits.tsv"
	for ((r = 1; r <= rounds; r++)); do
		for k in 0 1; do
			f=${flavours[$k]}
			slot=$([ $k = 0 ] && echo A || echo B)
			dir=$top/$b/r$r-$slot-$f
			stage "bench $b: round $r/$rounds, $slot = $f"
			t=$(date +%s)
			rc=0
			FLAVOUR=$f KSTAGE=${BENCH_STAGE:+$BENCH_STAGE/$f} KTEST_CASE=${BENCH_CASE:-} \
				"$TOP/scripts/run-group.sh" "bench/$b" "$dir" || rc=$?
			secs=$(( $(date +%s) - t ))
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$b" "$r" "$slot" "$f" "$dir" "$rc" "$secs" \
				>>"$manifest"
			if [ $rc != 0 ]; then
				echo "bench $b: round $r on $f FAILED (status $rc): $dir/results.tsv" >&2
				grep -P '\tfail\t' "$dir/results.tsv" 2>/dev/null | cut -f2- | head -n 5 >&2 || true
			fi
		done
	done
done

stage "bench: report"
python3 "$TOP/scripts/bench-report.py" "$top"
