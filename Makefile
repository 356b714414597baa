# Linux 5.10 merge-window features as a patch series on Debian's linux-source-6.1.
# Everything heavy happens in $(KWORK) (default ~/.cache/kdev), outside this checkout.
#
#   make demo                    build the patched kernel, boot it, show the features, power off
#   make check                   run the whole test suite; ends with "N passed, N failed"
#   make check TESTS=<glob>      only the matching test groups
#   make check FLAVOUR=stock     ... on pristine 6.1 (or baseline: the features removed)
#                                (with full, landed features are also run on stock and baseline)
#   make check-debug             the suite on debug kernels (KASAN, lockdep, kmemleak ...)
#   make bench                   benchmarks, stock vs full
#   make lint                    checkpatch.pl on every patch, documentation build, sparse
#   make tree / build / shell / export    work on the kernel tree itself (see README.md)

SHELL := /bin/bash
export FLAVOUR ?= full
export ARCH ?= x86_64
export TESTS
export KWORK

.PHONY: all deps tree build initramfs check check-debug demo shell bench lint export clean help

all: help

help:
	@sed -n '3,12p' Makefile

deps:
	@scripts/deps.sh

tree: deps
	@scripts/tree.sh

build: deps
	@scripts/build.sh

initramfs: build
	@scripts/initramfs.sh

check: deps
	@scripts/check.sh

# Slow and optional, so not part of check (nor of CI): the full kernel only, no three-kernel rows.
check-debug: deps
	@KDEBUG=1 MATRIX=0 scripts/check.sh

demo: deps
	@scripts/demo.sh
	@ARCH=s390x scripts/demo.sh

shell: deps
	@scripts/demo.sh shell

bench: deps
	@scripts/bench.sh

lint: deps
	@scripts/lint.sh

export:
	@scripts/export.sh

clean:
	@scripts/clean.sh
