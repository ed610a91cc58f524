# msharefs: page tables shared between processes.
# The commands users type; see README.md.
SHELL := /bin/bash
BUILD := build
S := scripts
FLAVOURS := fast debug

.PHONY: all test test-fast test-debug run shell guest deps tree export \
	kernels kernel-fast kernel-debug headers tests examples initramfs \
	checkpatch check-harness \
	check-series clean distclean

all: kernels tests initramfs

# Everything from nothing: packages, kernel tree, both kernels, the suite.
test: deps
	@$(MAKE) --no-print-directory kernels tests initramfs
	@$(S)/check-harness.sh fast
	@$(S)/test.sh $(FLAVOURS)

test-fast test-debug: test-%: deps
	@$(MAKE) --no-print-directory kernel-$* tests initramfs
	@$(S)/test.sh $*

# The demo on the fast kernel.
run: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/run-guest.sh fast run
	@cat $(BUILD)/logs/fast-run.out
	@$(S)/check-log.sh $(BUILD)/logs/fast-run.console

# An interactive shell on the fast kernel; 'reboot -f' leaves.
shell: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/run-guest.sh fast shell

# make guest ADD=<host dir> CMD='<command>' [FLAVOUR=debug]
FLAVOUR ?= fast
guest: deps
	@test -n "$(ADD)" -a -n "$(CMD)" || { echo "usage: make guest ADD=<dir> CMD='<command>'"; exit 2; }
	@$(MAKE) --no-print-directory kernel-$(FLAVOUR) tests initramfs
	@$(S)/guest.sh $(FLAVOUR) "$(ADD)" '$(CMD)'

deps:
	@$(S)/deps.sh

# Regenerate build/linux from kernel/patches; export its commits back.
tree:
	@$(S)/tree.sh

export:
	@$(S)/export.sh

$(BUILD)/linux/.git:
	@$(S)/tree.sh

kernels: $(FLAVOURS:%=kernel-%)

kernel-fast kernel-debug: kernel-%: $(BUILD)/linux/.git
	@$(S)/build-kernel.sh $*

headers: $(BUILD)/linux/.git
	@$(MAKE) -s -C $(BUILD)/linux O=$(CURDIR)/$(BUILD)/obj-headers headers_install >/dev/null

tests: headers
	@$(MAKE) -s -C tests KTREE=$(CURDIR)/$(BUILD)/linux \
		HDRS=$(CURDIR)/$(BUILD)/obj-headers/usr/include OUT=$(CURDIR)/$(BUILD)/tests

# Static example programs, also copied into the guest's /demo.
examples: headers
	@mkdir -p $(BUILD)/examples
	@for c in examples/*.c; do \
		$(CC) -static -O2 -Wall -Wextra -isystem $(BUILD)/obj-headers/usr/include \
			-o $(BUILD)/examples/$$(basename $$c .c) $$c || exit 1; \
	done

initramfs: tests examples
	@$(S)/mkinitramfs.sh $(BUILD)/initramfs.cpio.gz

# A failing test and a kernel WARNING must each fail a run.
check-harness: kernel-fast initramfs
	@$(S)/check-harness.sh fast

checkpatch: $(BUILD)/linux/.git
	@$(S)/checkpatch.sh

check-series: $(BUILD)/linux/.git
	@$(S)/check-series.sh

clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/tests $(BUILD)/initramfs* $(BUILD)/logs

# Keeps build/linux: it may hold commits that were not exported.
distclean: clean
	@echo "build/linux kept; remove it yourself after 'make export'"
