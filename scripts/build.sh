#!/bin/bash
# Build the kernel of $ARCH/$FLAVOUR in $OUT (ccache), then install its UAPI headers into
# $OUT/usr/include for the test programs.
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/tree.sh"
stage "configure $ARCH-$FLAVOUR"
"$TOP/scripts/configure.sh"
targets=(bzImage modules)
[ "$ARCH" = s390x ] && targets=(bzImage)
stage "build $ARCH-$FLAVOUR (log: $OUT/build.log)"
logged "$OUT/build.log" kmake "${targets[@]}"
logged "$OUT/headers.log" kmake headers_install
stage "built $OUT/$IMAGE"
