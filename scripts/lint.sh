#!/bin/bash
# checkpatch.pl on every patch of the series (--strict when the patch creates files), then
# sparse over the C files the feature patches touch (when the full kernel has been built).
. "$(dirname "$0")/lib.sh"

[ -d "$SRC" ] || "$TOP/scripts/tree.sh"
bad=0
n=0
while read -r p _; do
	case $p in ''|\#*) continue ;; esac
	n=$((n + 1))
	strict=()
	grep -q '^new file mode' "$TOP/patches/$p" && strict=(--strict)
	if out=$("$SRC/scripts/checkpatch.pl" --no-tree --quiet --show-types "${strict[@]}" \
			--ignore FILE_PATH_CHANGES "$TOP/patches/$p" 2>&1); then
		echo "ok   $p ${strict[*]}"
	else
		echo "FAIL $p ${strict[*]}"
		echo "$out" | sed 's/^/     /'
		bad=$((bad + 1))
	fi
done <"$TOP/patches/series"

# sparse: only where our patches add C code, built in the full flavour's tree.
if [ "$FLAVOUR" = full ] && [ -f "$OUT/vmlinux" ] && command -v sparse >/dev/null; then
	mapfile -t files < <(git -C "$SRC" diff --name-only --diff-filter=AM baseline full -- '*.c' |
		grep -v '^tools/' || true)
	for f in "${files[@]}"; do
		o=${f%.c}.o
		if out=$(kmake C=2 CHECK="sparse -Wno-unknown-attribute" "$o" 2>&1 |
				grep -E "^$f:[0-9]+:[0-9]+: (warning|error)"); then
			echo "FAIL sparse $f"; echo "$out" | sed 's/^/     /'; bad=$((bad + 1))
		else
			echo "ok   sparse $f"
		fi
	done
fi
echo "lint: $n patches, $bad with findings"
[ $bad = 0 ]
