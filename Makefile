# msharefs: page tables shared between processes.
# The commands users type; see README.md.
SHELL := /bin/bash
BUILD := build
S := scripts
FLAVOURS := fast debug

.PHONY: all test test-fast test-debug test-base run bench bench-pt bench-postgres bench-1500 bench-change shell guest deps lib \
	tree export cover-letter squash series \
	kernels kernel-fast kernel-debug headers tests examples initramfs \
	tools man-lint checkpatch check-harness stress stress-short \
	check-series check-series-quick check-warnings check-arm64 test-arm64 bench-arm64 manifest clean distclean mm-selftests test-mm mm-baseline \
	baseline-kernels outside deb deb-user mm-debug release-check

all: kernels tests initramfs

# Everything from nothing: packages, kernel tree, both kernels, a short
# stress run on each, then the suite, which prints the closing line.
TEST_STRESS_SECONDS ?= 60
TEST_OUTSIDE_SECONDS ?= 60
# The mm selftests categories make test runs (make test-mm runs them all).
MM_SUBSET ?= mmap mlock madv_populate memfd_secret mdwe mkdirty \
	soft_dirty process_mrelease gup_test hugetlb
# scripts/make-test.sh holds the phases and prints their times.
test:
	@TEST_STRESS_SECONDS=$(TEST_STRESS_SECONDS) TEST_OUTSIDE_SECONDS=$(TEST_OUTSIDE_SECONDS) \
		MM_SUBSET="$(MM_SUBSET)" $(S)/make-test.sh

# What make test leaves out for time, run before each release: the mm
# selftests subset on the debug kernel, then every category on both
# kernels, 30 minutes of stress, 600 s outside, every commit built.
mm-debug: deps
	@$(MAKE) --no-print-directory kernel-debug initramfs mm-selftests
	@$(S)/mm-selftests.sh run --quick debug "$(MM_SUBSET)"

release-check: test mm-debug test-mm stress outside check-series check-warnings

# msharefs on arm64 (4 KiB pages, 48-bit VA): both arm64 kernels
# cross-built, the suite in qemu-system-aarch64 (scripts/arm64.sh); not in
# make test, for time: the README's arm64 section records its last run.
test-arm64: deps
	@$(MAKE) --no-print-directory $(BUILD)/linux/.git headers
	@$(S)/arm64.sh all

# Page tables and faults per sharer on the arm64 fast kernel
# (bench/results/arm64-bench-*.csv and the README's arm64 bench section).
bench-arm64: deps
	@$(MAKE) --no-print-directory $(BUILD)/linux/.git headers
	@$(S)/arm64.sh deps
	@$(S)/arm64.sh kernel fast
	@$(S)/arm64.sh initramfs
	@BENCH_FLAVOUR=arm64-fast $(S)/bench.sh bench-arch

# What the suite must run (tests/manifest), made from the test sources.
manifest: headers
	@$(S)/manifest.sh --write

# The suite on the fast kernel of the base series alone (build/base):
# its tests are what the base carries, the follow-ups' come with them.
test-base: deps
	@$(S)/test-base.sh

test-fast test-debug: test-%: deps
	@$(MAKE) --no-print-directory kernel-$* tests initramfs
	@$(S)/test.sh $*

# The demo on the fast kernel: N=256 processes share 1 GiB, three ways.
run: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/bench.sh run

# The sweep and the costs behind it: CSV in build/bench, plots in
# bench/results, the README's results section.
bench: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/bench.sh bench

# Change, reclaim and fault costs with many sharers (issue 14):
# bench/results/bench-{change,reclaim,fault}.csv and the README's tables.
# BENCH_FLAVOUR=before boots build/obj-before instead (CSV *-before.csv).
BENCH_FLAVOUR ?= fast
bench-change: deps
	@if [ "$(BENCH_FLAVOUR)" = fast ]; then $(MAKE) --no-print-directory kernel-fast; fi
	@$(MAKE) --no-print-directory tests initramfs
	@BENCH_FLAVOUR=$(BENCH_FLAVOUR) $(S)/bench.sh bench-change

# Where a sharer's page tables come from: bench/results/pt-account.csv.
bench-pt: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/bench-pt.sh

# PostgreSQL 15, 1 GiB of shared buffers, pgbench select-only from 16 to
# 1,000 clients, plain against the preload shim, in one boot of the
# FLAVOUR kernel (default fast): bench/results/bench-postgres.csv and the
# README's section. Knobs: PG_CLIENTS, PG_RUNS, PG_SECS, ... (the script).
bench-postgres: deps
	@$(MAKE) --no-print-directory $(if $(filter $(FLAVOURS),$(FLAVOUR)),kernel-$(FLAVOUR)) tests initramfs
	@FLAVOUR=$(FLAVOUR) $(S)/bench-postgres.sh

