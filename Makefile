# profil - GNU make build.  `make` builds the libraries and the demo,
# `make check` runs every test, `make install PREFIX=/usr/local DESTDIR=`.

VERSION    := 1.0.0
SOVERSION  := 1
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BUILD      ?= build

CC         ?= cc
OPT        ?= -O2 -g
SAN        ?=
WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# -fno-delete-null-pointer-checks: glibc declares profil() nonnull (see
# docs/contract.md, "The classic call"); our NULL checks must survive.
BASEFLAGS  := -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc -pthread \
              -fno-delete-null-pointer-checks $(WARN) $(OPT) $(SAN)
LIBFLAGS   := $(BASEFLAGS) -fPIC -fvisibility=hidden
CFLAGS_ALL = $(LIBFLAGS) $(CFLAGS)

LIB_SRC    := $(sort $(wildcard src/*/*.c))
LIB_OBJ    := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
LIB_HDR    := $(wildcard src/*/*.h)
SONAME     := libprofil.so.$(SOVERSION)
AGENT_SRC  := $(sort $(wildcard agent/*.c))
AGENT_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/agent-obj/%.o) \
              $(AGENT_SRC:agent/%.c=$(BUILD)/agent-obj/agent-%.o)
AGENT      := $(BUILD)/libprofil-agent.so
SHLIB      := $(BUILD)/libprofil.so.$(VERSION)
STLIB      := $(BUILD)/libprofil.a

TEST_SRC   := $(sort $(wildcard test/test-*.c))
TEST_BIN   := $(BUILD)/test/run-tests
TEST_HELPERS := $(patsubst test/helpers/%.c,$(BUILD)/test/%,$(wildcard test/helpers/*.c))

# The profil command (cli/): every cli/*/*.c and cli/main.c, linked with
# CLI_LIBS (zlib to read gzip, libdeflate to write it; the symbolizer
# adds libdw's).  Its tests are data: each case of test/cli/*.t becomes
# a test cli_<file>_<n> of the runner (test/test-cli.c reads the cases;
# test/cli/cases.awk lists them).
CLI_SRC    := $(sort $(wildcard cli/main.c cli/*/*.c))
CLI_OBJ    := $(CLI_SRC:cli/%.c=$(BUILD)/cli-obj/%.o)
CLI_LIBS   += -lz -ldeflate
PROFIL_BIN := $(BUILD)/profil
CLI_CASES  := $(sort $(wildcard test/cli/*.t))
TEST_SRC   += $(BUILD)/test/test-cli-cases.c
# Programs `profil record` tests profile (rules at the end); never built
# with a sanitizer, like the agent they load (see AGENT_CFLAGS).
REC_T      := $(BUILD)/test/rec
REC_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -pthread
REC_LINK   := -L$(REC_T) -Wl,-rpath,$(abspath $(REC_T)) -lrec -ldl
REC_FILES  := $(addprefix $(REC_T)/,rec-prog rec-prog-nopie rec-prog-fp librec.so librecplug.so librecalt.so librecinit.so librecrpath.so librecaudit.so \
              rec-prog-stripped rec-cxx rec-static rec-jit rec-asan rec-go rec-tracer \
              rec-wait rec-alias rec-getenv rec-state rec-rawsig \
              rec-seccomp rec-lazy rec-pingpong rec-ownheap rec-ctor rec-prog-nobid rec-asmcfa \
              rec-uring rec-smallstack recgo.go recgolib.go recgolib-main.c recgo-build)
TEST_HELPERS += $(PROFIL_BIN) $(BUILD)/test/mkprofile $(AGENT) $(REC_FILES)
# Shared libraries tests dlopen() from the runner's directory (code in a
# mapping of its own, e.g. for multi-range attribution).
TEST_LIBS  := $(patsubst test/lib/%.c,$(BUILD)/test/lib%.so,$(wildcard test/lib/*.c))
EXAMPLES   := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# Installed man pages: every man/*.1 (none yet) and man/*.3, plus links
# to profil.3 for the other functions its NAME section lists.
MAN1       := $(wildcard man/*.1)
MAN3_LINKS := profil_hz profil_set_hz profil_get_stats profil_engine_name
BENCH      := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))

LINK_PROFIL = -L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) -lprofil

.PHONY: test-perf test-timer valgrind-unit tsan-run
.PHONY: cli deps check-install check-symbols all lib check check-handler check-alloc check-small-data check-layout check-man check-cxx check-contract test demo install \
        uninstall clean help \
        examples bench stress sanitize tsan valgrind
all: lib examples cli

lib: $(SHLIB) $(BUILD)/libprofil.so $(STLIB) $(AGENT)

$(BUILD)/obj/%.o: src/%.c $(LIB_HDR) include/*.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# The code that runs in the sampling signal's context and the fault
# recovery that jumps out of it are not ASan-instrumented: before a jump
# ASan calls __asan_handle_no_return, which allocates (pthread_getattr_np),
# and an allocation in signal context deadlocks on the allocator's lock if
# the signal interrupted malloc, or in a child forked while another thread
# held it (safety_stress_mix hung so in CI).  Without instrumentation the
# frames jumped over have no redzones to leave poisoned.  UBSan stays.
SIGNAL_CONTEXT_OBJ := $(BUILD)/obj/engine/sample.o $(BUILD)/obj/engine/sample_write.o \
                      $(BUILD)/obj/engine/sample_records.o \
                      $(BUILD)/obj/unwind/unwind.o $(BUILD)/obj/engine/fault.o \
                      $(BUILD)/obj/engine/libc_calls.o
$(SIGNAL_CONTEXT_OBJ): CFLAGS_ALL += $(if $(findstring address,$(SAN)),-fno-sanitize=address)

# -z nodelete: dlclose() of a library that pulled libprofil in never
# unmaps it; threads it created run its code until they exit (issue 9).
# -z now: every symbol bound at load, so no call from a signal handler
# goes through the dynamic linker's lazy resolution, which is slow (it
# saves the whole register state) and not async-signal-safe.  Its first
# call in a handler left a window long enough for signals kill(2) sent
# in a stream to nest the fault handler until the stack overflowed
# (masked_handler_left_by_longjmp died of SIGSEGV one run in two).
BIND_NOW := -Wl,-z,now
# The link name (libprofil.so) is made with the library: everything
# linked with $(LINK_PROFIL) (-lprofil) depends on $(SHLIB) only, and a
# parallel build linked the examples before the rule below had run
# ("cannot find -lprofil", once in a fresh `make -j2`).
$(SHLIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -Wl,-z,nodelete $(BIND_NOW) -o $@ $^ -pthread $(SAN) $(LDFLAGS)
	ln -sf libprofil.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libprofil.so.$(VERSION) $(BUILD)/libprofil.so

$(BUILD)/libprofil.so: $(SHLIB)
	ln -sf libprofil.so.$(VERSION) $@

# Not credwrap.o, sigevwrap.o, c11wrap.o nor clonewrap.o: in a static
# link they would have no libc setuid(), timer_create(), thrd_create() or
# clone() to pass the calls to (src/process/credwrap.c and c11wrap.c say
# why).
STATIC_LEFT := $(addprefix $(BUILD)/obj/process/,credwrap.o sigevwrap.o c11wrap.o clonewrap.o)
$(STLIB): $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $(filter-out $(STATIC_LEFT),$^)

$(BUILD)/obj $(BUILD)/test $(BUILD)/examples $(BUILD)/bench:
	mkdir -p $@

# Tests: one runner binary; it re-executes itself for each test so every
# test has a process of its own (signals and timers are process-wide).
# The list of tests is every TEST_IMPL(name) in test/test-*.c, in file order.
$(BUILD)/test/list.h: $(TEST_SRC) | $(BUILD)/test
	sed -n 's/^TEST_IMPL(\([a-z0-9_]*\)).*/TEST(\1)/p' $(TEST_SRC) > $@.tmp && mv $@.tmp $@

# The agent's reading of seccomp filters is checked against the kernel
# (test/test-seccomp-check.c): its two files, which need nothing else.
# The runner's own copies of base/'s allocator, sort and thread listing
# (test/test-alloc.c, and the unwind tables test-unwind.c builds) and
# maps reader (the unwind cache's key of a main program), dynamic
# symbol lookup (test/test-dynsym.c), formatting (test/test-fmt.c) and
# kept strings (test/test-keep.c).
TEST_AGENT_SRC := agent/bpf.c agent/filtercheck.c src/base/alloc.c src/base/sort.c \
                  src/base/tasklist.c src/base/maps.c src/base/dynsym.c src/base/fmt.c \
                  src/base/keep.c
$(TEST_BIN): test/runner.c $(wildcard test/*.h test/unwind/*.h) test/rec/asmcfa.h $(BUILD)/test/list.h $(TEST_SRC) $(TEST_AGENT_SRC) $(wildcard agent/*.h) $(SHLIB) $(BUILD)/libprofil.so | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itest -I$(BUILD)/test -rdynamic -o $@ test/runner.c $(TEST_SRC) $(TEST_AGENT_SRC) $(LINK_PROFIL) -ldl -lm $(LDFLAGS)

$(BUILD)/test/%: test/helpers/%.c $(SHLIB) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itest -o $@ $< $(LINK_PROFIL) -lm $(LDFLAGS)

# Non-PIE builds of helpers: gprof must read absolute addresses right too.
TEST_HELPERS += $(BUILD)/test/gmon-hot-nopie
$(BUILD)/test/%-nopie: test/helpers/%.c $(SHLIB) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -fno-pie -no-pie -Itest -o $@ $< $(LINK_PROFIL) -lm $(LDFLAGS)

# Linking (test/link/, test-link.c): a program with libprofil.a, dynamic
# and, where libc.a exists and no sanitizer is on, static; a library
# linked with libprofil that a program without it dlopen()s and dlclose()s.
TEST_HELPERS += $(BUILD)/test/archive-prog $(BUILD)/test/dlclose-prog $(BUILD)/test/libprofil-user.so
TEST_HELPERS += $(BUILD)/test/libselfprof.so
LIBC_A := $(shell $(CC) -print-file-name=libc.a)
ifeq ($(SAN),)
ifneq ($(LIBC_A),libc.a)
TEST_HELPERS += $(BUILD)/test/static-prog
endif
endif
$(BUILD)/test/static-prog: test/link/prog.c $(STLIB) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -static -o $@ $< $(STLIB) $(LDFLAGS)
$(BUILD)/test/archive-prog: test/link/prog.c $(STLIB) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< $(STLIB) $(LDFLAGS)
$(BUILD)/test/dlclose-prog: test/link/dlclose-prog.c | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< -ldl $(LDFLAGS)
$(BUILD)/test/libprofil-user.so: test/link/user.c $(SHLIB) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< $(LINK_PROFIL) -ldl $(LDFLAGS)
# A preload that makes any program profile itself with profil() (the
# real-suites "self" runs, tools/real-suites.sh).
$(BUILD)/test/libselfprof.so: test/link/selfprof.c $(SHLIB) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< $(LINK_PROFIL) $(LDFLAGS)

$(BUILD)/test/lib%.so: test/lib/%.c | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itest -fPIC -shared -o $@ $< $(LDFLAGS)

# The stack walk's tests (test-unwind.c): a program and a library built
# without frame pointers (as Debian builds its libraries), run under the
# agent.  The program checks its own ring file (test/unwind/prog.c).
TEST_HELPERS += $(BUILD)/test/uwprog $(BUILD)/test/libuwchain.so
UW_CFLAGS   = $(BASEFLAGS) $(CFLAGS) -O2 -fomit-frame-pointer
# the library without a GNU build-id, as rustc's are: its cached unwind
# table is keyed by the file's identity instead
$(BUILD)/test/libuwchain.so: test/unwind/chain.c test/unwind/chain.h | $(BUILD)/test
	$(CC) $(UW_CFLAGS) -fPIC -shared -Wl,--build-id=none -o $@ $< $(LDFLAGS)
$(BUILD)/test/uwprog: test/unwind/prog.c test/unwind/chain.h src/base/ring.h \
                      $(BUILD)/test/libuwchain.so $(AGENT) | $(BUILD)/test
	$(CC) $(UW_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/test \
	    -Wl,-rpath,$(abspath $(BUILD)/test) -luwchain -ldl $(LDFLAGS)

$(BUILD)/examples/%: examples/%.c $(SHLIB) | $(BUILD)/examples
	$(CC) $(BASEFLAGS) $(CFLAGS) -rdynamic -o $@ $< $(LINK_PROFIL) -ldl -lm $(LDFLAGS)

$(BUILD)/bench/%: bench/%.c $(SHLIB) $(BUILD)/libprofil.so | $(BUILD)/bench
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $< -lm $(LDFLAGS)

# The profil agent (agent/): preloaded by `profil record`.  It carries its
# own copy of the engine with the public profil() family hidden, so a
# program that calls profil() itself does not take over the recording.
# Never built with a sanitizer: it goes into programs that are not (a
# sanitizer runtime must be the first library of a process); the engine
# runs under the sanitizers in the library's own tests.
AGENT_CFLAGS = $(filter-out $(SAN),$(CFLAGS_ALL)) -DPROFIL_API=

$(BUILD)/agent-obj:
	mkdir -p $@
$(BUILD)/agent-obj/%.o: src/%.c $(LIB_HDR) include/*.h
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_CFLAGS) -c $< -o $@
$(BUILD)/agent-obj/agent-%.o: agent/%.c agent/*.h $(LIB_HDR) include/*.h | $(BUILD)/agent-obj
	$(CC) $(AGENT_CFLAGS) -c $< -o $@
# -z initfirst: the agent's constructors run before every other object's,
# so the constructors of the program's libraries are sampled (agent.c)
$(AGENT): $(AGENT_OBJ)
	$(CC) -shared -Wl,-z,defs -Wl,-z,initfirst $(BIND_NOW) -o $@ $^ -ldl -pthread $(LDFLAGS)

examples: $(EXAMPLES)
# Not part of check: about 15 minutes (BENCH_QUICK=1: about 3); writes
# bench/results.md and bench/*.png.
bench: $(BENCH) $(PROFIL_BIN) $(AGENT) rec-progs
	bash bench/run.sh $(BUILD)

test: $(TEST_BIN) $(TEST_HELPERS) $(TEST_LIBS)
	$(TEST_BIN) $(TESTS)

# The semantic suite once per engine (issue 13).  `make test` samples with
# the engine chosen by default (perf events above the tick where they are
# allowed); these run the counting, threads, fork, exec and safety tests
# again with PROFIL_ENGINE forcing one: perf where a probe succeeds (else
# one line says why not), timers everywhere.
ENGINE_TESTS := classic_totals_1_thread classic_totals_8_threads classic_fairness_4_threads \
    classic_threads_before_start classic_thread_no_hook_saw classic_no_write_after_stop \
    classic_restart_many classic_set_hz classic_program_owns_sigprof \
    classic_program_takes_sigprof_later threads_short_lived_10ms_1000hz \
    threads_thrd_create_covered safety_fork safety_exec safety_concurrent_callers \
    safety_eintr_restarted safety_limit_fds safety_buffer_unmapped_later \
    safety_stop_hygiene interpose_failed_exec_keeps_mask_and_signals \
    interpose_fork_child_never_spins_on_lock \
    pcsample_threads threads_reused_tid_covered
# (classic_thread_no_hook_saw was left out of the perf pass for a while:
# a thread the sweeper found was credited 12 ms more than its CPU time
# under load, each event signal counting one period of task-clock, which
# runs faster than the thread's CPU clock by the time the host steals.
# Signals are weighed by the thread's CPU clock since: 40 of 40 beside
# two busy loops.)
PERF_OPEN :=
test-perf: $(TEST_BIN) $(TEST_HELPERS) $(TEST_LIBS)
	@r=$$($(BUILD)/test/perfprobe); if [ "$$r" = ok ]; then \
	    echo "test-perf: the semantic suite on perf events (PROFIL_ENGINE=perf)"; \
	    PROFIL_ENGINE=perf $(TEST_BIN) $(filter-out $(PERF_OPEN),$(ENGINE_TESTS)); \
	else echo "test-perf skipped: perf events refused ($$r)"; fi
test-timer: $(TEST_BIN) $(TEST_HELPERS) $(TEST_LIBS)
	@echo "test-timer: the semantic suite on timers (PROFIL_ENGINE=timer)"
	PROFIL_ENGINE=timer $(TEST_BIN) $(ENGINE_TESTS)

# The profil command and the test cases made of test/cli/*.t
cli: $(PROFIL_BIN)
$(BUILD)/cli-obj/%.o: cli/%.c $(wildcard cli/*.h cli/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -DPROFIL_VERSION='"$(VERSION)"' -c $< -o $@
$(PROFIL_BIN): $(CLI_OBJ)
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $(CLI_OBJ) $(PROFIL_LIBS) $(LDFLAGS)
$(BUILD)/test/mkprofile: test/cli/mkprofile.c $(filter $(BUILD)/cli-obj/model/% $(BUILD)/cli-obj/format/%,$(CLI_OBJ)) | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -Icli -o $@ $^ -lz -ldeflate $(LDFLAGS)
$(BUILD)/test/test-cli-cases.c: $(CLI_CASES) test/cli/cases.awk | $(BUILD)/test
	awk -v dir='$(abspath test/cli)' -f test/cli/cases.awk $(CLI_CASES) </dev/null > $@.tmp && mv $@.tmp $@

# The signal handler's object may reference only the symbols in the
# allow-list: its contract (src/engine/sample.c) made mechanical.
# The files that run in signal context: sample.c with its writers
# (sample_write.c, sample_records.c), checked as one object (ld -r: their calls to each
# other are the handler's own), and its stack walk.
HANDLER_OBJ := $(BUILD)/obj/engine/handler-whole.o
$(HANDLER_OBJ): $(BUILD)/obj/engine/sample.o $(BUILD)/obj/engine/sample_write.o \
                $(BUILD)/obj/engine/sample_records.o
	$(LD) -r -o $@ $^
check-handler: $(HANDLER_OBJ) $(BUILD)/obj/unwind/unwind.o
	for o in $^; do sh tools/check-handler.sh $$o tools/handler-allow.txt || exit 1; done

# No object whose code may run on the helper thread calls the program's
# allocator (src/base/alloc.c): every part below gmon/, and the agent.
ALLOC_PARTS := base unwind engine process
ALLOC_OBJ   := $(filter $(ALLOC_PARTS:%=$(BUILD)/obj/%/%),$(LIB_OBJ)) \
               $(filter $(ALLOC_PARTS:%=$(BUILD)/agent-obj/%/%) $(BUILD)/agent-obj/agent-%,$(AGENT_OBJ))
check-alloc: $(ALLOC_OBJ)
	sh tools/check-alloc.sh tools/alloc-deny.txt $^

# The agent's small variables stay together, its large arrays after them
# (tools/check-small-data.sh, src/base/base.h LARGE_STATIC).
check-small-data: $(AGENT)
	sh tools/check-small-data.sh $(AGENT)

# No part calls into a part above it (tools/check-layout.sh: nm of every
# object of src/<part>/, parts in the order of tools/layout-order.txt).
check-layout: $(LIB_OBJ)
	sh tools/check-layout.sh $(BUILD)/obj tools/layout-order.txt

check-man:
	sh tools/check-man.sh man/*.[0-9]

# The contract is docs/contract.md, cited by the README and profil.h, and
# nothing names a specification outside the repository (issue 9).
check-contract:
	sh tools/check-contract.sh

# <profil.h> in C++, before and after <unistd.h>, with g++ and clang++.
check-cxx: lib
	sh tools/check-cxx.sh include $(BUILD)

deps:
	@sh tools/deps.sh

# Install into a scratch DESTDIR and build a user program with nothing but
# `pkg-config --cflags --libs profil`.
check-install: lib
	sh tools/check-install.sh

# The benchmark's programs are built (not run: `make bench`), so a change
# that breaks one is seen.  The runner last: its closing line ("N passed,
# N failed, N skipped") ends the output, and is what CI reads.
check: deps check-handler check-alloc check-small-data check-layout check-man check-cxx check-contract check-install check-symbols $(BENCH)
	$(MAKE) test-perf test-timer
	$(MAKE) test

# Safety stress (issue 3): minutes, not part of `make check`.
# tools/stress.sh runs the library's mix (test/storms.h) and `profil
# record` of short-lived processes side by side, and prints operations
# done and anomalies (must be 0).
STRESS_SECONDS ?= 120
stress: $(TEST_BIN) $(TEST_LIBS) $(PROFIL_BIN) $(AGENT)
	sh tools/stress.sh $(BUILD) $(STRESS_SECONDS)
	for i in 1 2 3 4 5; do $(TEST_BIN) safety_concurrent_callers safety_exec \
	    safety_fork safety_buffer_unmapped_later safety_stop_hygiene || exit 1; done

# The suite under tools, each in its own build directory (ASan+UBSan
# also runs the symbolizer's tests: it reads files from disk).
# PROFIL_TEST_TOOL lets a test that cannot run under a tool skip itself,
# saying why (test/safety.h, skip_under()).  ASan must let our SIGSEGV
# handler be installed (it chains to ASan's for faults not ours).
sanitize:
	ASAN_OPTIONS=allow_user_segv_handler=1:verify_asan_link_order=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	PROFIL_TEST_TOOL=asan $(MAKE) BUILD=$(BUILD)-asan OPT="-O1 -g" \
	    SAN="-fsanitize=address,undefined -fno-sanitize=nonnull-attribute \
	    -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test check-symbols
# TSan runs the library's tests (engine, threads, signals, concurrency),
# not the command's cases (cli_*): those run their programs under the
# agent, which is never sanitized, so TSan would only watch the
# single-threaded command, which ASan and valgrind already check.
tsan:
	TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0:suppressions=$(abspath tools/tsan.supp) \
	    PROFIL_TEST_TOOL=tsan \
	    $(MAKE) BUILD=$(BUILD)-tsan OPT="-O1 -g" SAN="-fsanitize=thread" tsan-run
tsan-run: $(TEST_BIN) $(TEST_HELPERS) $(TEST_LIBS)
	$(TEST_BIN) $(if $(TESTS),$(TESTS),$$(sed -n 's/^TEST(\(.*\))$$/\1/p' $(BUILD)/test/list.h | grep -v '^cli_'))
# CI runs the unit tests under valgrind (VALGRIND_TESTS): the bin
# arithmetic, range tables, argument validation of every form, gmon.out
# writing, the unwinder's tables, the agent's reading of seccomp filters,
# and the profil command (run under
# memcheck by test-cli.c) reading, reporting and converting profiles.
# Not the sampling tests: valgrind holds signals back and serialises
# threads, so their counts mean nothing there; nor fault recovery, whose
# deliberate faults memcheck reports as invalid accesses.
VALGRIND_TESTS = bins_edges bins_random_against_reference \
    gmon_after_stop_buffer_unmapped gmon_after_stop_buffer_freed \
    gmon_many_ranges_one_maps_read gmon_counts_over_65535 gmon_write_errors \
    gmon_failed_write_keeps_old_file gmon_unwritable_directory gmon_shared_object_file \
    multirange_aix_errors multirange_sprofil_errors multirange_tru64_errors \
    multirange_aix_terminator_limit multirange_sprofil_limit multirange_tru64_limit \
    unwind_cfi_rows unwind_fdes_out_of_order unwind_rows_order_merges_the_tail unwind_cfa_on_another_register unwind_cfa_saved_in_frame unwind_cfa_on_rbx seccomp_bpf_malformed seccomp_refusals_by_call \
    alloc_blocks_hold_what_they_say alloc_realloc_keeps_contents alloc_calloc_zeroes_and_checks \
    sort_inplace_orders_as_qsort sort_inplace_moves_whole_elements tasklist_lists_every_thread \
    $(shell sed -n 's/^TEST(\(cli_\(report\|errors\|gmon\|pprof_go\)_[0-9]*\))$$/\1/p' \
        $(BUILD)/test/list.h 2>/dev/null)
valgrind-unit: $(TEST_BIN) $(TEST_HELPERS) $(TEST_LIBS)
	$(MAKE) valgrind TESTS="$(VALGRIND_TESTS)"
valgrind: $(TEST_BIN) $(TEST_HELPERS) $(TEST_LIBS)
	@sh tools/valgrind.sh $(BUILD) $${TESTS:-$$(sed -n 's/^TEST(\(.*\))$$/\1/p' $(BUILD)/test/list.h)}

demo: deps all
	sh tools/demo.sh $(BUILD)

install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/*.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libprofil.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libprofil.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    profil.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/profil.pc
	for m in man/*.3; do install -m 644 $$m $(DESTDIR)$(MANDIR)/man3/; done
	# every function named in a page's NAME section gets a link to it
	for n in $(MAN3_LINKS); do ln -sf profil.3 $(DESTDIR)$(MANDIR)/man3/$$n.3; done
	@# section 1 pages only when there are some: no empty man1 directory
	$(if $(MAN1),install -d $(DESTDIR)$(MANDIR)/man1)
	$(if $(MAN1),install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/)
	@# the real system (no DESTDIR): make the new library known to the
	@# dynamic linker, so LD_PRELOAD=libprofil.so finds it
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
	    echo ldconfig; ldconfig; fi

# Removes exactly what install put there (same PREFIX and DESTDIR).
uninstall:
	rm -f $(foreach h,$(notdir $(wildcard include/*.h)),$(DESTDIR)$(INCLUDEDIR)/$(h))
	rm -f $(DESTDIR)$(LIBDIR)/libprofil.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	    $(DESTDIR)$(LIBDIR)/libprofil.so $(DESTDIR)$(LIBDIR)/libprofil.a \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/profil.pc
	rm -f $(foreach m,$(notdir $(wildcard man/*.3)) $(MAN3_LINKS:=.3),$(DESTDIR)$(MANDIR)/man3/$(m))
	rm -f $(foreach m,$(notdir $(MAN1)),$(DESTDIR)$(MANDIR)/man1/$(m))
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
	    echo ldconfig; ldconfig; fi

clean:
	rm -rf $(BUILD) build-*
	@# gmon.out files the examples (gprof_demo, monitor()) leave behind
	rm -f gmon.out gmon.out.* examples/gmon.out examples/gmon.out.*

help:
	@echo "make             the libraries and the examples, into build/ (or BUILD=dir)"
	@echo "make demo        build, then profile examples/demo.c and print where its time went"
	@echo "make check       the whole test suite, man page lint, C++ headers, an installed copy"
	@echo "make test        the test runner only; TESTS=\"name ...\" runs only those"
	@echo "make install     PREFIX=/usr/local DESTDIR=: library, headers, profil.pc, man pages"
	@echo "make uninstall   remove what install installed (same PREFIX and DESTDIR)"
	@echo "make bench       side-by-side benchmarks (bench/results.md)"
	@echo "make stress      the safety scenarios mixed for minutes (STRESS_SECONDS=120)"
	@echo "make sanitize    the suite under ASan+UBSan; make tsan: under TSan"
	@echo "make valgrind    each test under valgrind"
	@echo "make fuzz        each fuzz target for FUZZ_SECONDS=60 (clang, libFuzzer)"
	@echo "make real-suites real programs' own tests, unprofiled and under profil record"
	@echo "make clean       remove build directories and leftover gmon.out files"

# The profil command's symbolizer (cli/symbol): ELF and DWARF through
# elfutils (libdw-dev).  The command's link rule uses CLI_LIBS.
CLI_LIBS   += -ldw -lelf
# C++ and Rust mangled names: libiberty's demanglers, the ones binutils'
# c++filt uses, linked statically (Debian ships only libiberty.a)
CLI_LIBS   += -liberty
# The command itself takes elfutils and the compressors from their
# archives when all are here (Debian's -dev packages ship them), libc
# still shared: the record process then maps two libraries, not eight,
# and the loader's work on the six others was a sixth of its fixed cost
# (a /bin/true recording: 36 of 170 page faults, about 1 ms of 6-9).
# libdw still loads libdebuginfod with dlopen() when DEBUGINFOD_URLS is
# set.  Without the archives it links them shared, as the tests do.
STATIC_LIBS := libdw.a libelf.a libz.a liblzma.a libbz2.a libdeflate.a
STATIC_HERE := $(foreach a,$(STATIC_LIBS),$(filter /%,$(shell $(CC) -print-file-name=$(a))))
ifeq ($(words $(STATIC_HERE)),$(words $(STATIC_LIBS)))
PROFIL_LIBS := -Wl,-Bstatic -ldw -lelf -lz -llzma -lbz2 -ldeflate -liberty -Wl,-Bdynamic
else
PROFIL_LIBS = $(CLI_LIBS)
endif
SYM_SRC    := $(sort $(wildcard cli/symbol/*.c))

# Its tests: test/sym/symtest symbolizes the addresses the programs and
# libraries below print, offline, with every kind of file it must read.
SYM_T      := $(BUILD)/test/sym
SYMTEST    := $(BUILD)/test/symtest
SYM_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -O2 -g -gdwarf-5
SYM_LINK   := -L$(SYM_T) -Wl,-rpath,$(abspath $(SYM_T)) -lsymlib -lsymcxx -ldl
SYM_FILES  := $(addprefix $(SYM_T)/,symprog symprog-nopie libsymlib.so libsymcxx.so \
              symprog.debug symprog.stripped libsymlib.dynsym.so linked/symprog \
              libsymnest.so libsymnest.dynsym.so symprog.zdebug)

$(SYM_T) $(SYM_T)/linked/.debug:
	mkdir -p $@
$(SYM_T)/libsymlib.so: test/sym/symlib.c test/sym/symprog.h | $(SYM_T)
	$(CC) $(SYM_CFLAGS) -fPIC -shared -o $@ $<
$(SYM_T)/libsymnest.so: test/sym/symnest.s | $(SYM_T)
	$(CC) -shared -nostdlib -Wl,-z,noexecstack -o $@ $<
$(SYM_T)/libsymnest.dynsym.so: $(SYM_T)/libsymnest.so
	strip --strip-all -o $@ $<
$(SYM_T)/libsymcxx.so: test/sym/symcxx.cc test/sym/symprog.h | $(SYM_T)
	$(CXX) -Wall -Wextra -Werror -O2 -g -gdwarf-5 -fPIC -shared -o $@ $<
$(SYM_T)/symprog: test/sym/symprog.c test/sym/symprog.h $(SYM_T)/libsymlib.so $(SYM_T)/libsymcxx.so
	$(CC) $(SYM_CFLAGS) -o $@ $< $(SYM_LINK)
$(SYM_T)/symprog-nopie: test/sym/symprog.c test/sym/symprog.h $(SYM_T)/libsymlib.so $(SYM_T)/libsymcxx.so
	$(CC) $(SYM_CFLAGS) -fno-pie -no-pie -o $@ $< $(SYM_LINK)
# stripped copies: same build-id, same layout, symbols elsewhere or nowhere
$(SYM_T)/symprog.debug: $(SYM_T)/symprog
	objcopy --only-keep-debug $< $@
# its debuginfo with zlib-compressed sections, as Debian ships it
$(SYM_T)/symprog.zdebug: $(SYM_T)/symprog
	objcopy --only-keep-debug --compress-debug-sections=zlib $< $@
$(SYM_T)/symprog.stripped: $(SYM_T)/symprog
	strip --strip-all -o $@ $<
# linked by LLVM's lld when it is installed (its .eh_frame_hdr is typed
# X86_64_UNWIND and comes after .eh_frame), stripped: test/sym's FDE names
ifneq ($(shell command -v ld.lld 2>/dev/null),)
SYM_FILES  += $(SYM_T)/symprog.lld.stripped
endif
$(SYM_T)/symprog.lld.stripped: test/sym/symprog.c test/sym/symprog.h $(SYM_T)/libsymlib.so $(SYM_T)/libsymcxx.so
	$(CC) $(SYM_CFLAGS) -fuse-ld=lld -o $@.tmp $< $(SYM_LINK)
	strip --strip-all -o $@ $@.tmp
	rm -f $@.tmp
$(SYM_T)/libsymlib.dynsym.so: $(SYM_T)/libsymlib.so
	strip --strip-all -o $@ $<
$(SYM_T)/linked/symprog: $(SYM_T)/symprog | $(SYM_T)/linked/.debug
	objcopy --only-keep-debug $< $(SYM_T)/linked/.debug/symprog.debug
	strip --strip-all -o $@.tmp $<
	objcopy --add-gnu-debuglink=$(SYM_T)/linked/.debug/symprog.debug $@.tmp $@
	rm -f $@.tmp

SYM_TEST_SRC := test/sym/symtest.c test/sym/symcases.c test/sym/symcases-more.c \
                test/sym/symcases-table.c test/sym/symcases-stubs.c \
                test/sym/symcases-cache.c test/sym/symcases-lines.c \
                test/sym/symcases-kids.c test/sym/symcases-addrs.c \
                test/sym/symcases-oom.c test/sym/symcases-go.c \
                test/sym/symcases-spans.c
$(SYMTEST): $(SYM_TEST_SRC) test/sym/symtest.h $(SYM_SRC) \
            cli/symbol/*.h cli/model/profile.c cli/model/profile.h cli/model/index.c \
            cli/model/index.h | $(BUILD)/test
	$(CC) $(BASEFLAGS) $(CFLAGS) -Itest/sym -DSYM_BIN='"$(abspath $(SYM_T))"' \
	    -DSYM_SRCDIR='"$(abspath test/sym)"' -o $@ $(SYM_TEST_SRC) \
	    $(SYM_SRC) cli/model/profile.c cli/model/index.c $(CLI_LIBS) $(LDFLAGS)

# libprofil.so is one of the modules the line and DIE caches are checked on
check-symbols: $(SYMTEST) $(SYM_FILES) $(BUILD)/libprofil.so
	$(SYMTEST) $(SYM_TESTS)

# Programs `profil record` tests profile (test/rec/): PIE and non-PIE, a
# linked library, a dlopen'ed plugin, a stripped copy whose debuginfo is
# a separate file found by .gnu_debuglink, and a C++ program.
$(REC_T):
	mkdir -p $@
$(REC_T)/lib%.so: test/rec/lib%.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -fPIC -shared -o $@ $<
# DT_RPATH (not RUNPATH), naming the plugin's directory: test/cli/record.t
$(REC_T)/librecrpath.so: test/rec/librecrpath.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -fPIC -shared -Wl,--disable-new-dtags -Wl,-rpath,$(abspath $(REC_T)) -o $@ $< -ldl
$(REC_T)/rec-prog: test/rec/rec-prog.c test/rec/rec.h test/rawsig.h $(REC_T)/librec.so
	$(CC) $(REC_CFLAGS) -o $@ $< $(REC_LINK)
$(REC_T)/rec-prog-nopie: test/rec/rec-prog.c test/rec/rec.h test/rawsig.h $(REC_T)/librec.so
	$(CC) $(REC_CFLAGS) -fno-pie -no-pie -o $@ $< $(REC_LINK)
# no unwind tables, frame pointers (as Chromium is built): test/cli/record.t
$(REC_T)/rec-prog-fp: test/rec/rec-prog.c test/rec/rec.h test/rawsig.h $(REC_T)/librec.so
	$(CC) $(REC_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables \
	    -fno-omit-frame-pointer -o $@ $< $(REC_LINK)
# built with AddressSanitizer (gcc: libasan.so, which wants to be loaded
# first): test/cli/record.t
$(REC_T)/rec-asan: test/rec/rec-prog.c test/rec/rec.h test/rawsig.h $(REC_T)/librec.so
	$(CC) $(REC_CFLAGS) -fsanitize=address -o $@ $< $(REC_LINK)
# passes for a Go program (its note, a fatal SIGTRAP): test/cli/record.t
$(REC_T)/rec-go: test/rec/rec-prog.c test/rec/rec.h test/rawsig.h $(REC_T)/librec.so
	$(CC) $(REC_CFLAGS) -DREC_GO -o $@ $< $(REC_LINK)
# without a GNU build-id: its unwind table is cached by its file's
# identity (test/cli/record.t, run through the dynamic loader by name)
$(REC_T)/rec-prog-nobid: test/rec/rec-prog.c test/rec/rec.h test/rawsig.h $(REC_T)/librec.so
	$(CC) $(REC_CFLAGS) -Wl,--build-id=none -o $@ $< $(REC_LINK)
$(REC_T)/rec-prog-stripped: $(REC_T)/rec-prog
	objcopy --only-keep-debug $< $@.debug
	objcopy --strip-all --add-gnu-debuglink=$@.debug $< $@
$(REC_T)/rec-cxx: test/rec/rec-cxx.cc test/rec/rec.h | $(REC_T)
	$(CXX) -O2 -g -Wall -Wextra -Werror -o $@ $<
$(REC_T)/rec-jit: test/rec/rec-jit.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# attaches to a running program as gdb -p does: test/cli/record.t
$(REC_T)/rec-tracer: test/rec/rec-tracer.c | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# reaps children every way the agent interposes, and ways it cannot see:
# test/cli/record.t
$(REC_T)/rec-wait: test/rec/rec-wait.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# filters its own system calls as Chromium's sandbox does: test/cli/record.t
$(REC_T)/rec-seccomp: test/rec/rec-seccomp.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -pthread -o $@ $<
# blocks and wakes at every exchange with its child: test/cli/record.t
$(REC_T)/rec-pingpong: test/rec/rec-pingpong.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# frames found as OpenSSL's assembly finds them: test/cli/record.t
$(REC_T)/rec-asmcfa: test/rec/rec-asmcfa.c test/rec/asmcfa.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# a single-threaded program's own lock-free allocator: test/cli/record.t
$(REC_T)/rec-ownheap: test/rec/rec-ownheap.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $< -ldl
# when the agent makes its helper thread: test/cli/record.t
$(REC_T)/rec-lazy: test/rec/rec-lazy.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -pthread -o $@ $<
# io_uring reads run by the kernel's worker threads: test/cli/record.t
$(REC_T)/rec-uring: test/rec/rec-uring.c | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# runs code from a second mapping of its own text: test/cli/record.t
$(REC_T)/rec-alias: test/rec/rec-alias.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# defines a getenv of its own: test/cli/record.t
$(REC_T)/rec-getenv: test/rec/rec-getenv.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# prints what it sees of its own process, profiled and not: test/cli/record.t
$(REC_T)/rec-state: test/rec/rec-state.c | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $< -lrt
# its library burns CPU in a constructor, before main: test/cli/record.t
$(REC_T)/rec-ctor: test/rec/rec-ctor.c test/rec/rec.h $(REC_T)/librecctor.so $(REC_T)/librecargs.so | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $< -L$(REC_T) -Wl,-rpath,$(abspath $(REC_T)) -lrecctor -ldl
# works on a 2 KiB stack of its own, as a goroutine does: test/cli/record.t
$(REC_T)/rec-smallstack: test/rec/rec-smallstack.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
# resets every signal by syscall() in a forked child: test/cli/record.t
$(REC_T)/rec-rawsig: test/rec/rec-rawsig.c test/rec/rec.h | $(REC_T)
	$(CC) $(REC_CFLAGS) -o $@ $<
$(REC_T)/rec-static: test/rec/rec-static.c | $(REC_T)
	$(CC) -O2 -static -o $@ $<
# a Go program's source, which test/cli/record.t builds when go is there
$(REC_T)/recgo.go: test/rec/recgo.go | $(REC_T)
	cp $< $@
$(REC_T)/recgolib.go: test/rec/recgolib.go | $(REC_T)
	cp $< $@
$(REC_T)/recgolib-main.c: test/rec/recgolib-main.c | $(REC_T)
	cp $< $@
$(REC_T)/recgo-build: test/rec/recgo-build.sh | $(REC_T)
	cp $< $@
rec-progs: $(REC_FILES)

# The HTML report's style and script (cli/format/html/*.css, *.js) are
# real files, compiled into the command as C strings by embed.awk.
HTML_ASSETS := $(sort $(wildcard cli/format/html/*.css cli/format/html/*.js))
HTML_ASSETS_O := $(BUILD)/cli-obj/format/html_assets.o
CLI_OBJ    += $(HTML_ASSETS_O)
$(PROFIL_BIN) $(BUILD)/test/mkprofile: $(HTML_ASSETS_O)
$(BUILD)/cli-gen/html_assets.c: $(HTML_ASSETS) cli/format/html/embed.awk
	@mkdir -p $(dir $@)
	awk -f cli/format/html/embed.awk $(HTML_ASSETS) > $@.tmp && mv $@.tmp $@
$(HTML_ASSETS_O): $(BUILD)/cli-gen/html_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) $(CFLAGS) -c $< -o $@
# Its tests (test/cli/html.t): fixtures linked into mkprofile, and the
# headless-browser driver test/cli/html-check.sh as $(BUILD)/test/html-check.
$(BUILD)/test/mkprofile: test/cli/mkprofile-html.c
test: $(BUILD)/test/html-check $(BUILD)/test/busy.py $(BUILD)/examples/demo
$(BUILD)/test/html-check: test/cli/html-check.sh | $(BUILD)/test
	cp $< $@ && chmod +x $@
$(BUILD)/test/busy.py: examples/busy.py | $(BUILD)/test
	cp $< $@

# Fuzzing (issue 15, fuzz/): libFuzzer targets, built with clang into
# $(BUILD)-fuzz and run FUZZ_SECONDS each from their seed corpus
# (fuzz/corpus/T, committed); what they find goes to $(BUILD)-fuzz/corpus.
# The library is linked shared, so that its interposers (sigaction,
# pthread_create) come after ASan's; it takes the sanitizer runtime from
# the program (-z undefs: clang links that runtime into programs only).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := pprof ring forms bins gmon addrs gopcln
FUZZ_SAN   := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=nonnull-attribute \
              -fno-sanitize-recover=undefined -fno-omit-frame-pointer
.PHONY: fuzz fuzz-build
fuzz:
	$(MAKE) BUILD=$(BUILD)-fuzz CC=clang OPT="-O1 -g" SAN="$(FUZZ_SAN)" \
	    LDFLAGS="-Wl,-z,undefs" fuzz-build
	sh fuzz/run.sh $(BUILD)-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz-%)
FUZZ_CLI_OBJ = $(filter-out $(BUILD)/cli-obj/main.o,$(CLI_OBJ))
# fuzz-addrs reads kept answers, which name the build of their reader:
# its build-id, asked for here (the symbolizer keeps nothing without one).
$(BUILD)/fuzz/fuzz-pprof $(BUILD)/fuzz/fuzz-ring $(BUILD)/fuzz/fuzz-addrs \
$(BUILD)/fuzz/fuzz-gopcln: $(BUILD)/fuzz/fuzz-%: \
    fuzz/fuzz-%.c $(FUZZ_CLI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -fsanitize=fuzzer -Icli -Wl,--build-id -o $@ $^ $(CLI_LIBS) -lm \
	    $(LDFLAGS)
$(BUILD)/fuzz/fuzz-forms: fuzz/fuzz-forms.c $(SHLIB) $(BUILD)/libprofil.so
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -fsanitize=fuzzer -o $@ $< $(LINK_PROFIL) -lm $(LDFLAGS)
# ptable.o takes its memory and its sort from base/ (alloc.c, sort.c)
FUZZ_BASE_OBJ := $(BUILD)/obj/base/ptable.o $(BUILD)/obj/base/alloc.o $(BUILD)/obj/base/sort.o
$(BUILD)/fuzz/fuzz-bins: fuzz/fuzz-bins.c $(FUZZ_BASE_OBJ) $(BUILD)/obj/forms/forms_overlap.o
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -fsanitize=fuzzer -o $@ $^ -lm $(LDFLAGS)
# fuzz-gmon compiles gmon/gmon_bins.c itself, with 4096 cells a grid at most.
$(BUILD)/fuzz/fuzz-gmon: fuzz/fuzz-gmon.c src/gmon/gmon_bins.c $(BUILD)/obj/gmon/gmon_file.o \
                         $(FUZZ_BASE_OBJ) src/gmon/gmon.h src/base/base.h src/base/bin.h
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -fsanitize=fuzzer -DGHIST_MAX_CELLS='((uint64_t)1 << 12)' \
	    -o $@ $(filter-out %.h,$^) -lm $(LDFLAGS)

# Real programs' own test suites (issues 9 and 15): CPython's signal,
# threading and subprocess tests, compressors and sort, each unprofiled,
# under `profil record`, and (CPython) profiling itself through profil()
# with libselfprof.so; the results must be identical (tools/real-suites.sh).
.PHONY: real-suites
real-suites: $(PROFIL_BIN) $(AGENT) $(BUILD)/test/libselfprof.so
	sh tools/real-suites.sh $(BUILD)
