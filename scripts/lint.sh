#!/bin/bash
# checkpatch.pl on every patch of the series, and again with --strict on the files a patch
# creates (the files it changes keep their own style: ext4's Opt_ names, tracepoint macros;
# upstream commit ids cannot be checked: the tree has no upstream history), the documentation
# build of what the series adds or changes, then
# sparse over the C files the feature patches touch (when the full kernel has been built).
. "$(dirname "$0")/lib.sh"

[ -d "$SRC" ] || "$TOP/scripts/tree.sh"
bad=0
n=0
checkpatch() {
	"$SRC/scripts/checkpatch.pl" --no-tree --quiet --show-types \
		--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$@" 2>&1
}
while read -r p _; do
	case $p in ''|\#*) continue ;; esac
	n=$((n + 1))
	failed=
	out=$(checkpatch "$TOP/patches/$p") || failed=1
	if grep -q '^new file mode' "$TOP/patches/$p"; then
		part=$(mktemp)
		sed -n '1,/^diff --git /p' "$TOP/patches/$p" | sed '$d' >"$part"
		# the message (up to the first diff), then the diffs of the created files only
		awk '/^diff --git / { blk = $0 "\n"; keep = 0; hdr = 1; next }
		     hdr { if (/^new file mode/) keep = 1; blk = blk $0 "\n"
			   if (/^@@/) { hdr = 0; if (keep) printf "%s", blk }
			   next }
		     keep { print }' "$TOP/patches/$p" >>"$part"
		sout=$(checkpatch --strict "$part") || failed=1
		rm -f "$part"
		[ -z "$sout" ] || out="$out${out:+
}new files, --strict:
$sout"
	fi
	if [ -z "$failed" ]; then
		echo "ok   $p"
	else
		echo "FAIL $p"
		echo "$out" | sed 's/^/     /'
		bad=$((bad + 1))
	fi
done <"$TOP/patches/series"