# 1,500 processes x 1 GiB in a 2 GiB guest: plain fails, msharefs works.
bench-1500: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/bench.sh bench-1500

# An interactive shell on the fast kernel; 'reboot -f' leaves.
shell: deps
	@$(MAKE) --no-print-directory kernel-fast tests initramfs
	@$(S)/host-boot-guest.sh fast shell

# make guest CMD='<command>' [ADD=<host dir>] [ROOT=host|initramfs]
#            [FLAVOUR=debug]
# ROOT=host (the default) runs CMD in the host's root file system, shared
# read-only with a writable tmpfs overlay: installed Debian programs run
# unmodified. ROOT=initramfs runs it in the busybox initramfs.
FLAVOUR ?= fast
ROOT ?= host
guest: deps
	@test -n "$(CMD)" || { echo "usage: make guest CMD='<command>' [ADD=<dir>] [ROOT=host|initramfs]"; exit 2; }
	@$(MAKE) --no-print-directory kernel-$(FLAVOUR) tests initramfs
	@GUEST_ROOT=$(ROOT) $(S)/host-guest-cmd.sh $(FLAVOUR) "$(ADD)" '$(CMD)'

# The race and stress tester (stress/), STRESS_SECONDS long, on the debug
# kernel unless FLAVOUR is given; stress-short: a minute on each kernel.
STRESS_SECONDS ?= 1800
STRESS_FLAVOUR := $(if $(filter command line environment,$(origin FLAVOUR)),$(FLAVOUR),debug)
stress: deps
	@$(MAKE) --no-print-directory kernel-$(STRESS_FLAVOUR) headers initramfs
	@STRESS_SECONDS=$(STRESS_SECONDS) $(S)/stress.sh $(STRESS_FLAVOUR)

# Debian's stress-ng and trinity on the debug kernel while regions are
# in use, OUTSIDE_SECONDS long.
OUTSIDE_SECONDS ?= 600
outside: deps
	@$(MAKE) --no-print-directory kernel-debug headers initramfs
	@OUTSIDE_SECONDS=$(OUTSIDE_SECONDS) $(S)/outside.sh debug

# The kernel's mm selftests: test-mm runs every category on both kernels
# (over an hour on the debug kernel); mm-baseline also runs them on both
# without the series, and writes the README table.
mm-selftests: headers
	@$(S)/mm-selftests.sh build

test-mm: deps
	@$(MAKE) --no-print-directory kernels initramfs mm-selftests
	@rc=0; for k in $(FLAVOURS); do $(S)/mm-selftests.sh run $$k || rc=1; done; \
		cat $(foreach k,$(FLAVOURS),$(BUILD)/logs/mm-$(k).tap) | \
		awk '/^ok .*# SKIP/ { s++; next } /^ok / { p++ } /^not ok / { f++ } \
		END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'; exit $$rc

baseline-kernels: $(BUILD)/linux/.git
	@$(S)/baseline-kernel.sh fast debug

# Every category on the fast kernels; on the debug kernels, which take
# over an hour for all of them under emulation, the MM_SUBSET categories
# less the slow list, as make test runs them.
mm-baseline: deps
	@$(MAKE) --no-print-directory kernels baseline-kernels initramfs mm-selftests
	@for k in base-fast fast; do LOGS=$(BUILD)/logs/mm $(S)/mm-selftests.sh run --all $$k || true; done
	@for k in base-debug debug; do \
		LOGS=$(BUILD)/logs/mm $(S)/mm-selftests.sh run --all --quick $$k "$(MM_SUBSET)" || true; done
	@LOGS=$(BUILD)/logs/mm $(S)/mm-table.sh

stress-short: deps
	@$(MAKE) --no-print-directory kernels headers initramfs
	@STRESS_SECONDS=60 $(S)/stress.sh fast
	@STRESS_SECONDS=60 $(S)/stress.sh debug

deps:
	@$(S)/deps.sh

# Regenerate build/linux from kernel/patches (SERIES=base: the base series
# alone; kernel/series.conf names them); export its commits back, cut
# into those series (and write the cover letters again).
tree:
	@$(S)/tree.sh

export:
	@$(S)/export.sh

# kernel/patches/*/0000-cover-letter.patch alone: the prose of
# kernel/cover-letter.in (the base) and kernel/cover-letters/*.in, the
# numbers of bench/results/*.csv, the shortlog and diffstat of each
# series in build/linux. Not in kernel/patches/series.
cover-letter: $(BUILD)/linux/.git
	@$(S)/cover-letter.sh

