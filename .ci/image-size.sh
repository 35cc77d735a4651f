#!/usr/bin/env bash
# Estimates the image's size without a Docker engine (not part of make test: it downloads
# Debian's base packages, about 35 MB).
#   base:  debian:trixie-slim rebuilt with debootstrap (minbase), then slimmed as the official
#          -slim images are (no docs but copyright files, man, info, locales, apt lists)
#   ours:  what the Dockerfile's runtime stage copies, laid out by .ci/container-smoke.sh
# Sizes are of the files (du) and of a gzip -9 tar of them, close to a registry's layer size.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v debootstrap >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}
work=$(mktemp -d /tmp/ponder-size.XXXXXX)
trap 'rm -rf "$work"' EXIT

base="$work/base"
debootstrap --variant=minbase trixie "$base" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log"; exit 1; }
find "$base/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$base/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
rm -rf "$base"/usr/share/{info,man}/* "$base"/var/lib/apt/lists/* "$base"/var/cache/apt/*.bin \
  "$base"/var/cache/apt/archives/*.deb "$base"/var/log/*

ours="$work/ours"
mkdir -p "$ours/usr/local/bin" "$ours/usr/share/ponder"
awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' Dockerfile |
  awk '/^COPY --from=build /{print $(NF-1), $NF}' |
  while read -r src dest; do
    mkdir -p "$ours$(dirname "$dest")"
    cp -a "${src#/src/}" "$ours$dest"
  done
strip "$ours/usr/local/bin/ponder"

mb() { python3 -c "print(f'{$1 / 1e6:.1f}')"; }
size() { du -sb "$1" | cut -f1; }
gz() { tar -C "$1" -cf - . | gzip -9 | wc -c; }
b=$(size "$base") bg=$(gz "$base") o=$(size "$ours") og=$(gz "$ours")
printf '%-32s %10s %10s\n' "" "files MB" "gzip MB"
printf '%-32s %10s %10s\n' "debian:trixie-slim (rebuilt)" "$(mb "$b")" "$(mb "$bg")"
printf '%-32s %10s %10s\n' "ponder binary + site" "$(mb "$o")" "$(mb "$og")"
printf '%-32s %10s %10s\n' "image" "$(mb $((b + o)))" "$(mb $((bg + og)))"
