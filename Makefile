# Makefile: the front door. `make` builds, `make demo` runs the main job, `make test` runs the tests.
# Each first installs what is missing (scripts/deps.sh, Debian packages only). The real build is CMake (CMakeLists.txt).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test iso clean

all: build

deps:
	@scripts/deps.sh

$(BUILD)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

iso: build
	@echo "ISO: $(BUILD)/bin/ett.iso"

demo: build
	qemu/demo.sh $(BUILD)/bin
	@echo
	qemu/demo-udp.sh $(BUILD)/bin

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