# Each fixes/ patch applies to pristine 6.1 alone, the form a stable tree takes it in.
idx=$(mktemp)
while read -r p _; do
	case $p in fixes/*) ;; *) continue ;; esac
	if GIT_INDEX_FILE=$idx git -C "$SRC" read-tree pristine &&
	   out=$(GIT_INDEX_FILE=$idx git -C "$SRC" apply --cached --check "$TOP/patches/$p" 2>&1); then
		echo "ok   $p applies to pristine alone"
	else
		echo "FAIL $p does not apply to pristine alone"
		echo "$out" | sed 's/^/     /'
		bad=$((bad + 1))
	fi
done <"$TOP/patches/series"
rm -f "$idx"

# Documentation: every .rst file the series adds or changes (and its ABI files and the
# kernel-doc comments it adds that htmldocs renders), built with Debian's Sphinx and the
# tree's own conf.py and extensions, as `make htmldocs` sees them; any warning is a finding.
# scripts/lint-docs.py says how the build is kept to those files and which warnings count.
if out=$(/usr/bin/python3 "$TOP/scripts/lint-docs.py" "$SRC" "$KWORK/lint-docs" 2>&1); then
	echo "ok   documentation build"
	echo "$out"
else
	echo "FAIL documentation build"
	echo "$out"
	bad=$((bad + 1))
fi

# Cross-compile checks: the drivers of other architectures the series changes, compiled for
# them (configs/cross/; LINT_CROSS=0 skips it, which takes a few minutes the first time).
# Before sparse: sparse checks those drivers in the cross builds this configures.
if [ "${LINT_CROSS:-1}" = 1 ]; then
	"$TOP/scripts/crossbuild.sh" || bad=$((bad + 1))
fi
# sparse: only where our patches add C code, each file built in the full tree of the
# architecture it belongs to (arch/s390/ and drivers/s390/ on s390x, the rest on $ARCH).
# A file whose object does not build there is a finding, not a pass.
if [ "$FLAVOUR" = full ] && command -v sparse >/dev/null; then
	mapfile -t files < <(git -C "$SRC" diff --name-only --diff-filter=AM baseline full -- '*.c' |
		grep -v '^tools/' || true)
	for f in "${files[@]}"; do
		# A .c file another one #includes (in-file KUnit tests) is checked as part of that one.
		if grep -qs "^#include \"$(basename "$f")\"" "$SRC/$(dirname "$f")"/*.c; then
			echo "ok   sparse $f (checked within the file that includes it)"
			continue
		fi
		case $f in
		arch/s390/*|drivers/s390/*) farch=s390x ;;
		arch/x86/*) farch=x86_64 ;;
		arch/*) echo "skip sparse $f (no build of its architecture here)"; continue ;;
		*) farch=$ARCH ;;
		esac
		if [ ! -f "$KWORK/build/$farch-full/vmlinux" ]; then
			echo "skip sparse $f (no built $farch-full kernel: ARCH=$farch make build)"
			continue
		fi
		# Only warnings on lines the series adds count: upstream's own are not ours to fix.
		added=$(git -C "$SRC" diff -U0 baseline full -- "$f" |
			sed -n 's/^@@ -[0-9,]* +\([0-9]*\),*\([0-9]*\) @@.*/\1 \2/p')
		touch "$SRC/$f"
		log=$(mktemp)
		rc=0
		(ARCH=$farch; . "$TOP/scripts/lib.sh"; kmake C=2 CHECK="sparse" "${f%.c}.o") \
			>"$log" 2>&1 || rc=$?
		# A driver of another architecture (configs/cross/objects) that $farch does not
		# build is checked in that architecture's cross build, as crossbuild.sh compiles it.
		xa=$(sed 's/#.*//' "$TOP/configs/cross/objects" |
			awk -v o="${f%.c}.o" '$2 == o {print $1; exit}')
		if [ $rc != 0 ] && [ -n "$xa" ] && [ -f "$KWORK/build/cross-$xa/.config" ]; then
			farch="$xa (cross)"
			rc=0
			"$TOP/scripts/crossbuild.sh" --sparse "$xa" "${f%.c}.o" >"$log" 2>&1 || rc=$?
		fi
		out=$(python3 -c '
import re, sys
ranges = [tuple(int(x or 1) for x in l.split(" ")) for l in sys.argv[1].splitlines() if l]
for line in sys.stdin:
    m = re.match(r".*?%s:(\d+):\d+: (warning|error)" % re.escape(sys.argv[2]), line)
    if m and any(s <= int(m.group(1)) < s + n for s, n in ranges):
        print(line.rstrip())' "$added" "$f" <"$log" || true)
		if [ $rc != 0 ]; then
			echo "FAIL sparse $f: building it for $farch failed"; tail -n 5 "$log" | sed 's/^/     /'
			bad=$((bad + 1))
		elif [ -n "$out" ]; then
			echo "FAIL sparse $f ($farch)"; echo "$out" | sed 's/^/     /'; bad=$((bad + 1))
		else
			echo "ok   sparse $f ($farch, lines the series adds)"
		fi
		rm -f "$log"
	done
fi
# Originality: how many lines of each feature patch are lines that the series removes (upstream's
# code, taken out by the baseline patches), measured over the whole series with the shared tool
# and its limits (ratio <= 0.25, run <= 6).  Only feature patches are judged: a baseline or
# fixes/ patch that re-indents what is left of upstream's code "copies" it by construction.
tool=$TOP/../shared/tools/originality
if [ -x "$tool" ]; then
	out=$("$tool" "$TOP/patches" 2>&1) || true
	echo "$out" | sed 's/^/     /'
	over=$(echo "$out" | grep -- '<-- over the limit' | grep -v -e '/baseline/' -e '/fixes/' || true)
	if [ -z "$over" ]; then
		echo "ok   originality (feature patches)"
	else
		echo "FAIL originality: a feature patch is over the limits"
		bad=$((bad + 1))
	fi
fi
echo "lint: $n patches, $bad with findings"
[ $bad = 0 ]
