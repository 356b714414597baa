#!/bin/bash
# Make $KWORK/linux a git tree of Debian's linux-source-6.1 with the series applied:
# branch "stock" = the pristine tarball, "baseline" = + patches/fixes/* and patches/baseline/*,
# "full" = + everything in patches/series.  Then check out the branch named by $FLAVOUR.
. "$(dirname "$0")/lib.sh"

tarball=/usr/src/linux-source-6.1.tar.xz
series=$TOP/patches/series
G() { git -C "$SRC" -c user.name="kdev" -c user.email="kdev@localhost" "$@"; }

installed=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo none)
if [ "$installed" != "$TESTED_DEB_VERSION" ]; then
	echo "WARNING: linux-source-6.1 is $installed; the series is tested on $TESTED_DEB_VERSION" >&2
fi

if [ ! -d "$SRC/.git" ]; then
	stage "extracting $tarball"
	rm -rf "$SRC.tmp" && mkdir -p "$SRC.tmp"
	tar -C "$SRC.tmp" --strip-components=1 -xf "$tarball"
	# Debian's top-level .gitignore ignores everything ("/*"): add with -f.
	git -C "$SRC.tmp" init -q -b stock
	git -C "$SRC.tmp" add -f -A
	SRC=$SRC.tmp G commit -q -m "Debian linux-source-6.1 $installed (pristine)"
	SRC=$SRC.tmp G tag pristine
	mv "$SRC.tmp" "$SRC"
fi

# Re-apply the series only when it changed since the last time it was applied.
sum=$( (cat "$series"; sed -e 's/#.*//' "$series" | xargs -r -I{} cat "$TOP/patches/{}") | sha256sum | cut -c1-64)
applied=$KWORK/series.applied
if [ "$(cat "$applied" 2>/dev/null | head -1)" != "$sum" ]; then
	# Refuse to throw away commits made in the tree since the last apply.
	for b in baseline full; do
		want=$(sed -n "s/^$b //p" "$applied" 2>/dev/null || true)
		have=$(G rev-parse -q --verify "refs/heads/$b" || true)
		if [ -n "$have" ] && [ "$have" != "$want" ] && [ "${FORCE:-0}" != 1 ]; then
			echo "tree: branch $b in $SRC has commits not in patches/ (run 'make export'," >&2
			echo "      or FORCE=1 to discard them)" >&2
			exit 1
		fi
	done
	stage "applying patches/series"
	G am --abort >/dev/null 2>&1 || true
	G checkout -q -f -B baseline pristine
	in_baseline=1
	while read -r p _; do
		case $p in ''|\#*) continue ;; esac
		# fixes/ (6.1's own bugs) and baseline/ make the baseline branch; stock stays pristine.
		if [ $in_baseline = 1 ] && [ "${p#baseline/}" = "$p" ] && [ "${p#fixes/}" = "$p" ]; then
			in_baseline=0
			G branch -f full HEAD
			G checkout -q full
		fi
		if ! G am -q --whitespace=nowarn "$TOP/patches/$p" >"$KWORK/am.log" 2>&1; then
			echo "tree: patch $p does not apply:" >&2
			cat "$KWORK/am.log" >&2
			G am --abort >/dev/null 2>&1 || true
			rm -f "$applied"
			exit 1
		fi
	done <"$series"
	[ $in_baseline = 0 ] || { G branch -f full HEAD; G checkout -q full; }
	{ echo "$sum"
	  echo "baseline $(G rev-parse baseline)"
	  echo "full $(G rev-parse full)"; } >"$applied"
fi

# stock is the pristine commit; keep the branch pointing there.
G branch -f stock pristine 2>/dev/null || true
if [ "$(G rev-parse --abbrev-ref HEAD)" != "$FLAVOUR" ]; then
	if [ -n "$(G status --porcelain --untracked-files=no)" ]; then
		echo "tree: $SRC has uncommitted changes; commit or stash them before switching to $FLAVOUR" >&2
		exit 1
	fi
	G checkout -q "$FLAVOUR"
fi
