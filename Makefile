# softaff: soft CPU affinity for Linux -- kernel series, softaffd, NUMA guest.
#
#   make run               boot the 2-node NUMA guest, root shell on the console
#   make run CMD='...'     run one command in the guest and power off
#   make test              everything CI checks; ends with "N passed, N failed"
#   make deb               Debian packages of softaffd and the kernel in build/deb
#
# See README.md. Topology and QEMU knobs (NODES, CPUS_PER_NODE, THREADS, MEM,
# ACCEL, TIMEOUT) are passed through the environment to vm/run.

SHELL := /bin/bash
PREFIX ?= /usr
DESTDIR ?=
PATCHES ?= series
KCONFIG ?= normal
export PATCHES KCONFIG

.PHONY: all deps kernel image softaffd run vm-exec test test-host test-guest \
	check-layers \
	bench stress fuzz deb install uninstall clean distclean help

all: kernel image softaffd

help:
	@sed -n '2,10p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@vm/deps

kernel: deps
	@vm/build-kernel >/dev/null

image: deps
	@vm/build-image >/dev/null

softaffd: deps
	@if [ -f softaffd/Makefile ]; then $(MAKE) -s -C softaffd all; fi

run: all
ifeq ($(strip $(CMD)),)
	@vm/run
else
	@vm/run --cmd '$(subst ','\'',$(CMD))'
endif

vm-exec: all
	@test -n "$(SCRIPT)" || { echo "usage: make vm-exec SCRIPT=FILE [ARGS='...']"; exit 2; }
	@vm/run --script $(SCRIPT) $(ARGS)

# T= restricts the guest suite to matching tests, e.g. make test T='30-*'.
test: deps
	@tests/run-all $(T)

test-host: deps
	@SKIP_GUEST=1 tests/run-all

test-guest: deps
	@SKIP_HOST=1 tests/run-all $(T)

# softaffd's includes against its layers; "make test" runs it too (in
# softaffd's "make check").
check-layers:
	@$(MAKE) -s -C softaffd check-layers

bench: all
	@tests/bench/run-bench

stress: deps
	@tests/stress/run-stress

fuzz: deps
	@$(MAKE) -s -C softaffd fuzz

# softaffd_VERSION_ARCH.deb and linux-image-*-softaff_*.deb (vm/build-deb).
deb: deps
	@vm/build-deb

install:
	$(MAKE) -C softaffd install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

uninstall:
	$(MAKE) -C softaffd uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

# clean keeps the expensive, input-keyed caches (kernel tree, image);
# distclean removes everything under build/.
clean:
	@if [ -f softaffd/Makefile ]; then $(MAKE) -s -C softaffd clean; fi
	rm -rf build/vm build/test build/guest-bin

distclean: clean
	rm -rf build
