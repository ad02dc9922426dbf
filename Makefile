# Thin wrapper over CMake presets; the real build lives in CMakeLists.txt.
.PHONY: all build test unit demo format tidy clean bench
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

all: build
build:
	scripts/build.sh
test:
	scripts/test.sh
unit: build
	ctest --test-dir build --output-on-failure -L unit -j$(JOBS)
demo:
	scripts/demo.sh
bench: build
	cmake --build build -j$(JOBS) --target bench
format:
	find src tools bench -name '*.h' -o -name '*.cc' | xargs clang-format -i
tidy: build
	find src tools -name '*.cc' | xargs clang-tidy -p build --quiet
clean:
	rm -rf build build-debug build-asan build-no-torch
