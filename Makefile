# The two commands of the README:
#   make run    installs whatever is missing, builds the release, and serves adamviz on 127.0.0.1:3000
#   make test   installs whatever is missing and runs every check and test (what CI runs)
# Everything else here is a step of those two.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CARGO_TERM_COLOR ?= never

WASM_TARGET := wasm32-unknown-unknown

# Every step prints what it starts and how long `make` has run, so a first run shows where its
# minutes go.
MAKE_STARTED := $(shell date +%s)
phase = @echo "[make $$(( $$(date +%s) - $(MAKE_STARTED) ))s] $(1)"

.PHONY: run test tools build release bench fmt-check clippy unused-deps unit-test e2e screenshot

# wasm-opt from the npm package binaryen (Debian's version breaks hydration; see BUILD-NOTES).
RELEASE_PATH := $(CURDIR)/end2end/node_modules/.bin:$(PATH)

run: tools release
	./target/release/adamviz serve

test: tools fmt-check clippy unused-deps unit-test build e2e
	$(call phase,make test: all checks passed)

tools:
	$(call phase,tools: installing whatever is missing)
	@bash scripts/install-tools.sh

# Server binary (feature ssr) and browser bundle (feature hydrate, wasm) into target/site, and
# the standalone validator an auditor builds from crates/evidence alone (the e2e flow compares it
# with `adamviz evidence validate`). (The server binary of the test build cannot stand in for
# cargo leptos's: tried, its pages did not hydrate.)
TEST_BUILD := cargo test --workspace --no-default-features --features adamviz/ssr

build:
	$(call phase,build: the server and wasm bundle (cargo leptos) then adamviz-verify)
	cargo leptos build
	cargo build -p adamviz-evidence --bin adamviz-verify
	cargo build -p adamviz-server --example new_data_cut

# The same, optimized: the server in target/release, the wasm through wasm-opt.
release:
	$(call phase,release: optimized server and wasm bundle)
	PATH="$(RELEASE_PATH)" cargo leptos build --release

# Page and preview latency (release build) and the size of the browser bundle.
bench: tools release
	cargo build --release -p adamviz-bench
	@wasm=$$(ls target/site/pkg/*.wasm); echo "wasm bundle $$wasm: $$(stat -c %s $$wasm) bytes, $$(gzip -9 -c $$wasm | wc -c) bytes gzip -9 (target ≤ 1 MB gzip)"
	./target/release/adamviz-bench web

fmt-check:
	$(call phase,fmt-check)
	cargo fmt --all -- --check

# Every crate of the workspace on the server side; the browser side is the web crate and the
# model, the only crate the wasm depends on.
clippy:
	$(call phase,clippy: server and browser builds)
	cargo clippy --workspace --all-targets --no-default-features --features adamviz/ssr -- -D warnings
	cargo clippy -p adamviz -p adamviz-model --all-targets --no-default-features --features adamviz/hydrate --target $(WASM_TARGET) -- -D warnings

# Every dependency a crate declares is used (cargo-machete reads the sources).
unused-deps:
	$(call phase,unused-deps: cargo machete)
	cargo machete

unit-test:
	$(call phase,unit-test: every crate's tests)
	$(TEST_BUILD)

e2e:
	$(call phase,e2e: Playwright in Chromium)
	cd end2end && npx playwright test

# Regenerates docs/screenshot-*.png from the real pages in Chromium.
screenshot: tools build
	cd end2end && ADAMVIZ_SCREENSHOT=$(CURDIR)/docs/screenshot-home.png ADAMVIZ_SCREENSHOT_DIR=$(CURDIR)/docs npx playwright test
