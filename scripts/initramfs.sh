#!/bin/bash
# Build the guest initramfs for $ARCH/$FLAVOUR: busybox-static, /init, and every test group of
# this arch with its programs compiled static against the flavour's UAPI headers (and its test
# modules built against the flavour's kernel).  Output: $STAGE/initramfs.cpio.gz
#   INITRAMFS_BENCH=0        leave the benchmarks (bench/*) out: make check does not run them
#   INITRAMFS_GROUPS="a b"   only these test groups (and the groups their WITH_GROUPS name)
. "$(dirname "$0")/lib.sh"

stage "initramfs $ARCH-$FLAVOUR"
root=$STAGE/initramfs
# Libraries several directories link (libbpf, the KVM selftest library), built once.
userlib=$STAGE/userlib
rm -rf "$root" "$userlib" && mkdir -p "$root/tests" "$root/bench" "$userlib"
dirs=("$TOP"/tests/*/)
if [ -n "${INITRAMFS_GROUPS:-}" ]; then
	dirs=()
	for g in $INITRAMFS_GROUPS; do
		WITH_GROUPS=
		# shellcheck disable=SC1090
		. "$TOP/tests/$g/group.conf"
		for w in $g $WITH_GROUPS; do
			case " ${dirs[*]} " in *" $TOP/tests/$w/ "*) ;; *) dirs+=("$TOP/tests/$w/") ;; esac
		done
	done
fi
[ "${INITRAMFS_BENCH:-1}" = 0 ] || dirs+=("$TOP"/bench/*/)
log=$STAGE/initramfs.log
: >"$log"

case $ARCH in
x86_64) bb=/bin/busybox; tcc=gcc ;;
s390x)
	bb=$KWORK/s390x-busybox/bin/busybox
	if [ ! -x "$bb" ]; then
		# Unpacked, never installed: the host only needs the binary for the guest.
		dpkg --print-foreign-architectures | grep -qx s390x || {
			SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
			$SUDO dpkg --add-architecture s390x
			logged "$KWORK/logs/apt-s390x.log" $SUDO apt-get update -q; }
		d=$(mktemp -d)
		(cd "$d" && logged "$KWORK/logs/apt-s390x-dl.log" apt-get download busybox-static:s390x)
		rm -rf "$KWORK/s390x-busybox"
		dpkg -x "$d"/busybox-static_*.deb "$KWORK/s390x-busybox"
		rm -rf "$d"
	fi
	tcc=s390x-linux-gnu-gcc ;;
esac

# The files every guest needs (base.list), then one list per group (lists/<kind>-<group>.list).
# initramfs.cpio.gz has them all (make demo, shell); each group also gets an archive of the
# base and itself (cpio/<kind>-<group>.cpio.gz), which run-group.sh boots: 1 to 5 MiB for the
# guest to unpack instead of 50.
list=$STAGE/initramfs.list
lists=$STAGE/lists
rm -rf "$lists" "$STAGE/cpio" && mkdir -p "$lists" "$STAGE/cpio"
declare -A modbuilt
{
	echo "dir /tests 755 0 0"
	echo "dir /bench 755 0 0"
	echo "dir /bin 755 0 0"
	echo "dir /sbin 755 0 0"
	for d in dev proc sys tmp run root etc mnt usr usr/bin usr/sbin; do
		echo "dir /$d 755 0 0"
	done
	echo "nod /dev/console 600 0 0 c 5 1"
	echo "file /bin/busybox $bb 755 0 0"
	echo "slink /bin/sh busybox 777 0 0"
	echo "file /init $TOP/guest/init 755 0 0"
	echo "file /bin/ktest-run-group $TOP/guest/ktest-run-group 755 0 0"
	echo "file /bin/ktest-tour $TOP/guest/ktest-tour 755 0 0"
	echo "file /bin/ktest-hostroot $TOP/guest/ktest-hostroot 755 0 0"
	echo "file /bin/ktest-hostroot-init $TOP/guest/ktest-hostroot-init 755 0 0"
	echo "file /etc/passwd $TOP/guest/passwd 644 0 0"
	echo "file /etc/group $TOP/guest/group 644 0 0"
} >"$lists/base.list"

