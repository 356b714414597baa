#!/bin/bash
# Compile, for other architectures, the files of the series that no kernel booted here builds
# (configs/cross/objects: "<arch> <object>"), on the baseline and on the full tree; then check
# that every C file the series changes is compiled somewhere: by a booted kernel (its object
# is in $KWORK/build/<arch>-full) or by that list.  Part of make lint; installs the cross
# compilers it needs (Debian's gcc-<triplet> packages).  Builds in $KWORK/build/cross-<arch>.
. "$(dirname "$0")/lib.sh"

declare -A cross=([arm64]=aarch64-linux-gnu- [mips]=mips-linux-gnu-
		  [parisc]=hppa-linux-gnu- [m68k]=m68k-linux-gnu-)
list=$TOP/configs/cross/objects
mapfile -t pairs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list")
mapfile -t arches < <(printf '%s\n' "${pairs[@]}" | awk '{print $1}' | sort -u)

missing=()
for a in "${arches[@]}"; do
	[ -n "${cross[$a]:-}" ] || { echo "crossbuild: no cross compiler known for $a" >&2; exit 2; }
	command -v "${cross[$a]}gcc" >/dev/null || missing+=("gcc-${cross[$a]%-}")
done
if [ ${#missing[@]} != 0 ]; then
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	stage "installing ${missing[*]}"
	logged "$KWORK/logs/apt-cross.log" $SUDO apt-get install -y -q "${missing[@]}"
fi

xmake() { # arch args...
	local a=$1; shift
	make -C "$SRC" O="$KWORK/build/cross-$a" ARCH="$a" CROSS_COMPILE="${cross[$a]}" \
		CC="ccache ${cross[$a]}gcc" HOSTCC="ccache gcc" -j"$(nproc)" "$@"
}

# --sparse ARCH OBJ: sparse on one object in ARCH's cross build, on the tree as it is
# checked out (lint.sh's sparse step, for drivers the host architecture does not build).
if [ "${1:-}" = --sparse ]; then
	[ -n "${cross[${2:-}]:-}" ] && [ -n "${3:-}" ] || { echo "usage: $0 --sparse ARCH OBJ" >&2; exit 2; }
	xmake "$2" C=2 CHECK=sparse "$3"
	exit
fi

bad=0
here=$FLAVOUR
for fl in baseline full; do
	FLAVOUR=$fl "$TOP/scripts/tree.sh"
	for a in "${arches[@]}"; do
		out=$KWORK/build/cross-$a
		frag=$TOP/configs/cross/$a.config
		log=$out.log
		mkdir -p "$out"
		sum=$(sha256sum "$frag" | cut -d' ' -f1)
		if [ "$(cat "$out/.fragment.sha" 2>/dev/null)" != "$sum" ]; then
			base=$(sed -n 's/^# base: *//p' "$frag")
			stage "configure cross-$a ($base + configs/cross/$a.config)"
			{ xmake "$a" "$base" &&
			  (cd "$SRC" && ARCH=$a CROSS_COMPILE=${cross[$a]} \
				scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "$frag") &&
			  xmake "$a" olddefconfig; } >"$log" 2>&1 ||
				{ echo "FAIL cross-$a: configuration (log: $log)"; bad=$((bad + 1)); continue; }
			echo "$sum" >"$out/.fragment.sha"
		fi
		mapfile -t objs < <(printf '%s\n' "${pairs[@]}" | awk -v a="$a" '$1 == a {print $2}')
		stage "compile for $a on $fl: ${objs[*]}"
		for o in "${objs[@]}"; do
			if xmake "$a" "$o" >"$log" 2>&1; then
				echo "ok   $fl $a $o"
			else
				echo "FAIL $fl $a $o (log: $log)"
				grep -E 'error|warning' "$log" | head -n 10 | sed 's/^/     /'
				bad=$((bad + 1))
			fi
			# Warnings are shown (upstream's own code has some on other arches).
			grep "${o%.o}.c:[0-9]*:[0-9]*: warning" "$log" | head -n 5 | sed 's/^/     warning: /' || true
		done
	done
done
FLAVOUR=$here "$TOP/scripts/tree.sh"

# Coverage: each C file the series changes outside tools/ and arch-specific code of arches
# with a booted kernel must be compiled by a booted kernel here or by the list above.
while read -r f; do
	o=${f%.c}.o
	# A .c file another one #includes (in-file KUnit tests) is compiled with that one.
	grep -qs "^#include \"$(basename "$f")\"" "$SRC/$(dirname "$f")"/*.c && continue
	if ls "$KWORK"/build/*-full/"$o" >/dev/null 2>&1; then
		continue
	fi
	if printf '%s\n' "${pairs[@]}" | awk '{print $2}' | grep -qx "$o"; then
		continue
	fi
	echo "FAIL $f: changed by the series, compiled by no kernel here (add it to configs/cross/objects)"
	bad=$((bad + 1))
done < <(git -C "$SRC" diff --name-only pristine full -- '*.c' | grep -v '^tools/')
echo "crossbuild: ${#pairs[@]} objects on ${#arches[@]} architectures, $bad findings"
[ $bad = 0 ]
