# Makefile: the front door. `make` builds, `make demo` runs the main job, `make test` runs the tests.
# Each first installs what is missing (scripts/deps.sh, Debian packages only). The real build is CMake (CMakeLists.txt).
# `make docs`: the documentation site (README.md + docs/, MkDocs, offline: no CDN, search included) in
# $(BUILD)/site: open $(BUILD)/site/index.html. First checks every link and anchor (tests/docs/check_links.py), then
# scripts/build-docs stages the sources and builds.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The sanitizer pass (host tools and their tests under ASan + UBSan, no QEMU boot tests) is part of `make test`
# when CI=true, or with SANITIZE=1; `make test-sanitize` runs it alone. -O1 with line tables only keeps the
# sanitized compile near a normal one (1.27x its CPU), with readable stack traces; assertions stay on.
ASAN_BUILD ?= build-asan
SANITIZE ?= $(if $(filter true,$(CI)),1,0)
SANITIZER_ENV = ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# `make fuzz`: libFuzzer targets built with clang, FUZZ_SECONDS each (FUZZ_TARGETS to pick some).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
# `make bench`: Google Benchmark table on stdout, JSON in BENCH_JSON; BENCH_ARGS e.g. --benchmark_filter=Decode.
# Then the end-to-end table (every analysis and export through the ett binary) over E2E_EVENTS events, and a
# session of as many events read into numpy by the Python package against `ett extract` (bench/python_read_bench.py).
BENCH_JSON ?= $(BUILD)/bench.json
BENCH_ARGS ?=
E2E_EVENTS ?= 10000000

# `make reference`: docs/reference/ written again from the code (scripts/gen-reference; ctest
# docs_reference_current fails while it is stale).
# `make install PREFIX=/usr/local` (cmake --install); `make deb`: the Debian packages (CPack: ett, ett-kernel,
# libettprobe0, libettprobe-dev, python3-ett and their -dbgsym) in $(BUILD).
PREFIX ?= /usr/local

.PHONY: all deps build demo test test-sanitize bench fuzz iso clean install deb docs reference

all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

deb: build
	cd $(BUILD) && cpack -G DEB

reference: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target ett ett-reference
	scripts/gen-reference $(BUILD)/bin docs/reference

iso: build
	@echo "ISO: $(BUILD)/bin/ett.iso"

demo: build
	qemu/demo.sh $(BUILD)/bin
	@echo
	qemu/demo-udp.sh $(BUILD)/bin

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
ifeq ($(SANITIZE),1)
	$(MAKE) test-sanitize
endif

test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DETT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	$(SANITIZER_ENV) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE qemu

bench: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target ett_bench ett_e2e_bench ett ett_python
	$(BUILD)/bin/ett_bench --benchmark_out=$(BENCH_JSON) --benchmark_out_format=json $(BENCH_ARGS)
	@echo "JSON: $(BENCH_JSON)"
	$(BUILD)/bin/ett_e2e_bench $(E2E_EVENTS)
	python3 bench/python_read_bench.py $(BUILD) $(E2E_EVENTS)
	python3 bench/depth_bench.py $(BUILD)

docs: deps
	python3 tests/docs/check_links.py
	scripts/build-docs --out $(BUILD)

fuzz: deps
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DETT_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzzers
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
