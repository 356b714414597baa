#!/bin/bash
# Configure $OUT from allnoconfig (+ the tree's kvm_guest.config on x86_64) + configs/$ARCH/*.config
# with the tree's merge_config.sh, then check that every fragment line came out as asked.
. "$(dirname "$0")/lib.sh"

frags=("$TOP"/configs/"$ARCH"/*.config)
[ "$KDEBUG" != 1 ] || frags+=("$TOP"/configs/"$ARCH"/debug/*.config)
mkdir -p "$OUT"
stamp=$OUT/.fragments.sha
sum=$(cat "${frags[@]}" | sha256sum | cut -d' ' -f1)
if [ -f "$OUT/.config" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ]; then
	exit 0
fi
base=()
# kvm_guest.config is x86/PCI-flavoured (8250 serial, virtio-pci); s390x starts from allnoconfig
# alone and its fragments ask for the SCLP console and virtio-ccw themselves.
[ "$ARCH" = x86_64 ] && base=("$SRC/kernel/configs/kvm_guest.config")
cd "$SRC"
ARCH=$KARCH CROSS_COMPILE=$CROSS scripts/kconfig/merge_config.sh -n -O "$OUT" \
	"${base[@]}" "${frags[@]}" >"$OUT/merge_config.log" 2>&1 ||
	{ tail -n 30 "$OUT/merge_config.log"; exit 1; }
kmake olddefconfig >>"$OUT/merge_config.log" 2>&1

bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) sym=${line%%=*}; want=$line ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want=$line ;;
	*) continue ;;
	esac
	got=$(grep -E "^($sym=|# $sym is not set)" "$OUT/.config" || true)
	# Symbols the series adds do not exist on stock or baseline: absent is right there.
	if [ -z "$got" ] && [ "$FLAVOUR" != full ] &&
	   ! grep -rqx --include='Kconfig*' "config ${sym#CONFIG_}" "$SRC"; then
		echo "config: $sym is not defined in the $FLAVOUR tree (the series adds it)"
		continue
	fi
	# "is not set" is also satisfied by the symbol being absent (its dependencies are off).
	if [ "$got" != "$want" ] && ! { [ -z "$got" ] && [ "${want#\#}" != "$want" ]; }; then
		echo "config: asked for '$want', got '${got:-<absent>}'" >&2
		bad=1
	fi
done < <(cat "${frags[@]}")
[ $bad = 0 ] || { echo "config: fragments not satisfied (see above)" >&2; exit 1; }
echo "$sum" >"$stamp"
