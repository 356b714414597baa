#!/bin/bash
# Remove the build outputs and test runs in $KWORK (the tree and ccache stay).
. "$(dirname "$0")/lib.sh"
rm -rf "$KWORK/build" "$KWORK/runs"
echo "removed $KWORK/build and $KWORK/runs"
