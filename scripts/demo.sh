#!/bin/bash
# Build the full kernel and boot it: "demo" runs the feature tour and powers off,
# "shell" gives an interactive busybox shell on the serial console.
. "$(dirname "$0")/lib.sh"
mode=${1:-tour}

"$TOP/scripts/build.sh"
"$TOP/scripts/initramfs.sh"
dir=$RUNS/$mode-$ARCH-$FLAVOUR
rm -rf "$dir" && mkdir -p "$dir"
case $ARCH in
x86_64) qemu=(qemu-system-x86_64 -accel tcg -cpu max -m 2G -smp 2 -device virtio-serial-pci
	-device edu)
	con=ttyS0 conlog=(-serial "file:$dir/console.log") ;;
s390x) qemu=(qemu-system-s390x -machine s390-ccw-virtio -cpu max -m 1G -smp 1
	-device virtio-serial-ccw)
	# SCLP VT220 console (see run-group.sh); -nographic maps it to stdio for the shell.
	con=ttysclp0 conlog=(-serial none -chardev "file,id=con,path=$dir/console.log"
		-device sclpconsole,chardev=con) ;;
esac
if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -nographic -no-reboot -net none -kernel "$OUT/$IMAGE" \
		-initrd "$STAGE/initramfs.cpio.gz" -append "console=$con panic=-1 ktest.group=shell"
fi
stage "booting $ARCH-$FLAVOUR for the tour (console log: $dir/console.log)"
timeout --kill-after=10 600 "${qemu[@]}" -display none -no-reboot -net none -monitor none \
	-chardev "file,id=res,path=$dir/tour.txt" -device virtconsole,chardev=res \
	"${conlog[@]}" -kernel "$OUT/$IMAGE" -initrd "$STAGE/initramfs.cpio.gz" \
	-append "console=$con panic=-1 oops=panic ktest.group=tour" </dev/null >"$dir/qemu.log" 2>&1
cat "$dir/tour.txt"
grep -q "ktest: done" "$dir/console.log" || { echo "demo: the guest did not finish cleanly" >&2; exit 1; }
stage "powered off"
