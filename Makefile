# SPDX-License-Identifier: GPL-2.0
#
# krcore: make          build krcore.ko, libkrcore (static, shared, .pc), tools
#         make deps     install every Debian package the project needs
#         make demo     boot a three-node Soft-RoCE cluster and run the demo
#         make test     unit tests, style, fuzzers, packaging (tests/pkg, as root), then
#                       the cluster tests; ends "N passed, N failed"
#         (make demo and make test install what is missing first: make deps)
#         make test-debug  the cluster tests on a debug kernel (KASAN, lockdep, KFENCE,
#                       kmemleak) built once from Debian's kernel source; T=PATTERN
#         make install  install libkrcore, its headers (in PREFIX/include/krcore), .pc,
#                       krctl and the man pages (PREFIX=/usr/local, DESTDIR, LIBDIR)
#         make install-ucx  the UCX transport in LIBDIR/ucx (UCX_MODDIR), docs/ucx.md
#         make install-dkms  the module's source and dkms.conf in DESTDIR/usr/src/krcore-VERSION
#         make deb      the Debian packages (krcore-ucx too), built out of tree in build/deb/

BUILD    ?= build
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR   ?= $(PREFIX)/share/man
KVER     ?= $(shell scripts/kver.sh 2>/dev/null)
CC       ?= cc
CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	    -Wmissing-prototypes -Wformat=2 -Wno-unused-parameter
CPPFLAGS += -Iinclude -Iinclude/uapi -Icommon -D_GNU_SOURCE
ALL_CFLAGS = -std=gnu11 -fPIC $(WARN) $(CFLAGS) $(CPPFLAGS) -MMD -MP

LIB_VERSION := 0.1.0
LIB_SONAME  := libkrcore.so.0
# The module's version (and the DKMS package's): KRC_VERSION of kernel/core/core.h.
KRC_VERSION := $(shell sed -n 's/^\#define KRC_VERSION[[:space:]]*"\(.*\)"/\1/p' kernel/core/core.h)

COMMON_SRCS := common/auth.c common/card.c common/dgram.c common/hash.c common/meta_table.c \
	       common/names.c \
	       common/proto.c common/rpc.c common/sha256.c \
	       common/wr_check.c
