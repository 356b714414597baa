# SPDX-License-Identifier: GPL-2.0
# The flavour tree's KVM selftest library and tests, built unmodified with the tree's own
# tools/testing/selftests/kvm/Makefile, static, against the flavour's installed UAPI headers.
# Included by a group's Makefile after ../guest-prog.mk; the group lists the tree's tests it
# runs as
#   KVM_TESTS := x86_64/<name> <name> ...
# and gets each as $(OUTDIR)/<basename>.  Its own programs link $(LIBKVM_A) with $(KVM_CFLAGS)
# (kvm_util.h, processor.h, ucall, and the kselftest harness).
#
# The tree's Makefile takes the UAPI headers from LINUX_HDR_PATH (-I, default <tree>/usr/include)
# and KHDR_INCLUDES (-isystem, lib.mk's default is the same): both are pointed at $(KHDR).
# Its objects (and the tests) go to OUTPUT=$(KVM_OUT), under $(LIBOUT)/kvm, never into KSRC:
# one library for all the groups of an initramfs.  6.1 links the objects into each test
# directly, we also archive them into libkvm.a.
KVM_SRC := $(KSRC)/tools/testing/selftests/kvm
KVM_OUT := $(abspath $(LIBOUT))/kvm
LIBKVM_A := $(KVM_OUT)/libkvm.a
KVM_MAKE := $(MAKE) -C $(KVM_SRC) OUTPUT=$(KVM_OUT) ARCH=x86_64 CC="$(CC)" \
	EXTRA_CFLAGS=-static LINUX_HDR_PATH=$(KHDR)/ KHDR_INCLUDES="-isystem $(KHDR)"

# The library: what the tree's Makefile lists as LIBKVM and LIBKVM_x86_64 (every source of
# lib/ and lib/x86_64/), built by its own rules (string_override.c freestanding).
LIBKVM_SRCS := $(wildcard $(KVM_SRC)/lib/*.c $(KVM_SRC)/lib/x86_64/*.c $(KVM_SRC)/lib/x86_64/*.S)
LIBKVM_OBJS := $(patsubst $(KVM_SRC)/%,$(KVM_OUT)/%.o,$(basename $(LIBKVM_SRCS)))
LIBKVM_OBJS := $(patsubst %.o.o,%.o,$(LIBKVM_OBJS))

KVM_CFLAGS := -O2 -g -Wall -std=gnu99 -D_GNU_SOURCE -U_FORTIFY_SOURCE -fno-stack-protector \
	-fno-PIE -no-pie -static -pthread -I$(KSRC)/tools/include \
	-I$(KSRC)/tools/arch/x86/include -isystem $(KHDR) -I$(KVM_SRC)/include \
	-I$(KVM_SRC)/include/x86_64 -I$(KSRC)/tools/testing/selftests

$(LIBKVM_A): $(LIBKVM_SRCS)
	mkdir -p $(KVM_OUT)
	$(KVM_MAKE) $(LIBKVM_OBJS)
	rm -f $@ && ar rcs $@ $(LIBKVM_OBJS)

# $(call kvm_test,<path under tools/testing/selftests/kvm, no .c>)
define kvm_test
$(OUTDIR)/$(notdir $(1)): $(KVM_SRC)/$(1).c $(LIBKVM_A)
	$(KVM_MAKE) $(KVM_OUT)/$(1)
	cp $(KVM_OUT)/$(1) $$@
all: $(OUTDIR)/$(notdir $(1))
endef
$(foreach t,$(KVM_TESTS),$(eval $(call kvm_test,$(t))))
