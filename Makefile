# SPDX-License-Identifier: MIT
# A convenience over the README's two commands (sh scripts/demo.sh, sh scripts/test.sh),
# which need no make. Everything else is CMake.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo install clean

all: build

deps:
	@sh scripts/install-deps.sh

build:
	@JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" sh scripts/build.sh $(BUILD)

test:
	@JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" sh scripts/test.sh $(BUILD)

demo:
	@JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" sh scripts/demo.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