LIB_SRCS    := lib/vq.c lib/query.c lib/connect.c lib/ring.c lib/dataplane.c lib/lmr.c lib/lock.c \
	       lib/rpc_link.c lib/rpc_chan.c lib/rpc_srv.c $(COMMON_SRCS)
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TOOLS       := $(BUILD)/bin/krctl
KRCTL_SRCS  := $(wildcard tools/krctl/*.c)
KRCTL_OBJS  := $(KRCTL_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# The key-value store demo (bench/kvs_demo.c) is one program of three
# files and the table of common/kvs.c, which is not part of libkrcore.
KVS_BACKENDS := bench/kvs_krcore.c bench/kvs_verbs.c
KVS_OBJS    := $(BUILD)/obj/common/kvs.o
# The UCX benchmark's programs (bench/ucx.sh) link UCX or Open MPI, not libkrcore.
UCX_BENCH_SRCS := bench/ucx_bench.c bench/mpi_bench.c
BENCH_SRCS  := $(filter-out $(KVS_BACKENDS) $(UCX_BENCH_SRCS),$(wildcard bench/*.c))
BENCH_BINS  := $(BENCH_SRCS:bench/%.c=$(BUILD)/bin/%) \
	       $(UCX_BENCH_SRCS:bench/%.c=$(BUILD)/bin/%)
RPC_EXAMPLES := $(BUILD)/bin/krc_rpc_echo $(BUILD)/bin/krc_rpc_counter \
		$(BUILD)/bin/krc_rpc_once
LMR_EXAMPLES := $(BUILD)/bin/krc_lmr_memset $(BUILD)/bin/krc_lmr_counter \
		$(BUILD)/bin/krc_lmr_workq $(BUILD)/bin/krc_lmr_hash
EXAMPLES    := $(BUILD)/bin/krc_example $(BUILD)/bin/readme_read8 $(RPC_EXAMPLES) \
	       $(LMR_EXAMPLES)
PROG_SRCS   := $(wildcard tests/progs/*.c)
PROG_BINS   := $(PROG_SRCS:tests/progs/%.c=$(BUILD)/tests/%)

.PHONY: ucx install-ucx demo-kvs demo-serverless demo-basics mutants all module lib tools unit benches bench bench-quick bench-rpc bench-lmr bench-ucx bench-publish deps demo test install clean fuzz ready \
	test-passive-loop soak test-debug debug-kernel install-dkms deb
all: module lib tools unit benches ucx

module:
	@test -n "$(KVER)" || { echo "no guest kernel headers: run 'make deps'"; exit 1; }
	$(MAKE) -C kernel KVER=$(KVER)

lib: $(BUILD)/lib/libkrcore.a $(BUILD)/lib/$(LIB_SONAME) $(BUILD)/lib/pkgconfig/libkrcore.pc
tools: $(TOOLS) $(EXAMPLES)
benches: $(BENCH_BINS)
unit: $(UNIT_BINS) $(PROG_BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/lib/libkrcore.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/lib/$(LIB_SONAME): $(LIB_OBJS) lib/libkrcore.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=lib/libkrcore.map -o $@ $(LIB_OBJS)
	ln -sf $(LIB_SONAME) $(BUILD)/lib/libkrcore.so

# The .pc names the directories of an install: 'make install' writes it
# again for the PREFIX and LIBDIR it installs to.
PC_LIBDIR = $(patsubst $(PREFIX)/%,$${exec_prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' \
	-e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|' -e 's|@VERSION@|$(LIB_VERSION)|'

$(BUILD)/lib/pkgconfig/libkrcore.pc: lib/libkrcore.pc.in Makefile
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# Tools link libkrcore statically: they run in place inside the test nodes.
# krctl is tools/krctl/*.c.
$(BUILD)/bin/krctl: $(KRCTL_OBJS) $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(KRCTL_OBJS) $(BUILD)/lib/libkrcore.a

$(BUILD)/bin/%: $(BUILD)/obj/tools/%.o $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a

# The UCT transport for UCX (ucx/, docs/ucx.md): a module of Debian's UCX,
# built against that exact version's internal headers (uct/base, ucs),
# which only its source package has (scripts/ucx-src.sh fetches it once).
# libkrcore is linked in and hidden: the module needs only UCX's libraries.
# UCX_SRC is the directory scripts/ucx-src.sh unpacks into: the Debian
# package's build (debian/rules) names the copy make deb put outside
# build/, which its clean removes, so that the build downloads nothing.
UCX_SRCS    := $(wildcard ucx/*.c)
UCX_MOD     := $(BUILD)/ucx/libuct_krcore.so
UCX_DIR     ?= $(shell dpkg-query -W -f='$${Version}' libucx0 2>/dev/null | sed 's/-[^-]*$$//')
UCX_SRC     ?= $(BUILD)/ucx-src
UCX_INC     := $(UCX_SRC)/ucx-$(UCX_DIR)/src
# $(CPPFLAGS): the project's include paths and the caller's flags (the
# package build's -D_FORTIFY_SOURCE).
UCX_CFLAGS  = -std=gnu11 -fPIC $(CFLAGS) -Wall -Wextra -Werror \
	      -Wno-unused-parameter -Wno-missing-field-initializers \
	      -Wno-sign-compare -Wno-type-limits $(CPPFLAGS) -I$(UCX_INC)
ucx: $(UCX_MOD)
$(UCX_INC)/uct/base/uct_iface.h: scripts/ucx-src.sh
	sh scripts/ucx-src.sh $(UCX_SRC) >/dev/null
	touch $@
$(UCX_MOD): $(UCX_SRCS) ucx/krcore_uct.h $(BUILD)/lib/libkrcore.a \
	    $(UCX_INC)/uct/base/uct_iface.h
	@mkdir -p $(dir $@)
	$(CC) $(UCX_CFLAGS) -shared $(LDFLAGS) -Wl,-soname,libuct_krcore.so \
		-Wl,--exclude-libs,ALL -o $@ $(UCX_SRCS) \
		$(BUILD)/lib/libkrcore.a -luct -lucs

# Unit tests: the portable code and the library, with cmocka, no VM.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -o $@ $< $(BUILD)/lib/libkrcore.a -lcmocka

# The key-value store's table, which is not in the library.
$(BUILD)/tests/test_kvs: tests/unit/test_kvs.c $(KVS_OBJS) $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -o $@ $< $(KVS_OBJS) \
		$(BUILD)/lib/libkrcore.a -lcmocka

# krctl's parts with no main(): its JSON writer, its samples and rates.
$(BUILD)/tests/test_krctl_%: tests/unit/test_krctl_%.c $(BUILD)/obj/tools/krctl/json.o \
		$(BUILD)/obj/tools/krctl/sample.o $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -Itools/krctl -o $@ $< \
		$(BUILD)/obj/tools/krctl/json.o $(BUILD)/obj/tools/krctl/sample.o \
		$(BUILD)/lib/libkrcore.a -lcmocka

# Fuzzers (libFuzzer, ASan, UBSan): built from the sources, not from the
# uninstrumented libkrcore.a; not part of 'all', tests/run.sh fuzz runs them.
FUZZ_CC     ?= clang
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined \
	       -fno-sanitize-recover=undefined -Iinclude -Iinclude/uapi -Icommon \
	       -Itests/include -D_GNU_SOURCE
FUZZ_COMMON := common/auth.c common/credit.c common/flow.c common/rpc.c common/sha256.c common/card.c common/dgram.c common/proto.c common/wr_check.c \
	       common/meta_table.c \
	       common/hash.c common/kvs.c common/names.c
FUZZ_BINS   := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

fuzz: $(FUZZ_BINS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_COMMON) $(wildcard common/*.h tests/include/*.h) \
		   include/uapi/krcore.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_COMMON)

deps:
	sh scripts/deps.sh

# The main demo: the elastic key-value store (demo-kvs, below).
demo: demo-kvs

# The mechanics on two nodes: MetaServer lookup, handshake, pooled
# connects, READ/WRITE through a VQ.
demo-basics: ready
	tools/krcluster -n 2 -t 300 -o $(BUILD)/cluster/demo -- sh tests/cluster/demo.sh
	@sed -n '/^###/,/all checks passed/p' $(BUILD)/cluster/demo/node1.log | \
		grep -av 'speed is unknown\|clocksource\|all checks passed'

# The elastic key-value store (issue 11): three nodes, a load spike of new
# verbs workers, then of new krcore workers, on a fresh compute node; the
# timeline and the verdict in build/demo-kvs/results (bench/kvs_report.sh).
demo-kvs: ready
	rm -rf $(BUILD)/demo-kvs/run
	tools/krcluster -n 3 -t 900 -o $(BUILD)/demo-kvs/run -- sh tests/cluster/demo_kvs.sh
	sh bench/kvs_report.sh $(BUILD)/demo-kvs/run $(BUILD)/demo-kvs/results

# The serverless transfer: new function processes on node1 fetch an
# object from node0, krcore vs verbs (tests/cluster/demo_serverless.sh;
# KRC_SL_MIB, KRC_SL_N). Its table and verdict: build/demo-serverless/run.
demo-serverless: ready
	rm -rf $(BUILD)/demo-serverless/run
	tools/krcluster -n 2 -t 900 -o $(BUILD)/demo-serverless/run -- sh tests/cluster/demo_serverless.sh
	@cat $(BUILD)/demo-serverless/run/serverless.out

# What a fresh Debian machine lacks is installed first (scripts/deps.sh,
# as .ci/run does; nothing when all is there), then the build: 'make test'
# and 'make demo' are the only two commands a newcomer needs.
ready:
	@sh scripts/deps.sh
	@$(MAKE) --no-print-directory all

test: ready
	sh tests/run.sh

# The debug guest kernel (cached in $(BUILD)/debug-kernel) and krcore.ko built
# against it; then every cluster test (or those matching T) on it.
debug-kernel:
	sh scripts/debug-kernel.sh

T ?=
test-debug: all debug-kernel
	KRC_KERNEL=debug sh tests/run.sh cluster $(T)

# Mutation checks: each tests/mutants/*.patch breaks one claim; the test
# that proves it must fail (scripts/mutants.sh; M=NAME for one of them).
M ?=
mutants:
	sh scripts/mutants.sh $(M)

# The cluster ioctl fuzzer for longer: make soak SOAK_SECONDS=3600.
SOAK_SECONDS ?= 600
soak: all
	KRC_FUZZ_CLUSTER_SECONDS=$(SOAK_SECONDS) sh tests/run.sh cluster t_ioctl_fuzz

# Recovery on both ends of shared connections, ten runs in a row.
test-passive-loop: all
	@for i in 1 2 3 4 5 6 7 8 9 10; do \
		sh tests/run.sh cluster t_passive | tail -n 1 | \
			grep -q '^1 passed, 0 failed' || \
			{ echo "run $$i failed: build/cluster/t_passive"; exit 1; }; \
		echo "run $$i passed"; \
	done

# The benchmarks on two nodes, first contact on three, the full mesh on four, the RPC benchmark on two
# (bench/rpc.sh, as make bench-rpc), the connection rate on two nodes of two vCPUs
# (bench/cores.sh), then their report: build/bench/results
# (summary.txt, results.json, a PNG per figure, rpc_bench.out; bench/report.sh).
# Then, in the same invocation, the remote memory benchmark (make bench-lmr,
# build/bench/lmr-results) and UCX over krcore beside tcp (make bench-ucx,
# build/bench/ucx-results), each with its summary and plots: both run even
# if the other failed, and make bench fails if either did.
bench: all
	rm -rf $(BUILD)/bench/run $(BUILD)/bench/fc $(BUILD)/bench/mesh $(BUILD)/bench/rpc \
		$(BUILD)/bench/cores
	@mkdir -p $(BUILD)/bench
	@{ echo "commit $$(git describe --always --dirty 2>/dev/null || echo unknown)"; \
	  echo "start $$(date -u '+%Y-%m-%d %H:%M UTC')"; \
	  echo "mode $${KRC_BENCH_MODE:-full}"; \
	  echo "cpus $$(nproc)"; \
	  echo "load at start $$(cut -d' ' -f1-3 /proc/loadavg)"; } \
		>$(BUILD)/bench/run-info
	KRC_BENCH_FC=0 tools/krcluster -n 2 -t 1500 -p -o $(BUILD)/bench/run -- sh bench/run.sh
	tools/krcluster -n 3 -t 1500 -p -o $(BUILD)/bench/fc -- sh bench/first_contact.sh
	tools/krcluster -n 4 -t 1200 -p -o $(BUILD)/bench/mesh -- sh bench/mesh.sh
	tools/krcluster -n 2 -t 1500 -p -o $(BUILD)/bench/rpc -- sh bench/rpc.sh
	tools/krcluster -n 2 -c 2 -t 1500 -p -o $(BUILD)/bench/cores -- sh bench/cores.sh
	@echo "load at end $$(cut -d' ' -f1-3 /proc/loadavg)" >>$(BUILD)/bench/run-info
	sh bench/report.sh $(BUILD)/bench/run $(BUILD)/bench/results $(BUILD)/bench/mesh $(BUILD)/bench/fc \
		$(BUILD)/bench/rpc $(BUILD)/bench/cores
	cp $(BUILD)/bench/run-info $(BUILD)/bench/results/
	rc=0; \
	$(MAKE) bench-lmr || { rc=1; echo "make bench: bench-lmr failed"; }; \
	$(MAKE) bench-ucx || { rc=1; echo "make bench: bench-ucx failed"; }; \
	exit $$rc

# The same figures from fewer samples, in about 5 minutes and some 8 more
# for the RPC run, and some 5 more for bench-lmr and bench-ucx (about 1
# and 4 minutes of clusters on 2 CPUs: every figure of theirs kept, at
# small sizes and counts; no rc/ud_verbs tries):
# a look, not a result (build/bench/results says "mode quick" in run-info).
BENCH_QUICK = KRC_BENCH_MODE=quick KRC_BENCH_CONNECTS=10 KRC_BENCH_FLOOR_N=40 KRC_BENCH_RATE_K=5 \
	KRC_BENCH_RATE_ROUNDS=1 KRC_BENCH_ITERS=1000 KRC_BENCH_SECS=1 \
	KRC_BENCH_FC_SAMPLES=3 KRC_BENCH_FC_PARTS=10 KRC_BENCH_FC_READS=300 \
	KRC_BENCH_META_COUNT=300 KRC_BENCH_META_SECS=1 KRC_BENCH_PT_ITERS=500 \
	KRC_BENCH_MESH_ROUNDS=1 KRC_BENCH_RPC_N=200 KRC_BENCH_RPC_SECS=1 \
	KRC_BENCH_RPC_REPS=1 KRC_BENCH_RPC_K=3 KRC_BENCH_RPC_COLD=1 \
	KRC_BENCH_RPC_PT_N=200 \
	KRC_BENCH_LMR_N=200 KRC_BENCH_LMR_ALLOCS=20 KRC_BENCH_LMR_MIB=4,16 \
	KRC_BENCH_LMR_REPS=1 KRC_BENCH_LMR_SECS=1 \
	KRC_BENCH_UCX_K=2 KRC_BENCH_UCX_COLD=2 KRC_BENCH_UCX_PEERS=4 \
	KRC_BENCH_UCX_EPS_REPS=1 KRC_BENCH_UCX_LAT_N=50 KRC_BENCH_UCX_BW_N=10 \
	KRC_BENCH_UCX_VERBS=0 KRC_BENCH_UCX_MPI_K=1
bench-quick:
	env $(BENCH_QUICK) $(MAKE) bench

# The RPC benchmark of issue 26 on two nodes (bench/rpc.sh), alone (make
# bench runs it too): krcore RPC, TCP and perftest's verbs side by side,
# then every ratio with its target; node1's "rpc_bench:" and "ratio:"
# lines in build/bench/rpc/summary.txt, and its figures alone (their
# samples, no other benchmark's) in build/bench/rpc-results (summary.txt,
# results.json, a PNG per figure; bench/report.sh without a RUN_DIR).
# Knobs (small defaults, about 7 minutes): KRC_BENCH_RPC_N, _SECS,
# _PROCS ("1 4 8" or 1,4,8), _REPS, _K, _COLD, _PT_N, _BW_N (5 at least:
# ib_write_bw's minimum).
bench-rpc: all
	rm -rf $(BUILD)/bench/rpc $(BUILD)/bench/rpc-results
	@mkdir -p $(BUILD)/bench
	tools/krcluster -n 2 -t 1500 -p -o $(BUILD)/bench/rpc -- sh bench/rpc.sh; \
	rc=$$?; \
	grep -a '^rpc_bench:\|^ratio:' $(BUILD)/bench/rpc/rpc_bench.out \
		>$(BUILD)/bench/rpc/summary.txt; \
	sh bench/report.sh - $(BUILD)/bench/rpc-results - - $(BUILD)/bench/rpc || rc=1; \
	cat $(BUILD)/bench/rpc/summary.txt; \
	exit $$rc

# The remote memory benchmark of issue 27 on three nodes (bench/lmr.sh):
# an LMR READ beside the raw VQ READ, remote allocation, memset and copy at
# the owner beside a process moving the bytes, krcore's lock beside a CAS
# lock at 1, 4 and 8 processes; node1's "lmr_bench:" and "ratio:" lines
# in build/bench/lmr/summary.txt; the plots (bench/lmr_plot.sh) and a copy
# of the summary in build/bench/lmr-results. Knobs: KRC_BENCH_LMR_*
# (bench/lmr.sh).
bench-lmr: all
	rm -rf $(BUILD)/bench/lmr $(BUILD)/bench/lmr-results
	@mkdir -p $(BUILD)/bench
	tools/krcluster -n 3 -t 1200 -p -o $(BUILD)/bench/lmr -- sh bench/lmr.sh; \
	rc=$$?; \
	{ echo "commit $$(git describe --always --dirty 2>/dev/null || echo unknown)"; \
	  echo "date $$(date -u '+%Y-%m-%d %H:%M UTC')"; \
	  grep -a '^lmr_bench:\|^ratio:' $(BUILD)/bench/lmr/lmr_bench.out; } \
		>$(BUILD)/bench/lmr/summary.txt; \
	sh bench/lmr_plot.sh $(BUILD)/bench/lmr/summary.txt $(BUILD)/bench/lmr-results || rc=1; \
	cat $(BUILD)/bench/lmr/summary.txt; \
	exit $$rc

# UCX over krcore beside UCX over tcp (issue 28, bench/ucx.sh): on two
# nodes a new process's first put and first AM reply in phases (krcore
# cold and pooled), endpoints per second, ucx_perftest's latency and
# bandwidth, rc_verbs/ud_verbs tried; on four nodes MPI_Init and a first
# MPI_Alltoall. Node0's "ucx_bench:", "ratio:" and "note:" lines of both
# runs, with the commit and date, in build/bench/ucx/summary.txt; the plots
# (bench/ucx_plot.sh) in build/bench/ucx-results. Knobs: KRC_BENCH_UCX_*.
bench-ucx: all
	rm -rf $(BUILD)/bench/ucx $(BUILD)/bench/ucx-mpi $(BUILD)/bench/ucx-results
	@mkdir -p $(BUILD)/bench
	@echo "host: $$(nproc) CPUs, load at start $$(cut -d' ' -f1-3 /proc/loadavg)" \
		>$(BUILD)/bench/ucx-host
	tools/krcluster -n 2 -t 1200 -p -o $(BUILD)/bench/ucx -- sh bench/ucx.sh \
		>$(BUILD)/bench/ucx.log 2>&1; rc=$$?; \
	tools/krcluster -n 4 -t 900 -p -o $(BUILD)/bench/ucx-mpi -- sh bench/ucx.sh mpi \
		>$(BUILD)/bench/ucx-mpi.log 2>&1 || rc=1; \
	tail -n 3 $(BUILD)/bench/ucx.log $(BUILD)/bench/ucx-mpi.log; \
	{ echo "commit $$(git describe --always --dirty 2>/dev/null || echo unknown)"; \
	  echo "date $$(date -u '+%Y-%m-%d %H:%M UTC')"; \
	  echo "testbed: qemu TCG nodes, Soft-RoCE (rdma_rxe); compare ratios, not times"; \
	  echo "$$(cat $(BUILD)/bench/ucx-host), at end $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  cat $(BUILD)/bench/ucx/ucx_bench.out $(BUILD)/bench/ucx-mpi/ucx_bench.out 2>/dev/null | \
		grep -a '^ucx_bench:\|^ratio:\|^note:'; } >$(BUILD)/bench/ucx-summary.tmp; \
	mv $(BUILD)/bench/ucx-summary.tmp $(BUILD)/bench/ucx/summary.txt; \
	sh bench/ucx_plot.sh $(BUILD)/bench/ucx/summary.txt $(BUILD)/bench/ucx-results || rc=1; \
	cat $(BUILD)/bench/ucx/summary.txt; \
	exit $$rc

# The last make bench's results under docs/results (README.md with every
# figure, its ratios and its plot; bench/publish.sh), with bench-lmr's and
# bench-ucx's summaries and plots (build/bench/lmr-results, ucx-results)
# and the last make demo's report and plots if there is one.
bench-publish:
	sh bench/publish.sh $(BUILD)/bench/results docs/results \
		$(wildcard $(BUILD)/demo-kvs/results)

# Headers in a directory of their own: the .pc's Cflags point there, so
# '#include <libkrcore.h>' works (and <krcore/libkrcore.h> without it).
# Man pages: every name a page's NAME section lists gets a link to it.
install: lib tools
	install -d $(DESTDIR)$(INCLUDEDIR)/krcore $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man8
	install -m 644 include/libkrcore.h include/uapi/krcore.h $(DESTDIR)$(INCLUDEDIR)/krcore/
	install -m 644 $(BUILD)/lib/libkrcore.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/lib/$(LIB_SONAME) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libkrcore.so
	$(PC_SED) lib/libkrcore.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libkrcore.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/libkrcore.pc
	install -m 755 $(BUILD)/bin/krctl $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/*.4 $(DESTDIR)$(MANDIR)/man4/
	install -m 644 man/*.8 $(DESTDIR)$(MANDIR)/man8/
	sh scripts/man-links.sh | while read -r name page; do \
		ln -sf "$$page" "$(DESTDIR)$(MANDIR)/man$${page##*.}/$$name" || exit 1; \
	done

# The UCX transport, where Debian's UCX keeps its modules (LIBDIR/ucx);
# UCX 1.13 loads it only through LD_PRELOAD (docs/ucx.md).
UCX_MODDIR ?= $(LIBDIR)/ucx
install-ucx: ucx
	install -d $(DESTDIR)$(UCX_MODDIR)
	install -m 644 $(UCX_MOD) $(DESTDIR)$(UCX_MODDIR)/

# The source tree DKMS builds krcore.ko from (see dkms/dkms.conf); then
# 'dkms add krcore/$(KRC_VERSION)', 'dkms build ...', 'dkms install ...'.
# kernel/ keeps its layout: main.c and the build files at the top, each
# layer's sources and header in core/, control/, conn/ and data/.
DKMS_SRC = $(DESTDIR)/usr/src/krcore-$(KRC_VERSION)
KMOD_SRCS = $(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*/*.c)) \
	    $(wildcard kernel/*.h kernel/*/*.h) kernel/Kbuild kernel/Makefile
