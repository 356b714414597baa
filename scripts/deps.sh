#!/bin/bash
# Install the host packages listed in scripts/packages.txt (only those missing).
. "$(dirname "$0")/lib.sh"

mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/scripts/packages.txt")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
stage "apt-get install ${missing[*]}"
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
logged "$KWORK/logs/apt.log" $SUDO apt-get update -q
logged "$KWORK/logs/apt.log.install" env DEBIAN_FRONTEND=noninteractive \
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
