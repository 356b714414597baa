# SPDX-License-Identifier: GPL-2.0
# Shared by the Makefiles of the test groups and benchmarks, which scripts/initramfs.sh calls as
#   make -C <dir> OUTDIR=<dir> CC=<cc> ARCH=<arch> KSRC=<kernel tree> KHDR=<uapi>
# A directory sets PROGS (one static guest program per .c file, built against the flavour's
# installed UAPI headers, with the kernel tree's kselftest harness on the include path) and
# HEADERS (the local headers they include), then includes this file.
CC ?= gcc
OUTDIR ?= .
# What several directories build alike (libbpf, the KVM selftest library): scripts/initramfs.sh
# points every directory of one initramfs at the same LIBOUT.
LIBOUT ?= $(OUTDIR)/.lib
CFLAGS := -O2 -g -Wall -static -I$(KSRC)/tools/testing/selftests -isystem $(KHDR)

all: $(addprefix $(OUTDIR)/,$(PROGS))

$(OUTDIR)/%: %.c $(HEADERS)
	$(CC) $(CFLAGS) -o $@ $<

.PHONY: all