install-dkms:
	@test -n "$(KRC_VERSION)" || { echo "no KRC_VERSION in kernel/core/core.h"; exit 1; }
	install -d $(sort $(patsubst %/,%,$(dir $(KMOD_SRCS:%=$(DKMS_SRC)/%)))) \
		$(DKMS_SRC)/common $(DKMS_SRC)/include/uapi
	for f in $(KMOD_SRCS); do install -m 644 $$f $(DKMS_SRC)/$$f || exit 1; done
	install -m 644 common/*.c common/*.h $(DKMS_SRC)/common/
	install -m 644 include/uapi/krcore.h $(DKMS_SRC)/include/uapi/
	sed 's/#MODULE_VERSION#/$(KRC_VERSION)/' dkms/dkms.conf > $(DKMS_SRC)/dkms.conf
	chmod 644 $(DKMS_SRC)/dkms.conf

# Debian packages (debian/), built from a copy of the tree in $(BUILD)/deb;
# the UCX source krcore-ucx needs is fetched first, once, into
# $(UCX_SRC) (scripts/mkdeb.sh), so that the package build does not.
deb:
	BUILD=$(BUILD) UCX_SRC=$(UCX_SRC) sh scripts/mkdeb.sh

clean:
	-$(MAKE) -C kernel clean KVER=$(KVER)
	rm -rf $(BUILD)/obj $(BUILD)/obj-abi-next $(BUILD)/lib $(BUILD)/bin $(BUILD)/tests \
		$(BUILD)/deb $(BUILD)/dkms $(BUILD)/pkg

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# The example, built as a user would: against the installed-style header.
$(BUILD)/bin/krc_example: examples/krc_example.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a

# The RPC examples (t_rpc_examples runs them), built the same way.
$(RPC_EXAMPLES): $(BUILD)/bin/%: examples/%.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a -lpthread

# The remote memory examples (t_lmr runs them), built the same way.
$(LMR_EXAMPLES): $(BUILD)/bin/%: examples/%.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a

# The README's program, taken from README.md as a reader would copy it
# (t_two_nodes runs it): the entry point's example cannot rot.
$(BUILD)/bin/readme_read8: README.md $(BUILD)/lib/libkrcore.a
	@mkdir -p $(BUILD)/obj/readme
	awk '/^```c$$/ { f = 1; next } /^```$$/ { f = 0 } f' README.md >$(BUILD)/obj/readme/read8.c
	@grep -q 'int main' $(BUILD)/obj/readme/read8.c || { echo "README.md: no C program"; exit 1; }
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(BUILD)/obj/readme/read8.c $(BUILD)/lib/libkrcore.a

# Benchmarks: krcore and raw verbs side by side (they link libibverbs).
$(BUILD)/bin/%: bench/%.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a -libverbs -lrdmacm -lpthread

# The benchmarks' reporting side, plain C with no RDMA library:
# krbench_report (sample lines to a summary, JSON with krctl's writer, data
# and gnuplot scripts) and state_table (the QP state model of
# common/qp_state.c). krbench_report is bench/krbench_report.c, the
# program, and its parts in bench/report/ (the parser, the statistics, a
# writer per output: a folder of their own, as every bench/*.c is a
# program); krbench_report-lib.o is the program without main(), for its
# unit test.
KRR_SRCS := $(wildcard bench/report/*.c)
KRR_HDRS := bench/krbench_report.h $(wildcard bench/report/*.h)
KRR_PART_OBJS := $(KRR_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tools/krctl/json.o
KRR_OBJS := $(BUILD)/obj/bench/krbench_report.o $(KRR_PART_OBJS)
$(BUILD)/obj/bench/krbench_report.o $(BUILD)/obj/bench/krbench_report-lib.o \
	$(KRR_SRCS:%.c=$(BUILD)/obj/%.o): CPPFLAGS += -Ibench -Itools/krctl

$(BUILD)/obj/bench/krbench_report-lib.o: bench/krbench_report.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKRR_NO_MAIN -c $< -o $@

$(BUILD)/bin/krbench_report: $(KRR_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(KRR_OBJS)

$(BUILD)/bin/state_table: $(BUILD)/obj/bench/state_table.o $(BUILD)/obj/common/qp_state.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

$(BUILD)/tests/test_krbench_report: tests/unit/test_krbench_report.c \
		$(BUILD)/obj/bench/krbench_report-lib.o $(KRR_PART_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -Ibench -o $@ $< \
		$(BUILD)/obj/bench/krbench_report-lib.o $(KRR_PART_OBJS) -lcmocka

$(BUILD)/tests/test_qp_state: tests/unit/test_qp_state.c $(BUILD)/obj/common/qp_state.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -o $@ $< $(BUILD)/obj/common/qp_state.o -lcmocka

$(BUILD)/tests/test_credit: tests/unit/test_credit.c $(BUILD)/obj/common/credit.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -o $@ $< $(BUILD)/obj/common/credit.o -lcmocka

$(BUILD)/tests/test_flow: tests/unit/test_flow.c $(BUILD)/obj/common/flow.o \
		$(BUILD)/obj/common/credit.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -o $@ $< $(BUILD)/obj/common/flow.o \
		$(BUILD)/obj/common/credit.o -lcmocka

$(BUILD)/tests/test_rpc: tests/unit/test_rpc.c $(BUILD)/obj/common/rpc.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/include -o $@ $< $(BUILD)/obj/common/rpc.o -lcmocka

# The report's parser and writers under libFuzzer (no file is written):
# bench/report/, the parts without the program.
$(BUILD)/fuzz/fuzz_krbench_report: tests/fuzz/fuzz_krbench_report.c $(KRR_SRCS) \
		$(KRR_HDRS) tools/krctl/json.c tools/krctl/json.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Ibench -Itools/krctl -o $@ $< \
		$(KRR_SRCS) tools/krctl/json.c

# The key-value store demo: the table, a krcore and a verbs backend; the
# serverless transfer uses the same two backends.
$(BUILD)/bin/kvs_demo $(BUILD)/bin/serverless: $(BUILD)/bin/%: bench/%.c \
		$(KVS_BACKENDS:%.c=$(BUILD)/obj/%.o) $(KVS_OBJS) $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(KVS_BACKENDS:%.c=$(BUILD)/obj/%.o) \
		$(KVS_OBJS) $(BUILD)/lib/libkrcore.a -libverbs -lrdmacm

# ABI tests: a library built for the next ABI version (the module must
# refuse it), and raw users built against frozen old ABI headers (every
# later module must serve them).
ABI_NEXT := $(shell expr $$(sed -n 's/^\#define KRCORE_ABI_VERSION[[:space:]]*//p' include/uapi/krcore.h) + 1)
ABI_NEXT_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj-abi-next/%.o)
unit: $(BUILD)/tests/abi_check_next $(BUILD)/tests/abi_old2 $(BUILD)/tests/abi_old3 \
	$(BUILD)/tests/krctl_abi_next

