# SPDX-License-Identifier: GPL-2.0
# Shared by the test groups' Makefiles, which scripts/initramfs.sh calls as
#   make -C tests/<group> OUTDIR=<dir> CC=<cc> ARCH=<arch> KSRC=<kernel tree> KHDR=<uapi>
# A group sets PROGS (one static program per .c file, built with the kernel tree's kselftest
# harness and the flavour's installed UAPI headers) and HEADERS (its local headers), then
# includes this file.
CC ?= gcc
OUTDIR ?= .
CFLAGS := -O2 -g -Wall -static -I$(KSRC)/tools/testing/selftests -isystem $(KHDR)

all: $(addprefix $(OUTDIR)/,$(PROGS))

$(OUTDIR)/%: %.c $(HEADERS)
	$(CC) $(CFLAGS) -o $@ $<

.PHONY: all
