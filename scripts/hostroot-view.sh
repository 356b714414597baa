#!/bin/bash
# Run a command (QEMU) in a private mount namespace in which VIEW is a read-only copy of the
# host's system directories, for a host-root guest to boot from over virtio-9p:
#   unshare --mount --propagation private hostroot-view.sh VIEW HIDE... -- COMMAND...
# VIEW gets a non-recursive read-only bind of /, so /proc, /sys, /dev, /run and every other
# mount of the host stay out of it; a /usr, /etc, /opt or /var of their own join it, read-only;
# of the top level only the system's directories stay visible.
# Each HIDE path (homes, the project, the work dir, temporary directories) is covered by an
# empty read-only tmpfs, and the host's password hashes and SSH keys by empty files: what QEMU
# exports is only what the guest needs, and nothing in it can be written.  The mounts exist only
# in the namespace, which ends with the command; the host's own mounts never change.
set -euo pipefail

view=$1
shift
hide=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	hide+=("$1")
	shift
done
[ "${1:-}" = -- ] || { echo "usage: hostroot-view.sh VIEW HIDE... -- COMMAND..." >&2; exit 2; }
shift

# The namespace must not share mount events with the host, whatever unshare was asked.
mount --make-rprivate /
mkdir -p "$view"
mount --bind / "$view"
mount -o remount,bind,ro "$view"
for m in /usr /etc /opt /var; do
	if mountpoint -q "$m" && [ -d "$view$m" ]; then
		mount --bind "$m" "$view$m"
		mount -o remount,bind,ro "$view$m"
	fi
done
for h in "${hide[@]}"; do
	h=$(realpath -m "$h")
	case $h in /|/usr|/usr/*|/etc|/bin|/sbin|/lib*) continue ;; esac
	[ -d "$view$h" ] || continue
	mount -t tmpfs -o ro,size=4k,mode=755 kdev-hidden "$view$h"
done
# Of the top level, only the system's directories: anything else there (/mnt, /srv, /media,
# whatever this machine keeps at /) is covered too.
for e in "$view"/* "$view"/.[!.]*; do
	[ -e "$e" ] && [ ! -L "$e" ] || continue
	case ${e#"$view"/} in
	bin|sbin|lib|lib32|lib64|libx32|usr|etc|var|opt|proc|sys|tmp|root|home) ;;
	*) if [ -d "$e" ]; then
		mountpoint -q "$e" || mount -t tmpfs -o ro,size=4k,mode=755 kdev-hidden "$e"
	   else
		mount --bind -o ro /dev/null "$e"
	   fi ;;
	esac
done
for f in /etc/shadow /etc/gshadow /etc/shadow- /etc/gshadow-; do
	[ -f "$view$f" ] && mount --bind -o ro /dev/null "$view$f"
done
[ -d "$view/etc/ssh" ] && mount -t tmpfs -o ro,size=4k,mode=755 kdev-hidden "$view/etc/ssh"
exec "$@"
