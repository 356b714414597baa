#!/bin/bash
# Write the commits of $KWORK/linux back into patches/: pristine..baseline -> patches/fixes/ (the
# commits whose subject is a patch of that folder) and patches/baseline/ (the others),
# baseline..full -> the folder of the series' patch with the same subject; a commit whose subject
# is new goes to patches/$FEATURE/ (FEATURE=name is then required).
. "$(dirname "$0")/lib.sh"

G() { git -C "$SRC" "$@"; }
declare -A folder_of
while read -r p _; do
	case $p in ''|\#*) continue ;; esac
	# The subject as git wrote it: unfold the header, drop the "[PATCH]" tag.
	subj=$(awk '/^Subject: /{s = $0; while ((getline l) > 0 && l ~ /^ /) s = s l; print s; exit}' \
		"$TOP/patches/$p" | sed 's/^Subject: \(\[PATCH[^]]*\] \)\?//')
	folder_of[$subj]=${p%%/*}
done <"$TOP/patches/series"
mapfile -t commits < <(G rev-list --reverse pristine..baseline; G rev-list --reverse baseline..full)
nbase=$(G rev-list --count pristine..baseline)
tmp=$(mktemp -d)
declare -A count
new=()
i=0
for c in "${commits[@]}"; do
	subj=$(G log -1 --format=%s "$c")
	if [ "$i" -lt "$nbase" ]; then
		# The baseline branch carries patches/fixes/ (6.1's own bugs) and patches/baseline/.
		folder=baseline
		[ "${folder_of[$subj]:-}" != fixes ] || folder=fixes
	elif [ -n "${folder_of[$subj]:-}" ] && [ "${folder_of[$subj]}" != baseline ]; then
		folder=${folder_of[$subj]}
	elif [ -n "${FEATURE:-}" ]; then
		folder=$FEATURE
	else
		echo "export: commit $(G log -1 --format='%h %s' "$c") is new: say FEATURE=<folder>" >&2
		exit 1
	fi
	n=$(( ${count[$folder]:-0} + 1 ))
	count[$folder]=$n
	slug=$(G log -1 --format=%f "$c" | cut -c1-52)
	name=$folder/$(printf '%04d' "$n")-$slug.patch
	mkdir -p "$tmp/$(dirname "$name")"
	G format-patch -1 --zero-commit --no-signature --stdout "$c" >"$tmp/$name"
	new+=("$name")
	i=$((i + 1))
done
# Replace the patch files and the series' entries, keeping its leading comment.
find "$TOP/patches" -name '*.patch' -delete
cp -r "$tmp"/. "$TOP/patches/"
rm -rf "$tmp"
{ sed -n '/^#/p;/^[^#]/q' "$TOP/patches/series" | sed '/^[^#]/d'
  printf '%s\n' "${new[@]}"; } >"$TOP/patches/series.new"
mv "$TOP/patches/series.new" "$TOP/patches/series"
find "$TOP/patches" -mindepth 1 -type d -empty ! -name baseline -delete
# The tree now matches the series: record it so tree.sh does not re-apply.
sum=$( (cat "$TOP/patches/series"; sed -e 's/#.*//' "$TOP/patches/series" | xargs -r -I{} cat "$TOP/patches/{}") | sha256sum | cut -c1-64)
{ echo "$sum"; echo "baseline $(G rev-parse baseline)"; echo "full $(G rev-parse full)"; } \
	>"$KWORK/series.applied"
echo "export: ${#new[@]} patches written to patches/"
