# The two commands of the README:
#   make run   — install dependencies, build, run the main job
#   make test  — install dependencies, build (release and ASan+UBSan), run every test
JOBS ?= $(shell nproc)
RELEASE := build/release
DEBUG := build/debug

.PHONY: deps build build-debug run test test-release test-debug clean

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build $(RELEASE) -j $(JOBS)

build-debug: deps
	cmake --preset debug >/dev/null
	cmake --build $(DEBUG) -j $(JOBS)

run: build
	bash scripts/run-main.sh $(RELEASE)/dacpp

test-release: build
	cd $(RELEASE) && ctest --output-on-failure --no-tests=error -j $(JOBS)

test-debug: build-debug
	cd $(DEBUG) && ctest --output-on-failure --no-tests=error -j $(JOBS) -E "^cli\."

test: test-release test-debug

clean:
	rm -rf build
