# The two commands of the README:
#   make run   — install dependencies, build, run the main job
#   make test  — install dependencies, build (release and ASan+UBSan), run every test; when nvcc exists, also
#                compile (not run) the CUDA backend and its GPU tests (sm_90 only, to keep it quick)
JOBS ?= $(shell nproc)
RELEASE := build/release
DEBUG := build/debug
CUDA_CI := build/cuda-ci
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })

.PHONY: deps build build-debug build-cuda-ci run test test-release test-debug clean

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

# The GPU tests (dacpp_gpu_tests) need a GPU: they are compiled here and run on the GPU machine. sm_90a, as the
# GPU machine runs it: the Hopper-only (wgmma) kernels are compiled with their real bodies.
build-cuda-ci: deps
	@if [ -n "$(NVCC)" ]; then \
	  cmake -S . -B $(CUDA_CI) -G Ninja -DCMAKE_BUILD_TYPE=Release -DDACPP_CUDA=ON \
	    -DCMAKE_CUDA_ARCHITECTURES=90a -DCMAKE_CUDA_COMPILER=$(NVCC) >/dev/null && \
	  cmake --build $(CUDA_CI) -j $(JOBS) --target dacpp dacpp_gpu_tests; \
	else echo "nvcc not found: the CUDA backend is not compiled"; fi

test: test-release test-debug build-cuda-ci

clean:
	rm -rf build
