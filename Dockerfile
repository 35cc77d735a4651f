# syntax=docker/dockerfile:1
# Ponder's image.
#   docker build -t ponder .
#   docker run --rm -p 3000:3000 ponder                 # the built-in demo model
#   docker run --rm -p 3000:3000 --env-file .env ponder  # your upstream (see .env.example)
#
# The build stage runs the Makefile's own recipe (`make build`: wasm-bindgen-cli and
# wasm-split-cli from crates.io, wasm-opt from npm, the wasm site with the code an empty chat page
# never runs split into chunks, the release server); nothing comes from GitHub. The runtime
# stage is a slim Debian with only the server binary and the site. It runs as a non-root user
# and works under any UID (`docker run --user 12345`): it writes nothing to disk.
# Both stages are Debian 13 (trixie), so the binary finds the glibc it was linked against.
# .ci/container-smoke.sh lays out the runtime stage's COPY and ENV lines below without a
# Docker engine and runs them as `make test` does: keep those lines one per file and variable.

# The pinned release of rust-toolchain.toml; move both together.
FROM rust:1.95.0-trixie AS build
# Node.js and npm run wasm-opt from npm's binaryen, as `make tools` installs it.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The tools get their own layer: it changes only with the Makefile or Cargo.lock.
COPY Makefile rust-toolchain.toml Cargo.toml Cargo.lock ./
RUN make tools
COPY . .
# Symbols are only for debuggers; stripping them takes a few MB off the image.
RUN make build && strip target/release/ponder

FROM debian:trixie-slim AS runtime
# pdftoppm draws a PDF's pages as images for a model that sees but reads no documents.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends poppler-utils \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/ponder /usr/local/bin/ponder
COPY --from=build /src/target/site /usr/share/ponder/site
ENV LEPTOS_SITE_ROOT=/usr/share/ponder/site
ENV LEPTOS_SITE_ADDR=0.0.0.0:3000
# Accounts and history: an SQLite file in /data, a volume any UID may write (sticky, like /tmp).
ENV PONDER_DATABASE_URL=sqlite:///data/ponder.db
# The image listens on every interface: built-in accounts unless the operator picks another mode.
ENV PONDER_AUTH=password
RUN mkdir -p /data && chmod 1777 /data
VOLUME /data
USER 10001:10001
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["ponder", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["ponder"]