# Where the git am-ready series are, and how to apply them (the files the
# series file lists: the cover letters are not patches).
series:
	@echo "$(CURDIR)/kernel/patches: $$(grep -c '^[^#]' kernel/patches/series) patches in $$(grep -c '^# series ' kernel/patches/series) series against Debian linux-source-6.12 $$(cat kernel/VERSION):"
	@grep '^# series ' kernel/patches/series | sed 's/^# series /  /'
	@echo "apply all: cd <linux 6.12 tree> && grep -v '^#' $(CURDIR)/kernel/patches/series | sed 's|^|$(CURDIR)/kernel/patches/|' | xargs git am"
	@echo "the base alone: make tree SERIES=base; cover letters: $(CURDIR)/kernel/patches/*/0000-cover-letter.patch"

# Debian packages of the patched kernel for a real machine (build/deb);
# outside make test: tens of minutes. Then those of the user space.
deb: deps $(BUILD)/linux/.git deb-user
	@$(S)/deb.sh

# The user space as Debian packages (build/deb-user, lintian-clean), made
# again when its sources change; the host-root guest installs, uses and
# removes them.
DEB_USER_SRCS := $(shell git ls-files lib tools man packaging 2>/dev/null)
deb-user: $(BUILD)/deb-user/.built

$(BUILD)/deb-user/.built: $(DEB_USER_SRCS) | headers
	@$(S)/deb-user.sh
	@touch $@

# Fold fixup! commits into the series, keeping builds incremental.
squash:
	@$(S)/squash.sh

$(BUILD)/linux/.git:
	@$(S)/tree.sh

kernels: $(FLAVOURS:%=kernel-%)

kernel-fast kernel-debug: kernel-%: $(BUILD)/linux/.git
	@$(S)/build-kernel.sh $*

headers: $(BUILD)/linux/.git
	@$(MAKE) -s -C $(BUILD)/linux O=$(CURDIR)/$(BUILD)/obj-headers headers_install >/dev/null

# libmshare, static and shared, and its pkg-config file: build/lib.
lib: headers
	@$(MAKE) -s -C lib HDRS=$(CURDIR)/$(BUILD)/obj-headers/usr/include \
		OUT=$(CURDIR)/$(BUILD)/lib

tests: lib
	@$(MAKE) -s -C tests KTREE=$(CURDIR)/$(BUILD)/linux \
		HDRS=$(CURDIR)/$(BUILD)/obj-headers/usr/include \
		LIBOUT=$(CURDIR)/$(BUILD)/lib OUT=$(CURDIR)/$(BUILD)/tests

# Static example programs, also copied into the guest's /demo.
examples: headers
	@mkdir -p $(BUILD)/examples
	@for c in examples/*.c; do \
		$(CC) -static -O2 -Wall -Wextra -isystem $(BUILD)/obj-headers/usr/include \
			-o $(BUILD)/examples/$$(basename $$c .c) $$c || exit 1; \
	done

# The mshare command (static), the preload shim (.so and, for static
# programs, .a), the CLI test and the prefork shim test: build/tools.
tools: lib
	@$(MAKE) -s -C tools HDRS=$(CURDIR)/$(BUILD)/obj-headers/usr/include \
		KTREE=$(CURDIR)/$(BUILD)/linux LIBOUT=$(CURDIR)/$(BUILD)/lib \
		OUT=$(CURDIR)/$(BUILD)/tools

# The man pages must be clean for mandoc and groff (make deps installs them).
man-lint:
	@command -v mandoc >/dev/null || { echo "man-lint: no mandoc (make deps)"; exit 1; }
	@for m in man/*.[1-8]; do \
		out=$$({ mandoc -Tlint -W all $$m; groff -ww -man -z $$m; } 2>&1); \
		[ -z "$$out" ] || { echo "$$out"; exit 1; }; \
	done; echo "man-lint: $$(ls man/*.[1-8] | wc -l) pages clean"

initramfs: tests examples tools deb-user
	@$(S)/mkinitramfs.sh $(BUILD)/initramfs.cpio.gz

# A failing test and a kernel WARNING must each fail a run.
check-harness: kernel-fast initramfs
	@$(S)/check-harness.sh fast

checkpatch: $(BUILD)/linux/.git
	@$(S)/checkpatch.sh

check-series-quick: $(BUILD)/linux/.git
	@$(S)/check-series-quick.sh

check-series: $(BUILD)/linux/.git
	@$(S)/check-series.sh
	@$(S)/series-report.sh

# W=1 and sparse on the .c files the series changes: nothing new.
check-warnings: $(BUILD)/linux/.git
	@$(S)/check-warnings.sh
	@$(S)/series-report.sh

check-arm64: $(BUILD)/linux/.git
	@$(S)/arm64-build.sh

clean:
	rm -rf $(BUILD)/obj-* $(BUILD)/tests $(BUILD)/initramfs* $(BUILD)/logs

# Keeps build/linux: it may hold commits that were not exported.
distclean: clean
	@echo "build/linux kept; remove it yourself after 'make export'"