# The programs of a group are the same on every flavour of an arch when the group builds from
# the repository, the tree's tools/ and the UAPI headers alone: the series touches neither
# tools/ nor include/uapi.  They are built on the first flavour and copied on the others, from
# $KWORK/progcache/<arch>/<key>; the key hashes the test sources (tests/ and bench/, which
# include each other's headers), this script, the compiler, the installed UAPI headers and
# tools/ as committed.  Not cached: groups that build BPF objects against the flavour's own
# vmlinux.h (bpf-selftest.mk), and kernel modules (below), which are built per flavour.
progcache=
# cache_put ENTRY FILE...: copy FILE... into the cache entry, whole or not at all (another
# build may be writing the same entry).
cache_put() {
	local entry=$1 t=$1.tmp.$$
	shift
	rm -rf "$t"
	if mkdir -p "$t" && cp -a "$@" "$t/" && mv -T "$t" "$entry" 2>/dev/null; then
		return 0
	fi
	rm -rf "$t"
}
# cache_get ENTRY DIR: copy the cache entry's files into DIR; stop the build if that fails.
cache_get() {
	cp -a "$1/." "$2/" || { echo "initramfs: copying $1 failed" >&2; exit 1; }
	touch "$1"
}
if [ -z "$(git -C "$SRC" status --porcelain -- tools 2>/dev/null)" ] &&
   tools_tree=$(git -C "$SRC" rev-parse -q --verify HEAD:tools 2>/dev/null); then
	progcache=$KWORK/progcache/$ARCH
	progkey=$( {
		echo "$ARCH $tools_tree"
		"$tcc" --version | head -1
		(cd "$TOP" && find tests bench scripts/initramfs.sh -type f -print0 | sort -z |
			xargs -0 sha256sum)
		(cd "$OUT/usr/include" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -c1-32)
	mkdir -p "$progcache"
	# Entries of other keys (older sources) are dropped after a week.
	find "$progcache" -mindepth 1 -maxdepth 1 -mtime +7 -exec rm -rf {} + 2>/dev/null || true
	# libbpf (static, and its headers) is built from tools/ alone too.
	[ ! -d "$progcache/$progkey-libbpf" ] || cache_get "$progcache/$progkey-libbpf" "$userlib"
fi

# Test groups go to /tests/GROUP, benchmarks to /bench/NAME; both use group.conf.
for gdir in "${dirs[@]}"; do
	[ -f "$gdir/group.conf" ] || continue
	g=$(basename "$gdir")
	kind=$(basename "$(dirname "$gdir")")
	ARCHES=x86_64 PROGS= WITH_GROUPS= INSTALL_DIRS=
	# shellcheck disable=SC1091
	. "$gdir/group.conf"
	case " $ARCHES " in *" $ARCH "*) ;; *) continue ;; esac
	dst=$root/$kind/$g
	mkdir -p "$dst"
	cp "$gdir/group.conf" "$dst/"
	# Guest-side scripts of the group (setup, and PROGS that are scripts, not built).
	for f in setup demo $PROGS; do
		[ -f "$gdir/$f" ] && cp "$gdir/$f" "$dst/"
	done
	if [ -f "$gdir/Makefile" ]; then
		cached=
		if [ -n "$progcache" ] && ! grep -q 'bpf-selftest\.mk' "$gdir/Makefile"; then
			cached=$progcache/$progkey-$kind-$g
		fi
		if [ -n "$cached" ] && [ -d "$cached" ]; then
			cache_get "$cached" "$dst"
			echo "copied from $cached" >"$log.$kind.$g"
		else
			logged "$log.$kind.$g" make -j"$(nproc)" -C "$gdir" OUTDIR="$dst" CC="$tcc" \
				ARCH="$ARCH" KSRC="$SRC" KHDR="$OUT/usr/include" LIBOUT="$userlib" ||
				{ echo "initramfs: building tests/$g failed" >&2; exit 1; }
			[ -z "$cached" ] || cache_put "$cached" "$dst/."
		fi
	fi
	if [ -d "$gdir/module" ]; then
		# Groups that share a module folder (a symlink) share its build.
		mkey=$(realpath "$gdir/module")
		if [ -z "${modbuilt[$mkey]:-}" ]; then
			msrc=$STAGE/testmod/$kind/$g
			rm -rf "$msrc" && mkdir -p "$msrc" && cp -rL "$gdir/module/." "$msrc/"
			modbuilt[$mkey]=$msrc
			# One build per module, each in a copy of the folder whose Kbuild names
			# only it: a module that uses an API the baseline removes does not build
			# there, and must not keep the others from building.  Its tests then
			# fail in the guest, where it is missing; on full all must build.
			for o in $(sed -n 's/^obj-m[[:space:]]*+*=//p' "$msrc/Kbuild"); do
				m=${o%.o}
				mkdir -p "$msrc/.$m" && cp -L "$msrc"/* "$msrc/.$m/"
				echo "obj-m := $o" >"$msrc/.$m/Kbuild"
				if kmake M="$msrc/.$m" modules >"$log.$g.$m" 2>&1; then
					cp "$msrc/.$m/$m.ko" "$msrc/"
					continue
				elif [ "$FLAVOUR" = full ]; then
					echo "initramfs: building tests/$g/module/$m.ko failed" \
						"(log: $log.$g.$m):" >&2
					tail -n 20 "$log.$g.$m" >&2
					exit 1
				else
					echo "initramfs: tests/$g/module/$m.ko does not build for" \
						"$FLAVOUR (its tests fail; log: $log.$g.$m)" >&2
				fi
			done
		fi
		for ko in "${modbuilt[$mkey]}"/*.ko; do
			[ -f "$ko" ] && cp "$ko" "$dst/"
		done
	fi
	{
		echo "dir /$kind/$g 755 0 0"
		for f in "$dst"/*; do
			[ -f "$f" ] || continue
			mode=644; [ -x "$f" ] && mode=755
			echo "file /$kind/$g/$(basename "$f") $f $mode 0 0"
		done
		# Directories the group's build installs whole (a kselftest install tree).
		for sub in $INSTALL_DIRS; do
			[ -d "$dst/$sub" ] || { echo "initramfs: tests/$g did not install $sub" >&2; exit 1; }
			(cd "$dst" && find "$sub" | LC_ALL=C sort) | while read -r rel; do
				f=$dst/$rel
				if [ -L "$f" ]; then
					echo "slink /$kind/$g/$rel $(readlink "$f") 777 0 0"
				elif [ -d "$f" ]; then
					echo "dir /$kind/$g/$rel 755 0 0"
				elif [ -f "$f" ]; then
					mode=644; [ -x "$f" ] && mode=755
					echo "file /$kind/$g/$rel $f $mode 0 0"
				fi
			done
		done
	} >"$lists/$kind-$g.list"
	# Tests groups whose files this one uses too (WITH_GROUPS in its group.conf).
	for w in $WITH_GROUPS; do
		echo "tests-$w"
	done >"$lists/$kind-$g.with"
done

if [ -n "$progcache" ] && [ ! -d "$progcache/$progkey-libbpf" ] && [ -f "$userlib/libbpf/libbpf.a" ]
then
	cache_put "$progcache/$progkey-libbpf" "$userlib/libbpf" "$userlib/include"
fi

gcpio=$KWORK/gen_init_cpio
# (The x86_64 and s390x initramfs of one flavour are built at the same time: no half-written
# binary for the other to run.)
if [ ! -x "$gcpio" ]; then
	gcc -O2 -o "$gcpio.$$" "$SRC/usr/gen_init_cpio.c"
	mv -f "$gcpio.$$" "$gcpio"
fi
cat "$lists/base.list" "$lists"/*-*.list >"$list"
"$gcpio" "$list" | gzip -1 >"$STAGE/initramfs.cpio.gz"
for l in "$lists"/*-*.list; do
	n=$(basename "$l" .list)
	with=()
	while read -r w; do
		[ -f "$lists/$w.list" ] || { echo "initramfs: $n needs $w, not built" >&2; exit 1; }
		with+=("$lists/$w.list")
	done <"$lists/$n.with"
	cat "$lists/base.list" "$l" "${with[@]}" | "$gcpio" /dev/stdin | gzip -1 >"$STAGE/cpio/$n.cpio.gz"
done
