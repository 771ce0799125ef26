# The two commands of the README:
#   make run    installs whatever is missing, builds the release, and serves adamviz on 127.0.0.1:3000
#   make test   installs whatever is missing and runs every check and test (what CI runs)
# Everything else here is a step of those two.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TERM_COLOR ?= never

WASM_TARGET := wasm32-unknown-unknown

.PHONY: run test tools build release bench fmt-check clippy unit-test e2e screenshot

# wasm-opt from the npm package binaryen (Debian's version breaks hydration; see BUILD-NOTES).
RELEASE_PATH := $(CURDIR)/end2end/node_modules/.bin:$(PATH)

run: tools release
	./target/release/adamviz serve

test: tools fmt-check clippy unit-test build e2e
	@echo "make test: all checks passed"

tools:
	@bash scripts/install-tools.sh

# Server binary (feature ssr) and browser bundle (feature hydrate, wasm) into target/site.
build:
	cargo leptos build

# The same, optimized: the server in target/release, the wasm through wasm-opt.
release:
	PATH="$(RELEASE_PATH)" cargo leptos build --release

# Page and preview latency (release build) and the size of the browser bundle.
bench: tools release
	cargo build --release --no-default-features --features ssr --bin adamviz-bench
	@wasm=$$(ls target/site/pkg/*.wasm); echo "wasm bundle $$wasm: $$(stat -c %s $$wasm) bytes, $$(gzip -9 -c $$wasm | wc -c) bytes gzip -9 (target ≤ 1 MB gzip)"
	./target/release/adamviz-bench web

fmt-check:
	cargo fmt --all -- --check

clippy:
	cargo clippy --all-targets --no-default-features --features ssr -- -D warnings
	cargo clippy --all-targets --no-default-features --features hydrate --target $(WASM_TARGET) -- -D warnings

unit-test:
	cargo test --no-default-features --features ssr

e2e:
	cd end2end && npx playwright test

# Regenerates docs/screenshot-*.png from the real pages in Chromium.
screenshot: tools build
	cd end2end && ADAMVIZ_SCREENSHOT=$(CURDIR)/docs/screenshot-home.png ADAMVIZ_SCREENSHOT_DIR=$(CURDIR)/docs npx playwright test
