# fg: a system-wide CPU profiler as small Unix tools.  See README.md.
#
#   make                 build every tool into $(OUT)/; installs nothing: when the build lacks
#                        something, it says which Debian packages to install and stops
#   make deps            install the Debian packages the build and the tests need (scripts/deps/)
#   make test            the quick tier: build, then the unit tests and every test that needs no
#                        live BPF (a few minutes)
#   make ARCH=arm64      cross-build everything for arm64 into build/arm64/ (on x86-64)
#   make check-arm64     that build's tests under qemu-user (installs scripts/deps/arm64/)
#   make check           install missing packages, build, run every test (also under ASan+UBSan,
#                        plus a short run of every fuzz target and the man page lint)
#   make install         PREFIX=/usr/local DESTDIR=
#   make demo            profile the bundled workloads into $(OUT)/demo.svg (root)
#   make bench           the benchmarks in scripts/bench/ (root, a quiet machine)
#   make fuzz            run the fuzz targets longer (FUZZ_SECONDS per target)
#   make WERROR=0        do not treat warnings as errors;  V=1 shows the commands

# (before the compiler's dependency files are included: their first rule is not the goal)
.DEFAULT_GOAL := all

OUT ?= build
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# data files: fg-ch's schemas
DATADIR ?= $(PREFIX)/share/fg
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
CFLAGS ?= -g -O2
WERROR ?= 1
SAN ?=
FUZZ_SECONDS ?= 300
SMOKE_SECONDS ?= 10
NPROC := $(shell nproc 2>/dev/null || echo 2)
HOST_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/;s/ppc64le/powerpc/;s/mips.*/mips/;s/riscv64/riscv/;s/loongarch64/loongarch/')
# (only from make's command line: an ARCH in the environment is often another naming's, amd64)
ifneq ($(origin ARCH),command line)
ARCH := $(HOST_ARCH)
endif

# make ARCH=arm64 on another machine: a cross build into build/arm64/ with Debian's
# aarch64-linux-gnu compilers, against Debian's arm64 libraries (multiarch), the BPF object
# against bpf/arm64/vmlinux.h.xz (scripts/gen-vmlinux-arm64 says where it comes from);
# make check-arm64 runs its tests under qemu-user.  scripts/deps/arm64.txt lists the packages.
ifeq ($(ARCH)-$(filter arm64,$(HOST_ARCH)),arm64-)
CROSS := aarch64-linux-gnu-
ifeq ($(origin OUT),file)
OUT := build/arm64
endif
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
AR := $(CROSS)ar
CROSS_CLANG := --target=aarch64-linux-gnu
# (make 4.3 passes no exported variable to $(shell): given on each command line)
PKG_ENV := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
VMLINUX_H ?= bpf/arm64/vmlinux.h.xz
QEMU ?= qemu-aarch64-static -L /usr/aarch64-linux-gnu
else
AR ?= ar
endif

# the kernel's BTF, for vmlinux.h; VMLINUX_H=FILE uses a header supplied instead
VMLINUX_BTF ?= $(firstword $(wildcard /sys/kernel/btf/vmlinux /boot/vmlinux-$(shell uname -r)))
VMLINUX_H ?=

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN := -Wall -Wextra -Werror=undef -Wmissing-field-initializers -Wshadow -Wformat=2 \
	-Wno-format-nonliteral -Wstrict-prototypes -Wmissing-prototypes -Wvla
ifeq ($(WERROR),1)
WARN += -Werror
endif
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

PKGS := libbpf libelf libdw zlib liblzma
PKG_CFLAGS := $(shell $(PKG_ENV) pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_ENV) pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -ldw -lelf -lz -llzma)

# each object also writes the headers it read to a .d file beside it, which make reads back
# (below): a header's change rebuilds what includes it, and only that
DEPFLAGS := -MMD -MP
ALL_CFLAGS := $(DEPFLAGS) -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Iinclude -I$(OUT) $(PKG_CFLAGS) \
	$(WARN) $(CFLAGS) $(SANFLAGS)
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS)
# each tool links only the libraries it uses
LDLIBS_ALL := -Wl,--as-needed $(PKG_LIBS) -liberty -lm $(LDLIBS)
# and a tool's own: only fg-top draws on a terminal (ncurses) and has a second thread
NCURSES_CFLAGS := $(shell $(PKG_ENV) pkg-config --cflags ncursesw 2>/dev/null)
NCURSES_LIBS := $(shell $(PKG_ENV) pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)
$(OUT)/cmd/fg-top.o: TOOL_CFLAGS = $(NCURSES_CFLAGS)
$(OUT)/fg-top: TOOL_LIBS = $(NCURSES_LIBS) -pthread
# of its own; fg-sample has one too, where --call-graph cfi's tables are built (lib/cfi_worker)
$(OUT)/fg-sample: TOOL_LIBS = -pthread
# fg-serve answers HTTP with libmicrohttpd (threads of its own), only it links it
MHD_LIBS := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
$(OUT)/fg-serve: TOOL_LIBS = $(MHD_LIBS) -pthread

