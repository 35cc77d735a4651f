#!/usr/bin/env bash
# Container smoke test without a Docker engine.
#
# Lays out the runtime stage of the Dockerfile in a fresh directory: its `COPY --from=build`
# lines (build paths under /src are this checkout's; the server binary is PONDER_BIN, by default
# the release build the image makes) and the build stage's `strip`. Then runs
# the server as the image does: as the Dockerfile's USER (or another UID with no account when
# that one exists here), owning none of its files, with only the Dockerfile's ENV (paths moved
# into the directory, the address on a free loopback port) plus PONDER_SHUTDOWN_GRACE shortened.
# Checks: the HEALTHCHECK command, /healthz, /readyz, /metrics, the page and its wasm, one demo
# turn, and SIGTERM during a turn: the turn ends with an `error` event and the process exits 0
# within the grace period. Prints the size of what the runtime stage adds to the base image.
set -euo pipefail
cd "$(dirname "$0")/.."

GRACE=2
passed=0
fail() { echo "container-smoke: FAIL: $*" >&2; echo "container-smoke: $passed passed, 1 failed"; exit 1; }
say() { echo "container-smoke: $*"; }
pass() { passed=$((passed + 1)); say "ok: $*"; }

bin=${PONDER_BIN:-target/release/ponder}
for f in "$bin" target/site/pkg/ponder.wasm; do
  [ -e "$f" ] || fail "$f is missing: run make build first"
done

work=$(mktemp -d /tmp/ponder-smoke.XXXXXX)
root="$work/root"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$root"
chmod 755 "$work" "$root"