# ABI_NEXT comes from the header: a new ABI version rebuilds them.
$(BUILD)/obj-abi-next/%.o: %.c include/uapi/krcore.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKRC_LIB_ABI_VERSION=$(ABI_NEXT) -c $< -o $@

$(BUILD)/tests/abi_check_next: tests/progs/abi_check.c $(ABI_NEXT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKRC_LIB_ABI_VERSION=$(ABI_NEXT) -o $@ $^

# krctl built for the next ABI: the module must make it exit 7 (t_krctl).
$(BUILD)/tests/krctl_abi_next: $(KRCTL_SRCS:%.c=$(BUILD)/obj-abi-next/%.o) $(ABI_NEXT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

$(BUILD)/tests/abi_old%: tests/progs/abi/abi_old.c tests/progs/abi/krcore_abi%.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKRC_OLD_ABI=$* -o $@ $<

# Programs the cluster tests run inside the nodes.
# The data-plane scenarios (tests/progs/dp_*.c, one program each) link
# their shared part, tests/progs/dp/helpers.c.
DP_HELPERS := $(BUILD)/obj/tests/progs/dp/helpers.o
DP_BINS    := $(filter $(BUILD)/tests/dp_%,$(PROG_BINS))
$(DP_BINS): $(BUILD)/tests/%: tests/progs/%.c tests/progs/dp/helpers.h tests/progs/tp.h \
		$(DP_HELPERS) $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(DP_HELPERS) $(BUILD)/lib/libkrcore.a

$(BUILD)/tests/ud_garbage: tests/progs/ud_garbage.c tests/progs/ud.h $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a -libverbs

$(BUILD)/tests/src_flood: tests/progs/src_flood.c tests/progs/ud.h $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a -libverbs

$(BUILD)/tests/meta_forge: tests/progs/meta_forge.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a -lrdmacm -libverbs

# The MPI program of t_mpi (docs/ucx.md), with Debian's Open MPI.
$(BUILD)/tests/mpi_check: tests/progs/mpi_check.c
	@mkdir -p $(dir $@)
	mpicc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $<

# The UCX benchmark (bench/ucx.sh): a UCP program that links Debian's UCX
# only, and an MPI program built with Debian's Open MPI.
$(BUILD)/bin/ucx_bench: bench/ucx_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< -lucp -lucs

$(BUILD)/bin/mpi_bench: bench/mpi_bench.c
	@mkdir -p $(dir $@)
	mpicc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $<

# The UCP programs of t_ucx and t_ucx_fail (docs/ucx.md), one case each,
# with their shared part, tests/progs/ucx/common.c; Debian's UCX only.
UCX_COMMON := $(BUILD)/obj/tests/progs/ucx/common.o
$(UCX_COMMON): tests/progs/ucx/common.c tests/progs/ucx/common.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/tests/ucx_check $(BUILD)/tests/ucx_peer_fail: $(BUILD)/tests/%: \
	    tests/progs/%.c tests/progs/ucx/common.h $(UCX_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/progs -o $@ $< $(UCX_COMMON) -lucp -lucs

$(BUILD)/tests/%: tests/progs/%.c $(BUILD)/lib/libkrcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/lib/libkrcore.a

.SECONDARY:
