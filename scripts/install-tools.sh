#!/usr/bin/env bash
# Installs whatever the build, the app and the tests need and is missing: Debian packages (R and
# its packages, fonts, Chromium, PostgreSQL for the store tests), the wasm32 target, cargo-leptos
# and wasm-bindgen-cli at pinned versions built from crates.io, and the npm packages of end2end/.
# Re-running it on a machine that has everything is quick and changes nothing.
set -euo pipefail

CARGO_LEPTOS_VERSION=0.3.11
WASM_BINDGEN_VERSION=0.2.130   # must equal the `=` pin of wasm-bindgen in Cargo.toml
CARGO_MACHETE_VERSION=0.9.2

repo_root=$(cd "$(dirname "$0")/.." && pwd)
# Each line says how long the script has run, so a first run that takes minutes shows where.
started=$SECONDS
log() {
  local elapsed=$((SECONDS - started))
  printf '[install-tools %dm%02ds] %s\n' $((elapsed / 60)) $((elapsed % 60)) "$*" >&2
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# --- Debian packages ------------------------------------------------------------------------
log "checking Debian packages, the Rust targets, cargo-leptos, wasm-bindgen-cli, npm packages"
apt_packages=(r-base-core r-cran-ggplot2 r-cran-patchwork r-cran-jsonlite r-cran-haven r-cran-data.table poppler-utils
  fonts-dejavu-core fontconfig chromium make pkg-config postgresql)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- Rust toolchain pieces ------------------------------------------------------------------
# (Outputs are captured before matching: with pipefail, `grep -q` closing a pipe early would
# turn a present tool into a spurious reinstall.)
installed_targets=$(rustup target list --installed)
if ! grep -qx wasm32-unknown-unknown <<<"$installed_targets"; then
  log "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
installed_components=$(rustup component list --installed)
for component in clippy rustfmt; do
  grep -q "^$component" <<<"$installed_components" || rustup component add "$component"
done

# Builds a crates.io binary from its published source with its own lock file, after pinning the
# dependencies that the lock file resolves to versions this rustc cannot build.
install_pinned_crate() {
  local crate=$1 version=$2 binary=$3; shift 3
  local work
  work=$(mktemp -d)
  log "building $crate $version from crates.io source (no prebuilt download)"
  # `cargo info` fetches the .crate into the registry cache without resolving its lock file.
  (cd "$work" && cargo info "$crate@$version" >/dev/null)
  local archive
  archive=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$crate-$version.crate" | head -n 1)
  tar -xzf "$archive" -C "$work"
  (
    cd "$work/$crate-$version"
    for pin in "$@"; do cargo update -q -p "${pin%@*}" --precise "${pin#*@}"; done
    # Unoptimized (--debug): both tools only drive cargo and rewrite one wasm file, so their own
    # speed costs seconds per build, while optimizing them (swc, lightningcss, walrus) costs
    # about 15 minutes on two cores the first time (measured: cargo-leptos 5 min unoptimized,
    # wasm-bindgen-cli 1 min).
    CARGO_TARGET_DIR="$work/target" cargo install -q --debug --path . --locked --force
  )
  rm -rf "$work"
  command -v "$binary" >/dev/null
}

if [ "$(cargo leptos --version 2>/dev/null || true)" != "cargo-leptos $CARGO_LEPTOS_VERSION" ]; then
  install_pinned_crate cargo-leptos "$CARGO_LEPTOS_VERSION" cargo-leptos cargo-util-schemas@0.14.1
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  install_pinned_crate wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen webpki-roots@1.0.10
fi

if [ "$(cargo machete --version 2>/dev/null || true)" != "$CARGO_MACHETE_VERSION" ]; then
  log "building cargo-machete $CARGO_MACHETE_VERSION from crates.io source"
  cargo install -q --locked --debug cargo-machete --version "$CARGO_MACHETE_VERSION"
fi

# --- npm packages of end2end/ (Playwright without its browser download; binaryen for wasm-opt) --
if [ -f "$repo_root/end2end/package-lock.json" ]; then
  lock_hash=$(sha256sum "$repo_root/end2end/package-lock.json" | cut -c1-64)
  stamp="$repo_root/end2end/node_modules/.installed-$lock_hash"
  if [ ! -f "$stamp" ]; then
    log "npm ci in end2end/"
    (cd "$repo_root/end2end" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
    touch "$stamp"
  fi
fi
log "all tools present"