LIB_SRCS := $(sort $(wildcard lib/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(OUT)/%.o)
TOOLS := $(patsubst cmd/%.c,%,$(sort $(wildcard cmd/*.c)))
TOOL_BINS := $(TOOLS:%=$(OUT)/%)
SCRIPTS := $(sort $(wildcard scripts/bin/*))
CH_SCHEMAS := $(sort $(wildcard scripts/ch/*.sql))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(OUT)/tests/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OUT := $(OUT)-fuzz
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_OUT)/%)
TESTTOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TESTTOOL_BINS := $(TESTTOOL_SRCS:tests/tools/%.c=$(OUT)/tests/tools/%)
# every public header compiles on its own, and beside all the others
HEADER_CHECKS := $(patsubst include/fg/%.h,$(OUT)/tests/headers/%.o,$(wildcard include/fg/*.h)) \
	$(OUT)/tests/headers/all.o
WORKLOAD_SRCS := $(sort $(wildcard tests/workloads/*.c))
WORKLOAD_BINS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(OUT)/workloads/%)
# the unwinding fixtures (see below)
UNWIND_CCS := gcc clang
UNWIND_gcc := $(CROSS)gcc
UNWIND_clang := clang $(CROSS_CLANG)
UNWIND_BINS := $(foreach c,$(UNWIND_CCS),$(foreach k,pie nopie static,$(OUT)/unwind/fixture-$(c)-$(k)))
# (the swap fixtures are x86-64 assembly)
ifeq ($(ARCH),x86)
UNWIND_BINS += $(foreach v,a b,$(OUT)/unwind/swap-$(v) $(OUT)/unwind/libswap-$(v).so) \
	$(OUT)/unwind/swap-run $(OUT)/unwind/swap-dl
endif
BPF_SRCS := $(sort $(wildcard bpf/*.bpf.c))
SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(OUT)/%.skel.h)
MAN1 := $(sort $(wildcard man/*.1))
MAN5 := $(sort $(wildcard man/*.5))

-include $(wildcard $(OUT)/*.d $(OUT)/lib/*.d $(OUT)/cmd/*.d $(OUT)/tests/*.d \
	$(OUT)/tests/tools/*.d $(FUZZ_OUT)/*.d $(FUZZ_OUT)/lib/*.d)

.PHONY: demo all build deps check check-arm64 test unit bats check-asan fuzz fuzz-smoke man-lint format format-check install uninstall \
	clean bench
.DELETE_ON_ERROR:
.SECONDARY:

all: build

build: $(TOOL_BINS) $(UNIT_BINS) $(WORKLOAD_BINS) $(TESTTOOL_BINS) $(UNWIND_BINS) $(HEADER_CHECKS)

# the goals that build check first what the build needs, and stop before anything changes
# when something is missing (scripts/check-deps says which packages); `make deps` installs
# them, and `make check` and `make demo` call it, then build in a new make that sees them
BUILD_GOALS := all build install unit bats test bench
ifneq ($(filter $(BUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
ifneq ($(shell $(PKG_ENV) CC='$(CC)' CLANG='$(CLANG)' BPFTOOL='$(BPFTOOL)' scripts/check-deps >&2; echo $$?),0)
$(error the build's dependencies are missing (above); 'make deps' installs them)
endif
endif

deps:
	$(Q)scripts/install-deps

$(OUT)/lib $(OUT)/cmd $(OUT)/tests $(FUZZ_OUT) $(FUZZ_OUT)/lib:
	$(Q)mkdir -p $@

# --- the library and the tools ---

$(OUT)/lib/%.o: lib/%.c | $(OUT)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(OUT)/libfg.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUT)/cmd/%.o: cmd/%.c | $(OUT)/cmd
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(TOOL_CFLAGS) -c $< -o $@

$(OUT)/%: $(OUT)/cmd/%.o $(OUT)/libfg.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(TOOL_LIBS) $(LDLIBS_ALL) -o $@

# --- BPF: vmlinux.h from the kernel's BTF, object, skeleton ---

CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

# (no `| $(OUT)` here: with OUT=build it names the phony target `build`, a circular dependency)
$(OUT)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/gen-vmlinux-h.sh "$(VMLINUX_BTF)" "$(VMLINUX_H)" > $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(OUT) -Iinclude -Ibpf \
		$(CLANG_BPF_SYS_INCLUDES) $(DEPFLAGS) -Wall -Werror -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf,,$(notdir $(basename $<)))_bpf > $@

# only fg-sample includes a skeleton
$(OUT)/cmd/fg-sample.o: $(SKELS)

# the BPF objects linked as libbpf links them (bpftool gen object): a cross build's check that
# they hold together, where they cannot be loaded
$(OUT)/%.bpf.linked.o: $(OUT)/%.bpf.o
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $<
ifneq ($(CROSS),)
build: $(BPF_SRCS:bpf/%.bpf.c=$(OUT)/%.bpf.linked.o)
endif

# --- tests ---

$(OUT)/tests/%: tests/unit/%.c $(OUT)/libfg.a | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) $< $(OUT)/libfg.a $(LDLIBS_ALL) -o $@

# loads fg-sample's program both ways: its skeleton
$(OUT)/tests/test_minbtf: $(OUT)/fg_sample.skel.h

# workloads for the profiling tests: plain builds (no sanitizer), with frame pointers and
# debug information, so that stacks and names are what the tests expect
$(OUT)/workloads/%: tests/workloads/%.c tests/workloads/common.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		-fno-inline -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) $< -o $@

# the unwinding fixtures (tests/unwind/): built by gcc and by clang whatever CC is, at -O2
# without frame pointers, as PIE, non-PIE and static, each PIE/non-PIE one with its compiler's
# shared library; they take their own stack snapshots (snap.c) when FG_SNAP_OUT is set
UNWIND_CFLAGS := -std=gnu11 -O2 -fomit-frame-pointer -g -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
UNWIND_SRCS := tests/unwind/fixture.c tests/unwind/snap.c
UNWIND_DEPS := $(UNWIND_SRCS) tests/unwind/snap.h tests/unwind/fixlib.h

$(OUT)/unwind/libfixlib-%.so: tests/unwind/fixlib.c tests/unwind/fixlib.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(UNWIND_$*) $(UNWIND_CFLAGS) -fPIC -shared -Wl,-soname,libfixlib-$*.so $< -o $@

$(OUT)/unwind/fixture-%-pie: $(UNWIND_DEPS) $(OUT)/unwind/libfixlib-%.so
	$(call msg,CC,$@)
	$(Q)$(UNWIND_$*) $(UNWIND_CFLAGS) -fPIE -pie $(UNWIND_SRCS) -L$(@D) -l:libfixlib-$*.so \
		-Wl,-rpath,'$$ORIGIN' -pthread -o $@

$(OUT)/unwind/fixture-%-nopie: $(UNWIND_DEPS) $(OUT)/unwind/libfixlib-%.so
	$(call msg,CC,$@)
	$(Q)$(UNWIND_$*) $(UNWIND_CFLAGS) -fno-pie -no-pie $(UNWIND_SRCS) -L$(@D) -l:libfixlib-$*.so \
		-Wl,-rpath,'$$ORIGIN' -pthread -o $@

$(OUT)/unwind/fixture-%-static: $(UNWIND_DEPS) tests/unwind/fixlib.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(UNWIND_$*) $(UNWIND_CFLAGS) -static $(UNWIND_SRCS) tests/unwind/fixlib.c -pthread -o $@

# the swap fixtures (tests/unwind/swap.S): the same code at the same addresses but for
# swap_hot's frame, 0x20 bytes in the a build and 0x40 in the b one; static programs (and
# swap-run, which runs them on one CPU) and shared libraries (for swap-dl, which opens them
# one after the other)
SWAP_FRAME_a := 0x20
SWAP_FRAME_b := 0x40
SWAP_CFLAGS := $(UNWIND_CFLAGS) -D_GNU_SOURCE

$(OUT)/unwind/swap-a $(OUT)/unwind/swap-b: $(OUT)/unwind/swap-%: tests/unwind/swap.c \
		tests/unwind/swap.S tests/unwind/swap.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(SWAP_CFLAGS) -DFRAME=$(SWAP_FRAME_$*) -static tests/unwind/swap.c \
		tests/unwind/swap.S -o $@

$(OUT)/unwind/libswap-%.so: tests/unwind/swap.S
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(SWAP_CFLAGS) -DFRAME=$(SWAP_FRAME_$*) -fPIC -shared $< -o $@

$(OUT)/unwind/swap-run: tests/unwind/swap-run.c tests/unwind/swap.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(SWAP_CFLAGS) -static $< -o $@

$(OUT)/unwind/swap-dl: tests/unwind/swap-dl.c tests/unwind/swap.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(SWAP_CFLAGS) $< -ldl -o $@

# helper programs for the tests (fixture generators), linked with the library
$(OUT)/tests/tools/%: tests/tools/%.c $(OUT)/libfg.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $< $(OUT)/libfg.a $(LDLIBS_ALL) -o $@

$(OUT)/tests/headers/%.o: include/fg/%.h
	$(call msg,HDR,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf '#include "fg/%s"\n' $(notdir $<) | $(CC) $(ALL_CFLAGS) -x c -c - -o $@

$(OUT)/tests/headers/all.o: $(wildcard include/fg/*.h)
	$(call msg,HDR,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf '#include "fg/%s"\n' $(notdir $^) | $(CC) $(ALL_CFLAGS) -x c -c - -o $@

unit: build
	$(Q)tests/run unit $(OUT)

bats: build
	$(Q)tests/run bats $(OUT)

# the quick tier: no live BPF, no ASan pass, no fuzzing (built on every CPU, as check builds)
test:
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) build
	$(Q)tests/run quick $(OUT)

# the whole suite, as CI runs it: build and test normally, then again under
# AddressSanitizer + UBSan with clang, then a short run of every fuzz target and the man lint
# (the fuzz targets are built in tests/run's second lane, beside the first lane's tests)
check: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) build
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) OUT=$(OUT)-asan SAN=1 CC=$(CLANG) build
	$(Q)FG_FUZZ_BUILD="$(MAKE) --no-print-directory -j1 OUT=$(OUT) fuzz-build" \
		tests/run all $(OUT) $(OUT)-asan $(FUZZ_OUT) $(SMOKE_SECONDS)

# on another machine than arm64: make ARCH=arm64's build (with the BPF objects linked by bpftool
# gen object, as the skeleton's loader would), then its unit tests and bats suites under
# qemu-user (tests/run arm64 says which, and why some are left out); fg-sym of this machine's build
# names the arm64 captures
check-arm64:
	$(Q)scripts/install-deps arm64
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) build
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) ARCH=arm64 build
	$(Q)tests/run arm64 $(OUT) $(OUT)/arm64

check-asan: deps
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) OUT=$(OUT)-asan SAN=1 CC=$(CLANG) build
	$(Q)tests/run unit $(OUT)-asan && tests/run bats $(OUT)-asan

# --- fuzzing (clang libFuzzer) ---

FUZZ_CFLAGS := $(DEPFLAGS) -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Iinclude -I$(OUT) $(PKG_CFLAGS) \
	-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -DFG_FUZZING
# (not fg-serve's HTTP side: only fg-serve links libmicrohttpd)
FUZZ_LIB_OBJS := $(filter-out $(FUZZ_OUT)/lib/serve_http.o,$(LIB_SRCS:%.c=$(FUZZ_OUT)/%.o))

$(FUZZ_OUT)/lib/%.o: lib/%.c | $(FUZZ_OUT)/lib
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_OUT)/%: tests/fuzz/%.c $(FUZZ_LIB_OBJS) | $(FUZZ_OUT)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJS) $(LDLIBS_ALL) -o $@

fuzz-build: $(FUZZ_BINS)

fuzz-smoke: fuzz-build
	$(Q)tests/run fuzz $(FUZZ_OUT) $(SMOKE_SECONDS)

fuzz: fuzz-build
	$(Q)tests/run fuzz $(FUZZ_OUT) $(FUZZ_SECONDS)

man-lint:
	$(Q)tests/run man

# clang-format every C file in place (make check fails on one that is not)
format:
	$(Q)git ls-files '*.c' '*.h' | grep -vx lib/svg_script.c | xargs clang-format -i

format-check:
	$(Q)tests/run format

# --- the demo: a flame graph of the bundled workloads (root) ---

demo: deps
	$(Q)$(MAKE) --no-print-directory build
	$(Q)scripts/demo $(OUT)

# --- benchmarks ---

bench: all
	$(Q)scripts/bench/run $(OUT)

# --- install ---

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(TOOL_BINS) $(SCRIPTS) $(DESTDIR)$(BINDIR)
	$(if $(MAN1),install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1)
	$(if $(MAN5),install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5)
	install -d $(DESTDIR)$(DATADIR)/ch
	install -m 644 $(CH_SCHEMAS) $(DESTDIR)$(DATADIR)/ch

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS) $(notdir $(SCRIPTS))) \
		$(addprefix $(DESTDIR)$(DATADIR)/ch/,$(notdir $(CH_SCHEMAS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MAN5)))

clean:
	rm -rf $(OUT) $(OUT)-asan $(FUZZ_OUT)
