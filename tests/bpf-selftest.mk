# SPDX-License-Identifier: GPL-2.0
# Builds tests of the kernel tree's tools/testing/selftests/bpf/prog_tests/ unmodified, one
# static program per test, with tests/bpf_test_shim.c in place of test_progs.  Included by a
# group's Makefile after ../guest-prog.mk; the group lists its tests as
#   BPF_TESTS := <prog_tests name>:<number of subtests> ...
#   BPF_PROGS_<name> := <progs/*.c names, without .c, the test's skeletons come from>
#   BPF_LSKELS_<name> := <progs/*.c names whose light skeletons (<name>.lskel.h) it includes>
#   BPF_HELPERS_<name> := <more of the tree's <x>_helpers.c it needs, as x (network)>
# libbpf is the flavour tree's (tools/lib/bpf), built static; BPF objects are built with
# Debian's clang and turned into skeletons with Debian's bpftool.  Programs that include
# vmlinux.h get one dumped from the flavour's own vmlinux BTF ($(KHDR) is <build>/usr/include).
# libbpf, its headers and vmlinux.h go to $(LIBOUT), which scripts/initramfs.sh shares between
# the groups of one initramfs: built once, not once per group.
BPFSEL := $(KSRC)/tools/testing/selftests/bpf
BPFOUT := $(OUTDIR)/.bpf
$(shell mkdir -p $(BPFOUT))
LIBBPF_OUT := $(LIBOUT)/libbpf
LIBBPF_A := $(LIBBPF_OUT)/libbpf.a
BPF_INC := $(LIBOUT)/include
VMLINUX_H := $(LIBOUT)/vmlinux.h
KOUT := $(abspath $(KHDR)/../..)
CLANG ?= clang
BPFTOOL ?= bpftool

BPF_CFLAGS := -O2 -g -Wall -static -I$(BPFOUT) -I$(LIBOUT) -I$(BPFSEL) -I$(BPF_INC) \
	-I$(KSRC)/tools/include -I$(KSRC)/tools/include/uapi
BPF_LIBS := $(LIBBPF_A) -lelf -lz -lpthread
CLANG_BPF_FLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -mlittle-endian \
	-Wno-compare-distinct-pointer-types -I$(BPFOUT) -I$(LIBOUT) -I$(BPFSEL) -I$(BPF_INC) \
	-I$(KSRC)/tools/include/uapi -idirafter /usr/include -idirafter /usr/include/x86_64-linux-gnu

$(LIBBPF_A):
	mkdir -p $(LIBBPF_OUT) $(BPF_INC)
	$(MAKE) -s -C $(KSRC)/tools/lib/bpf OUTPUT=$(abspath $(LIBBPF_OUT))/ \
		DESTDIR=$(abspath $(LIBOUT)) prefix= BUILD_STATIC_ONLY=1 \
		EXTRA_CFLAGS=-O2 $(abspath $(LIBBPF_A)) install_headers

$(VMLINUX_H): $(KOUT)/vmlinux $(LIBBPF_A)
	$(BPFTOOL) btf dump file $< format c > $@.tmp && mv $@.tmp $@

$(BPFOUT)/%.bpf.o: $(BPFSEL)/progs/%.c $(LIBBPF_A) $(VMLINUX_H)
	$(CLANG) $(CLANG_BPF_FLAGS) -c $< -o $@

$(BPFOUT)/%.skel.h: $(BPFOUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $* > $@

$(BPFOUT)/%.lskel.h: $(BPFOUT)/%.bpf.o
	$(BPFTOOL) gen skeleton -L $< name $*_lskel > $@

$(BPFOUT)/%_helpers.o: $(BPFSEL)/%_helpers.c $(LIBBPF_A)
	$(CC) $(BPF_CFLAGS) -c -o $@ $<

# $(call bpf_test,<name>,<subtests>): the rule for one test program.
define bpf_test
$(OUTDIR)/$(1): $(BPFSEL)/prog_tests/$(1).c $(CURDIR)/../bpf_test_shim.c $(LIBBPF_A) \
		$(BPFOUT)/cgroup_helpers.o $(BPFOUT)/trace_helpers.o \
		$(addprefix $(BPFOUT)/,$(addsuffix _helpers.o,$(BPF_HELPERS_$(1)))) \
		$(addprefix $(BPFOUT)/,$(addsuffix .skel.h,$(BPF_PROGS_$(1)))) \
		$(addprefix $(BPFOUT)/,$(addsuffix .lskel.h,$(BPF_LSKELS_$(1))))
	$(CC) $(BPF_CFLAGS) -DSHIM_TEST=test_$(1) -DSHIM_NAME='"$(1)"' -DSHIM_SUBTESTS=$(2) \
		-o $$@ $(BPFSEL)/prog_tests/$(1).c $(CURDIR)/../bpf_test_shim.c \
		$(BPFOUT)/cgroup_helpers.o $(BPFOUT)/trace_helpers.o \
		$(addprefix $(BPFOUT)/,$(addsuffix _helpers.o,$(BPF_HELPERS_$(1)))) $(BPF_LIBS)
all: $(OUTDIR)/$(1)
endef
$(foreach t,$(BPF_TESTS),$(eval $(call bpf_test,$(word 1,$(subst :, ,$(t))),$(word 2,$(subst :, ,$(t))))))

.SECONDARY:
