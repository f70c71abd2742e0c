# kgate: the one build.  `make help` lists the targets.
#
#   make                 kgate and libkgate-collector.so in $(BUILD)/
#   make test            unit (cmocka) and end-to-end (TAP) tests, through prove
#   make bench           kgate's own speed against its anchors (benchmarks/self)
#   make faults          slow fault injection: 200 SIGKILLs, 10 GB records (tests/faults)
#   make benchmarks      the CUDA benchmark suite (needs nvcc)
#   make demo            the main job once: a demo gate on an embedded SQLite file
#   make test-gpu        collector against ncu on a real GPU
#   make install         PREFIX=/usr/local DESTDIR=
#   V=1                  show full commands
#   SAN=address,undefined  sanitizer build (in build-san/)
#   make fuzz            every parser under libFuzzer, FUZZ_TIME=60 s each (clang, build-fuzz/),
#                        then the whole binary under AFL++, FUZZ_AFL_TIME=60 s each (build-afl/)
#   make fuzz-smoke      the same, a few seconds each
#   make valgrind        make test's tests with kgate and the unit tests under memcheck
#   make analyze         gcc -fanalyzer over src/ and the tests' programs, failing on untriaged warnings

CC      ?= cc
CUDA    ?= /usr/local/cuda
NVCC    ?= $(CUDA)/bin/nvcc
PREFIX  ?= /usr/local
DESTDIR ?=

ifneq ($(SAN),)
BUILD   ?= build-san
SANFLAGS = -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD   ?= build
SANFLAGS =
endif

ifeq ($(V),1)
Q =
else
Q = @
endif

WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -Iinclude -MMD -MP
# libyaml, SQLite, jansson and zlib are linked statically so that the binary runs on
# a GPU machine that has none of them; libcurl and libstdc++ (the demangler) are
# loaded with dlopen when first needed (http.c, demangle.c), not linked.
STATIC_LIBS = -Wl,-Bstatic -lyaml -lsqlite3 -ljansson -lz -Wl,-Bdynamic
LDLIBS   = $(STATIC_LIBS) -lm -lpthread -ldl
LDFLAGS ?=
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

# The CLI: main.c and cmd_*.c; everything else in src/ is the library core.
CLI_SRC  = src/main.c $(wildcard src/cmd_*.c)
LIB_SRC  = $(filter-out $(CLI_SRC),$(wildcard src/*.c)) $(wildcard src/import/*.c)
CLI_OBJ  = $(CLI_SRC:src/%.c=$(BUILD)/obj/%.o)
LIB_OBJ  = $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)

# The collector: only code that includes CUPTI headers; libcupti and libc only.
COLL_SRC = $(wildcard src/collector/*.c)
COLL_OBJ = $(COLL_SRC:src/collector/%.c=$(BUILD)/obj/collector/%.o)
COLL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden \
	-Iinclude -Isrc/collector/shim -I$(CUDA)/include -I$(CUDA)/extras/CUPTI/include -MMD -MP
COLL_LIBDIR = $(CUDA)/targets/x86_64-linux/lib
COLL_LDLIBS = -L$(COLL_LIBDIR) -L$(CUDA)/extras/CUPTI/lib64 -lcupti -lnvperf_host -lpthread -ldl \
	-Wl,-rpath,'$$ORIGIN' -Wl,-rpath,$(COLL_LIBDIR)

UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
E2E      = $(wildcard tests/e2e/*.t)

KGATE    = $(BUILD)/kgate
COLLECTOR = $(if $(COLL_SRC),$(BUILD)/libkgate-collector.so)

# The collector's test doubles (tests/collector/): a stand-in libcupti.so.13
# and the programs that drive the collector without a GPU; collector.t runs
# them from $(BUILD)/tests/collector/.  Built with the collector's flags
# (CUDA's and the shim's headers), so only where the collector is built.
CTEST_DIR = $(BUILD)/tests/collector
CTEST_BIN = $(if $(COLL_SRC),$(CTEST_DIR)/libcupti.so.13 $(CTEST_DIR)/libcuda.so.1 $(CTEST_DIR)/fake_app \
	$(CTEST_DIR)/query_driver $(CTEST_DIR)/inject_driver $(CTEST_DIR)/nvtx_only)
# Other programs the end-to-end tests run (tests/progs/), with the CLI's
# flags but no sanitizer (one is installed setuid).
PTEST_BIN = $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(wildcard tests/progs/*.c))
PTEST_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude -MMD -MP -MF $@.d
CTEST_CFLAGS = $(filter-out -fvisibility=hidden -fPIC,$(COLL_CFLAGS)) -MF $@.d

.PHONY: all test run-tests valgrind run-valgrind analyze unit e2e bench faults benchmarks demo test-gpu install clean help test-progs
all: $(KGATE) $(COLLECTOR)

# config.c assembles thresholds/default.yaml into the binary (.incbin).
$(BUILD)/obj/config.o: thresholds/default.yaml

$(BUILD)/libkgate.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(KGATE): $(CLI_OBJ) $(BUILD)/libkgate.a
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libkgate.a $(LDLIBS)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/obj/collector/%.o: src/collector/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(COLL_CFLAGS) -c -o $@ $<

$(BUILD)/libkgate-collector.so: $(COLL_OBJ)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) -shared -o $@ $^ $(COLL_LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libkgate.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libkgate.a -lcmocka $(LDLIBS)

# A stand-in for NVML (synthetic values from the environment), so that the
# GPU-state reads are tested on machines without a driver.
NVML_DOUBLE = $(BUILD)/tests/libnvml-double.so
$(NVML_DOUBLE): tests/nvml/nvml_double.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC -shared -o $@ $<

test-progs: $(CTEST_BIN) $(PTEST_BIN) $(NVML_DOUBLE)

$(BUILD)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(PTEST_CFLAGS) $(LDFLAGS) -o $@ $<

# The stand-in libcupti is not instrumented: it is loaded into programs that
# are not either (a sanitizer runtime must come first in a process).
$(CTEST_DIR)/libcupti.so.13: tests/collector/fake_cupti.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CTEST_CFLAGS) -fPIC -shared -Wl,-soname,libcupti.so.13 -o $@ $<

# The stand-in driver passes its calls to the stand-in libcupti's (it is
# linked against it, found beside it at run time).
$(CTEST_DIR)/libcuda.so.1: tests/collector/fake_cuda.c $(CTEST_DIR)/libcupti.so.13
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CTEST_CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $< \
	  -L$(CTEST_DIR) -l:libcupti.so.13

# fake_app links libstdc++ so that the collector finds __cxa_demangle.
$(CTEST_DIR)/fake_app: tests/collector/fake_app.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CTEST_CFLAGS) -o $@ $< -ldl -lpthread \
	  -Wl,--no-as-needed -lstdc++

$(CTEST_DIR)/%: tests/collector/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CTEST_CFLAGS) -o $@ $< -ldl

-include $(CTEST_BIN:%=%.d) $(PTEST_BIN:%=%.d)

# Every test (cmocka unit tests print TAP; e2e tests are shell TAP scripts)
# runs through one prove, which prints the summary line.
test: deps
	$(Q)$(MAKE) --no-print-directory run-tests

# After a failure, the end-to-end tests' log of what failed (with the
# command's stderr) is printed last, where a CI log shows it.
TEST_LOG = $(abspath $(BUILD))/test-failures.log
run-tests: all $(UNIT_BIN) $(CTEST_BIN) $(PTEST_BIN) $(NVML_DOUBLE)
	$(Q)rm -f "$(TEST_LOG)"; CMOCKA_MESSAGE_OUTPUT=TAP KGATE="$(abspath $(KGATE))" \
	  KGATE_COLLECTOR="$(abspath $(COLLECTOR))" KGATE_BUILD="$(abspath $(BUILD))" \
	  KGATE_SRC="$(CURDIR)" KGATE_TEST_LOG="$(TEST_LOG)" \
	  prove --exec '' $(PROVEFLAGS) $(UNIT_BIN) $(E2E) || \
	  { [ ! -s "$(TEST_LOG)" ] || { echo "== what failed:"; cat "$(TEST_LOG)"; }; exit 1; }

# ---- valgrind: the same tests, kgate and the unit tests under memcheck ----
# The unit test binaries run under valgrind directly; the end-to-end tests'
# $KGATE is a wrapper that execs valgrind on the real binary.  Any memcheck
# error or definite/indirect leak exits 99, which fails the test.  Tests
# whose assertions are bound to wall time (busy timeouts, kills after a
# delay) see KGATE_UNDER_VALGRIND=1 and skip those assertions.  Each
# process's report goes to $(VG_LOGS)/PID.log (empty when clean, so that a
# report is seen even where a test ignores a command's exit status or
# stderr); the target fails when any is not empty.  The collector library
# is not wrapped (it runs inside the benchmark).
VALGRIND      ?= valgrind
VG_LOGS        = $(abspath $(BUILD))/valgrind-logs
VALGRIND_OPTS  = --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect -q \
	--suppressions=$(CURDIR)/tests/valgrind.supp --log-file=$(VG_LOGS)/%p.log
VG_KGATE       = $(BUILD)/valgrind/kgate
VG_UNIT        = $(UNIT_BIN:$(BUILD)/tests/%=$(BUILD)/valgrind/%)

# A wrapper script: exec valgrind, with the options above, on the binary.
vg_wrap = printf '\043!/bin/sh\n\043 generated by make valgrind: %s under memcheck\nexec %s %s %s "$$@"\n' \
	  '$(notdir $(1))' '$(VALGRIND)' '$(VALGRIND_OPTS)' '$(abspath $(1))' > $@.tmp && \
	  chmod 755 $@.tmp && mv $@.tmp $@

# (named kgate, as messages that quote the command line name it)
$(VG_KGATE): $(KGATE) Makefile
	@mkdir -p $(@D)
	$(Q)$(call vg_wrap,$(KGATE))

$(BUILD)/valgrind/%: $(BUILD)/tests/% Makefile
	@mkdir -p $(@D)
	$(Q)$(call vg_wrap,$<)

valgrind: deps
	$(Q)$(MAKE) --no-print-directory run-valgrind

VG_TEST_LOG = $(abspath $(BUILD))/valgrind-failures.log
run-valgrind: all $(UNIT_BIN) $(CTEST_BIN) $(PTEST_BIN) $(NVML_DOUBLE) $(VG_KGATE) $(VG_UNIT)
	$(Q)rm -rf "$(VG_TEST_LOG)" "$(VG_LOGS)"; mkdir -p "$(VG_LOGS)"; st=0; \
	  CMOCKA_MESSAGE_OUTPUT=TAP KGATE="$(abspath $(VG_KGATE))" \
	  KGATE_COLLECTOR="$(abspath $(COLLECTOR))" KGATE_BUILD="$(abspath $(BUILD))" \
	  KGATE_SRC="$(CURDIR)" KGATE_TEST_LOG="$(VG_TEST_LOG)" KGATE_UNDER_VALGRIND=1 \
	  prove --exec '' $(PROVEFLAGS) $(VG_UNIT) $(E2E) || \
	  { [ ! -s "$(VG_TEST_LOG)" ] || { echo "== what failed:"; cat "$(VG_TEST_LOG)"; }; st=1; }; \
	  n=$$(ls "$(VG_LOGS)" | wc -l); bad=$$(find "$(VG_LOGS)" -type f -size +0 | wc -l); \
	  echo "valgrind: $$n processes checked, $$bad with a report"; \
	  for f in $$(find "$(VG_LOGS)" -type f -size +0); do echo "== $$f"; cat "$$f"; done; \
	  [ $$st = 0 ] && [ $$bad = 0 ]

# gcc's static analyzer, not part of the normal build: fails on a warning
# that tests/analyzer.triage does not list (docs/RELIABILITY.md).
ANALYZE_CC ?= gcc
analyze:
	$(Q)sh scripts/analyze.sh '$(ANALYZE_CC)' '$(filter-out -Werror -MMD -MP,$(ALL_CFLAGS))' \
	  '$(filter-out -Werror -MMD -MP,$(COLL_CFLAGS))'

bench: all
	$(Q)KGATE="$(abspath $(KGATE))" KGATE_BUILD="$(abspath $(BUILD))" KGATE_SRC="$(CURDIR)" \
	  sh benchmarks/self/run.sh

# Not part of "make test" or CI: minutes of SIGKILLs and a 10 GB stream.
faults: all
	$(Q)set -e; for f in tests/faults/*.sh; do \
	  case $$f in */gen-records.sh) continue ;; esac; \
	  echo "== $$f"; KGATE="$(abspath $(KGATE))" KGATE_SRC="$(CURDIR)" sh $$f; done

benchmarks:
	$(Q)$(MAKE) -C benchmarks BUILD="$(abspath $(BUILD))/benchmarks" NVCC="$(NVCC)" CUDA="$(CUDA)"

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)KGATE="$(abspath $(KGATE))" KGATE_BUILD="$(abspath $(BUILD))" sh scripts/demo.sh

test-gpu: all benchmarks
	$(Q)KGATE="$(abspath $(KGATE))" KGATE_BUILD="$(abspath $(BUILD))" sh scripts/test-gpu.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/kgate \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/kgate/thresholds
	install -m 755 $(KGATE) $(DESTDIR)$(PREFIX)/bin/kgate
	$(if $(COLLECTOR),install -m 755 $(COLLECTOR) $(DESTDIR)$(PREFIX)/lib/kgate/)
	install -m 644 man/kgate.1 $(DESTDIR)$(PREFIX)/share/man/man1/kgate.1
	install -m 644 thresholds/*.yaml $(DESTDIR)$(PREFIX)/share/kgate/thresholds/
	install -m 755 scripts/pre-push $(DESTDIR)$(PREFIX)/share/kgate/pre-push

clean:
	rm -rf build build-san build-fuzz build-afl

help:
	@sed -n '2,17p' Makefile | sed 's/^# \{0,1\}//'

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(COLL_OBJ:.o=.d)

# ---- fuzzing: tests/fuzz/fuzz_NAME.c, one libFuzzer harness per parser ----
# (fuzz_import.c is one harness for every importer of src/import/import.c's table)
# The library is rebuilt with clang and coverage instrumentation in
# build-fuzz/; each harness runs FUZZ_TIME seconds on build-fuzz/corpus/NAME,
# seeded from the test fixtures (build-fuzz/seeds/NAME) and, when present,
# tests/fuzz/NAME.dict.  Crashes, leaks and hangs are written to
# build-fuzz/artifacts/ and fail the target.
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 60
FUZZ_SMOKE_TIME ?= 4
FUZZ_BUILD  = build-fuzz
FUZZ_SAN    = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g $(FUZZ_SAN) -Iinclude -MMD -MP
FUZZ_SRC    = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES  = $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_BIN    = $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)
FUZZ_OBJ    = $(LIB_SRC:src/%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_FLAGS ?=

# Seeds per harness: the real fixtures of the parser's format, and one
# seed per line of tests/fuzz/NAME.seeds where there is one.
fuzz_seeds_suite      = tests/fixtures/config/suite-*.yaml $(wildcard kgate.yaml)
fuzz_seeds_thresholds = tests/fixtures/config/th-*.yaml thresholds/*.yaml
fuzz_seeds_records    = tests/fixtures/records/*.jsonl
fuzz_seeds_ncu_csv    = tests/fixtures/h200/*.csv tests/fixtures/ncu/*.csv tests/fixtures/ncu/*.log \
                        tests/fixtures/ncu/*.out tests/fixtures/ncu/*.res
fuzz_seeds_nvbench    = tests/fixtures/nvbench/synthetic_jsonbin.json
fuzz_seeds_gbench     = tests/fixtures/gbench/*.json
fuzz_seeds_import     = $(fuzz_seeds_records) $(fuzz_seeds_ncu_csv) \
	tests/fixtures/kineto/step_based_*.json.gz tests/fixtures/kineto/benchmark_result_*.json.gz \
	$(fuzz_seeds_gbench)
# and, made from the fixtures (small, so that the fuzzer runs fast): an nsys
# export of only what the importer reads, and a plain Kineto trace of only
# the events it reads
FUZZ_NSYS_SEED = tests/fixtures/nsys/nvfuser_h200_2025_report1.sqlite
FUZZ_KINETO_SEED = tests/fixtures/kineto/step_based_trace_2543932.json.gz

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-run
fuzz-build: $(FUZZ_BIN)

$(FUZZ_BUILD)/obj/config.o: thresholds/default.yaml

$(FUZZ_BUILD)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/libkgate.a: $(FUZZ_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_BUILD)/libkgate.a
	$(if $(Q),@echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -o $@ $< \
	  $(FUZZ_BUILD)/libkgate.a $(LDLIBS)

# One harness after another, each a single process.
fuzz-run: $(FUZZ_BIN)
	$(Q)set -e; for n in $(FUZZ_NAMES); do \
	  rm -rf $(FUZZ_BUILD)/seeds/$$n; \
	  mkdir -p $(FUZZ_BUILD)/seeds/$$n $(FUZZ_BUILD)/corpus/$$n $(FUZZ_BUILD)/artifacts/$$n; \
	  case $$n in \
	  suite) seeds="$(fuzz_seeds_suite)";; thresholds) seeds="$(fuzz_seeds_thresholds)";; \
	  import) seeds="$(fuzz_seeds_import)";; nvbench) seeds="$(fuzz_seeds_nvbench)";; \
	  gbench) seeds="$(fuzz_seeds_gbench)";; *) seeds="";; esac; \
	  [ $$n != kineto ] || python3 -c 'import gzip, json, sys; d = json.load(gzip.open(sys.argv[1], "rt")); \
	      d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") in ("kernel", "gpu_user_annotation", "cuda_profiler_range") or e.get("name") == "process_name"][:400]; \
	      print(json.dumps(d, indent=1))' $(FUZZ_KINETO_SEED) > $(FUZZ_BUILD)/seeds/$$n/kineto.json; \
	  for f in $$seeds; do cp "$$f" $(FUZZ_BUILD)/seeds/$$n/; done; \
	  if [ $$n = import ] || [ $$n = nsys ]; then \
	    sqlite3 $(FUZZ_BUILD)/seeds/$$n/nsys.sqlite "PRAGMA page_size=512; ATTACH '$(FUZZ_NSYS_SEED)' AS s; \
	      CREATE TABLE StringIds AS SELECT * FROM s.StringIds WHERE id IN (SELECT demangledName FROM s.CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT mangledName FROM s.CUPTI_ACTIVITY_KIND_KERNEL); \
	      CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM s.CUPTI_ACTIVITY_KIND_KERNEL; \
	      CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME AS SELECT * FROM s.CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN (SELECT correlationId FROM s.CUPTI_ACTIVITY_KIND_KERNEL); \
	      CREATE TABLE NVTX_EVENTS AS SELECT n.* FROM s.NVTX_EVENTS n JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON n.globalTid = r.globalTid AND n.start <= r.start AND n.end >= r.end; \
	      CREATE TABLE TARGET_INFO_GPU AS SELECT * FROM s.TARGET_INFO_GPU; DETACH s; VACUUM;"; \
	    python3 -c 'import gzip, json, sys; d = json.load(gzip.open(sys.argv[1], "rt")); \
	      d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") in ("kernel", "gpu_user_annotation") or e.get("name") == "process_name"]; \
	      print(json.dumps(d, indent=1))' $(FUZZ_KINETO_SEED) > $(FUZZ_BUILD)/seeds/$$n/kineto.json; \
	  fi; \
	  [ $$n != nsys ] || rm -f $(FUZZ_BUILD)/seeds/$$n/kineto.json; \
	  if [ $$n = nvbench ]; then s=$(FUZZ_BUILD)/seeds/$$n/jsonbin; \
	    sed 's#synthetic_jsonbin.json-\(freqs-\)*bin/[0-9]*.bin#f.json-\1bin/0.bin#' \
	      tests/fixtures/nvbench/synthetic_jsonbin.json > $$s; printf '\000' >> $$s; \
	    cat tests/fixtures/nvbench/synthetic_jsonbin.json-bin/0.bin >> $$s; fi; \
	  if [ -f tests/fuzz/$$n.seeds ]; then i=0; while IFS= read -r line; do \
	    i=$$((i + 1)); printf '%s' "$$line" > $(FUZZ_BUILD)/seeds/$$n/seed$$i; \
	  done < tests/fuzz/$$n.seeds; fi; \
	  d=$$n; case $$n in kineto|nsys) d=import;; esac; \
	  dict=; [ -f tests/fuzz/$$d.dict ] && dict=-dict=tests/fuzz/$$d.dict; \
	  echo "== fuzz_$$n: $(FUZZ_TIME) s =="; \
	  $(FUZZ_BUILD)/fuzz_$$n -max_total_time=$(FUZZ_TIME) -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$n/ $$dict $(FUZZ_FLAGS) \
	    $(FUZZ_BUILD)/corpus/$$n $(FUZZ_BUILD)/seeds/$$n \
	    > $(FUZZ_BUILD)/fuzz_$$n.log 2>&1 || { tail -n 40 $(FUZZ_BUILD)/fuzz_$$n.log; exit 1; }; \
	  grep -E '^(Done|#[0-9]+.*DONE)|stat::number_of_executed_units' $(FUZZ_BUILD)/fuzz_$$n.log; \
	done

# ---- AFL++ on the whole binary: kgate itself, built with afl-clang-fast
# and AddressSanitizer+UBSan in build-afl/, fed files through its command
# line (ingest --records, ingest --ncu-csv, check -t) as a user would; each
# target FUZZ_AFL_TIME seconds, seeded from the same fixtures as libFuzzer
# (the corpus in build-afl/out/NAME is kept and resumed).  A crash fails the
# target (build-afl/out/NAME/default/crashes/); hangs over FUZZ_AFL_HANG_MS
# are counted.  GIT_DIR=/nonexistent: ingest's questions to git fail fast.
FUZZ_AFL_CC      ?= afl-clang-fast
FUZZ_AFL_BUILD    = build-afl
FUZZ_AFL_TIME    ?= 60
FUZZ_AFL_SMOKE_TIME ?= 3
FUZZ_AFL_HANG_MS ?= 5000
FUZZ_AFL_NAMES   ?= records ncu_csv thresholds
afl_args_records   = ingest --db :memory: --commit afl --branch afl --records @@
afl_args_ncu_csv   = ingest --db :memory: --commit afl --branch afl --ncu-csv @@
afl_args_thresholds = check --db $(FUZZ_AFL_BUILD)/check.db --commit b --baseline a --no-store -t @@

.PHONY: afl-build afl-run
afl-build:
	$(Q)command -v afl-fuzz >/dev/null && command -v $(FUZZ_AFL_CC) >/dev/null || \
	  { echo "make fuzz: AFL++ is missing (scripts/install-deps.sh installs afl++)" >&2; exit 1; }
	$(Q)AFL_QUIET=1 $(MAKE) --no-print-directory BUILD=$(FUZZ_AFL_BUILD) CC=$(FUZZ_AFL_CC) \
	  SAN=address,undefined CFLAGS="-O1 -g" $(FUZZ_AFL_BUILD)/kgate

afl-run: afl-build
	$(Q)set -e; rm -f $(FUZZ_AFL_BUILD)/check.db; \
	for c in a b; do $(FUZZ_AFL_BUILD)/kgate ingest --db $(FUZZ_AFL_BUILD)/check.db --commit $$c \
	  --records tests/fixtures/records/good.jsonl 2>/dev/null; done; \
	for n in $(FUZZ_AFL_NAMES); do \
	  rm -rf $(FUZZ_AFL_BUILD)/seeds/$$n; mkdir -p $(FUZZ_AFL_BUILD)/seeds/$$n $(FUZZ_AFL_BUILD)/out; \
	  case $$n in records) seeds="$(fuzz_seeds_records)"; args="$(afl_args_records)";; \
	  ncu_csv) seeds="$(fuzz_seeds_ncu_csv)"; args="$(afl_args_ncu_csv)";; \
	  thresholds) seeds="$(fuzz_seeds_thresholds)"; args="$(afl_args_thresholds)";; esac; \
	  for f in $$seeds; do cp "$$f" $(FUZZ_AFL_BUILD)/seeds/$$n/; done; \
	  d=$$n; case $$n in records|ncu_csv) d=import;; esac; \
	  dict=; [ -f tests/fuzz/$$d.dict ] && dict="-x tests/fuzz/$$d.dict"; \
	  in=$(FUZZ_AFL_BUILD)/seeds/$$n; [ -d $(FUZZ_AFL_BUILD)/out/$$n/default/queue ] && in=-; \
	  echo "== afl $$n: $(FUZZ_AFL_TIME) s =="; \
	  GIT_DIR=/nonexistent AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_FAST_CAL=1 \
	  AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 AFL_SKIP_CRASHES=1 \
	  ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0 \
	  UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1 \
	  afl-fuzz -i $$in -o $(FUZZ_AFL_BUILD)/out/$$n -m none -t $(FUZZ_AFL_HANG_MS) -V $(FUZZ_AFL_TIME) $$dict \
	    -- $(abspath $(FUZZ_AFL_BUILD))/kgate $$args > $(FUZZ_AFL_BUILD)/afl_$$n.log 2>&1 || \
	    { tail -n 30 $(FUZZ_AFL_BUILD)/afl_$$n.log; exit 1; }; \
	  st=$(FUZZ_AFL_BUILD)/out/$$n/default/fuzzer_stats; \
	  grep -E '^(execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs|bitmap_cvg) ' $$st | \
	    tr -s ' ' | tr '\n' ' '; echo; \
	  crashes=$$(ls $(FUZZ_AFL_BUILD)/out/$$n/default/crashes | grep -vc README || true); \
	  if [ "$$crashes" != 0 ]; then echo "afl $$n: $$crashes crash(es) in $(FUZZ_AFL_BUILD)/out/$$n/default/crashes/" >&2; exit 1; fi; \
	done

fuzz:
	$(Q)$(MAKE) --no-print-directory fuzz-run
	$(Q)$(MAKE) --no-print-directory afl-run

fuzz-smoke:
	$(Q)$(MAKE) --no-print-directory fuzz-run FUZZ_TIME=$(FUZZ_SMOKE_TIME)
	$(Q)$(MAKE) --no-print-directory afl-run FUZZ_AFL_TIME=$(FUZZ_AFL_SMOKE_TIME)

-include $(FUZZ_OBJ:.o=.d)

# The README's two commands (make demo, make test) install what is missing
# first; set NODEPS=1 to skip that.
.PHONY: deps
deps:
ifeq ($(NODEPS),)
	$(Q)sh scripts/install-deps.sh
endif