# The runtime stage: everything after the last FROM.
runtime=$(awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' Dockerfile)

# COPY --from=build SRC DEST, one file or directory each.
copies=$(printf '%s' "$runtime" | awk '/^COPY --from=build /{print $(NF-1), $NF}')
[ -n "$copies" ] || fail "no COPY --from=build in the runtime stage"
while read -r src dest; do
  rel=${src#/src/}
  [ "$rel" != "$src" ] || fail "COPY source $src is not under the build stage's /src"
  [ "$rel" != target/release/ponder ] || rel=$bin
  mkdir -p "$root$(dirname "$dest")"
  cp -a "$rel" "$root$dest"
  say "COPY $rel -> $dest"
done <<<"$copies"
if grep -q 'strip target/release/ponder' Dockerfile; then
  strip "$root/usr/local/bin/ponder"
fi
chown -R root:root "$root"
chmod -R go-w "$root"
# The runtime stage's `RUN mkdir -p /data && chmod 1777 /data`, where the volume is mounted.
grep -q 'mkdir -p /data && chmod 1777 /data' Dockerfile || fail "the runtime stage no longer makes /data"
mkdir -p "$root/data" && chmod 1777 "$root/data"

# ENV NAME=VALUE lines, with absolute paths moved under the new root.
env_args=()
while read -r assignment; do
  name=${assignment%%=*}
  value=${assignment#*=}
  case "$value" in
    /*) value="$root$value" ;;
    sqlite:///*) value="sqlite://$root${value#sqlite://}" ;;
  esac
  # The image listens on 0.0.0.0:3000; here, a free loopback port.
  [ "$name" = LEPTOS_SITE_ADDR ] || env_args+=("$name=$value")
done < <(printf '%s' "$runtime" | awk '/^ENV /{for (i = 2; i <= NF; i++) print $i}')

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env_args+=("LEPTOS_SITE_ADDR=127.0.0.1:$port" "PONDER_SHUTDOWN_GRACE=$GRACE")

user=$(printf '%s' "$runtime" | awk '/^USER /{print $2}' | tail -1)
uid=${user%%:*}
gid=${user#*:}
[[ "$uid" =~ ^[0-9]+$ ]] && [ "$uid" != 0 ] || fail "the Dockerfile's USER ($user) must be a numeric non-root UID"
while getent passwd "$uid" >/dev/null; do uid=$((uid + 1)); done
[[ "$gid" =~ ^[0-9]+$ ]] || gid=$uid
say "running as uid $uid gid $gid with: ${env_args[*]}"

as_image=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs
  env -i PATH="$root/usr/local/bin:/usr/bin:/bin" "${env_args[@]}")

base="http://127.0.0.1:$port"
log="$work/ponder.log"
(cd "$root" && exec "${as_image[@]}" ponder) >"$log" 2>&1 &
pid=$!

for _ in $(seq 1 100); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "ponder exited at start"; }
  sleep 0.1
done
[ "$(ps -o uid= -p "$pid" | tr -d ' ')" = "$uid" ] || fail "ponder is not running as uid $uid"
pass "started as uid $uid, which owns none of its files"

# The image's HEALTHCHECK command, as the container runtime runs it.
health_cmd=$(printf '%s' "$runtime" | sed -n 's/^HEALTHCHECK .*CMD \[\(.*\)\]$/\1/p' | tr -d '",')
[ -n "$health_cmd" ] || fail "no HEALTHCHECK CMD [...] in the runtime stage"
# shellcheck disable=SC2086
"${as_image[@]}" $health_cmd || fail "HEALTHCHECK ($health_cmd) failed"
pass "HEALTHCHECK $health_cmd"

[ "$(curl -fsS "$base/healthz")" = "ok" ] || fail "/healthz"
pass "/healthz"
[ "$(curl -fsS "$base/readyz")" = "ready" ] || fail "/readyz"
pass "/readyz with the demo model"
metrics=$(curl -fsS "$base/metrics")
grep -qx 'ponder_turns_total{outcome="done"} 0' <<<"$metrics" || fail "/metrics before a turn: $metrics"
pass "/metrics"
page=$(curl -fsS "$base/")
stem=$(grep -oE '/pkg/ponder\.[0-9a-f]{16}\.js' <<<"$page" | head -1 | sed 's|/pkg/||; s|\.js$||')
[ -n "$stem" ] || fail "the page does not load a content-hashed /pkg/ponder.<hash>.js"
# The image signs users in (PONDER_AUTH=password): a turn before signing in is refused, the
# first visit creates the admin, and its session cookie lets turns run.
jar="$work/cookies"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$base/api/chat" -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"hi"}]}')
[ "$code" = 401 ] || fail "a turn without signing in answered $code, not 401"
curl -fsS -c "$jar" "$base/api/auth/setup" -H 'content-type: application/json' \
  -d '{"name":"admin","password":"smoke-test-password"}' >/dev/null || fail "setting up the first admin"
[ -s "$root/data/ponder.db" ] || fail "no database in /data"
pass "accounts: 401 before signing in, the first admin set up, the database in /data"
enc=$(curl -fsS -o /dev/null -D - -H 'accept-encoding: br' "$base/pkg/$stem.wasm" | tr -d '\r' \
  | awk -F': ' 'tolower($1) == "content-encoding" {print $2}')
[ "$enc" = br ] || fail "/pkg/$stem.wasm is not served brotli-compressed from the site (content-encoding: '$enc')"
pass "the page and its wasm (brotli, hashed name) from the copied site"

turn() {
  curl -sSN --max-time 60 -b "$jar" "$base/api/chat" -H 'content-type: application/json' \
    -d "{\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}]}"
}
last=$(turn "Why is the sky blue?" | grep '^data: ' | tail -1)
grep -q '"type":"done"' <<<"$last" || fail "the demo turn did not end with done: $last"
metrics=$(curl -fsS "$base/metrics") || fail "/metrics did not answer"
grep -qx 'ponder_turns_total{outcome="done"} 1' <<<"$metrics" || fail "/metrics did not count the turn"
pass "one demo turn: done, and counted"

# SIGTERM while a turn is running: the model stalls mid-reasoning, so it outlasts the grace.
stream="$work/stream.txt"
turn "[stall-mid] hello" >"$stream" 2>&1 &
curl_pid=$!
for _ in $(seq 1 100); do
  grep -q '"type":"thinking"' "$stream" 2>/dev/null && break
  sleep 0.1
done
grep -q '"type":"thinking"' "$stream" || fail "the stalling turn never started: $(cat "$stream")"
start=$(date +%s.%N)
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
elapsed=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
pid=""
wait "$curl_pid" || true
[ "$status" = 0 ] || { cat "$log"; fail "exit status $status after SIGTERM"; }
pass "exit status 0 after SIGTERM"
last=$(grep '^data: ' "$stream" | tail -1)
grep -q '"type":"error"' <<<"$last" || fail "the running turn did not end with an error event: $last"
grep -q 'shutting down' <<<"$last" || fail "the error event does not say why: $last"
pass "the running turn ended with: ${last#data: }"
# The grace period, then at most the 2 s Ponder gives connections for the last event.
python3 -c "import sys; sys.exit(0 if $GRACE <= $elapsed <= $GRACE + 3 else 1)" \
  || fail "exited ${elapsed}s after SIGTERM; expected the ${GRACE}s grace period"
pass "exited ${elapsed}s after SIGTERM (grace ${GRACE}s)"

bytes=$(du -sb "$root" | cut -f1)
gz=$(tar -C "$root" -cf - . | gzip -9 | wc -c)
say "the runtime stage adds $(python3 -c "print(round($bytes / 1e6, 1))") MB ($(python3 -c "print(round($gz / 1e6, 1))") MB gzipped) to debian:trixie-slim"
echo "container-smoke: $passed passed, 0 failed"
