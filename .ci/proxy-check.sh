#!/usr/bin/env bash
# The nginx and Caddy snippets of docs/src/operator/reverse-proxy.md, read from that chapter and
# run for real in front of the server (PONDER_BIN, by default the release build): at the root and
# under /ponder/. Through each proxy: the page and its wasm (compressed by the proxy), and a turn
# whose model is silent for 3 s: the keep-alive comments must arrive while it is silent (nothing
# buffers the stream) and the stream must not be compressed.
# Needs Debian's nginx and caddy (make tools-proxy installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

passed=0
fail() { echo "proxy-check: FAIL: $*" >&2; echo "proxy-check: $passed passed, 1 failed"; exit 1; }
say() { echo "proxy-check: $*"; }
pass() { passed=$((passed + 1)); say "ok: $*"; }

bin=${PONDER_BIN:-target/release/ponder}
[ -x "$bin" ] && [ -e target/site/pkg/ponder.wasm ] || fail "no $bin or no site: run make build first"

work=$(mktemp -d /tmp/ponder-proxy.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Called in this shell, not in $(...): a subshell's pids+= would be lost, and the cleanup would
# leave both servers running after the check.
start_ponder() { # base_path port
  env -i PATH=/usr/bin:/bin LEPTOS_SITE_ROOT="$PWD/target/site" LEPTOS_SITE_ADDR="127.0.0.1:$2" \
    PONDER_DATABASE_URL="sqlite://$work/ponder-$2/ponder.db" \
    PONDER_BASE_PATH="$1" PONDER_KEEP_ALIVE=0.5 PONDER_DEMO_DELAY_MS=5 RUST_LOG=warn "$bin" \
    >"$work/ponder-$2.log" 2>&1 &
  pids+=($!)
}
root_port=$(free_port)
start_ponder "" "$root_port"
sub_port=$(free_port)
start_ponder /ponder "$sub_port"

# ---- the snippets as docs/src/operator/reverse-proxy.md shows them (the upstream is ponder:3000
# there): each is the fenced block after its "<!-- proxy-check: NAME -->" comment ----
doc=docs/src/operator/reverse-proxy.md
snippet() { # name
  awk -v marker="<!-- proxy-check: $1 -->" '
    $0 == marker { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$doc"
}
for name in nginx_root nginx_gzip caddy_root caddy_sub caddy_encode; do
  printf -v "$name" '%s' "$(snippet "$name")"
  [ -n "${!name}" ] || fail "no snippet $name in $doc"
done
# Under /ponder/ nginx takes the same block with its location changed, as the book says.
[[ $nginx_root == "location / {"$'\n'* ]] || fail "$doc: nginx_root does not start with 'location / {'"
nginx_sub="location /ponder/ {${nginx_root#location / \{}"

if [ "${1:-}" = "--print" ]; then
  printf '# nginx, at the root\n%s\n\n# nginx, under /ponder/\n%s\n\n# nginx, compression that leaves the event stream alone (http or server block)\n%s\n\n' \
    "$nginx_root" "$nginx_sub" "$nginx_gzip"
  printf '# Caddy, at the root\n%s\n\n# Caddy, under /ponder/\n%s\n\n# Caddy, compression that leaves the event stream alone\n%s\n' \
    "$caddy_root" "$caddy_sub" "$caddy_encode"
  exit 0
fi

at() { sed "s/ponder:3000/127.0.0.1:$1/"; }
indent() { sed 's/^/        /'; }

nginx_root_port=$(free_port)
nginx_sub_port=$(free_port)
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 64; }
http {
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
$(printf '%s\n' "$nginx_gzip" | indent)
    server {
        listen 127.0.0.1:$nginx_root_port;
$(printf '%s\n' "$nginx_root" | at "$root_port" | indent)
    }
    server {
        listen 127.0.0.1:$nginx_sub_port;
$(printf '%s\n' "$nginx_sub" | at "$sub_port" | indent)
    }
}
EOF
mkdir -p "$work/nginx/body" "$work/nginx/proxy" "$work/nginx/fastcgi" "$work/nginx/uwsgi" "$work/nginx/scgi"
chmod -R 1777 "$work/nginx"
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" -g 'daemon off;' &
pids+=($!)

caddy_root_port=$(free_port)
caddy_sub_port=$(free_port)
cat >"$work/Caddyfile" <<EOF
{
    admin off
    auto_https off
}
http://127.0.0.1:$caddy_root_port {
$(printf '%s\n' "$caddy_encode" | indent)
$(printf '%s\n' "$caddy_root" | at "$root_port" | indent)
}
http://127.0.0.1:$caddy_sub_port {
$(printf '%s\n' "$caddy_encode" | indent)
$(printf '%s\n' "$caddy_sub" | at "$sub_port" | indent)
}
EOF
HOME="$work" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" \
  caddy run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 &
pids+=($!)

wait_for() {
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$work"/*.log "$work"/nginx/error.log 2>/dev/null || true
  fail "$1 did not answer"
}

check() { # name url_prefix
  local name=$1 prefix=$2
  wait_for "$prefix/healthz"
  local page
  page=$(curl -fsS "$prefix/") || fail "$name: the page did not load"
  grep -qE '/pkg/ponder\.[0-9a-f]{16}\.js' <<<"$page" || fail "$name: the page does not link the hashed script"
  python3 - "$name" "$prefix/api/chat" <<'PY' || exit 1
import http.client, json, sys, time, urllib.parse
name, url = sys.argv[1], urllib.parse.urlsplit(sys.argv[2])
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
body = json.dumps({"messages": [{"role": "user", "content": "[slow] hello"}]})
start = time.monotonic()
conn.request("POST", url.path, body, {"content-type": "application/json", "accept-encoding": "gzip, br"})
resp = conn.getresponse()
def bad(why):
    print(f"proxy-check: FAIL: {name}: {why}", file=sys.stderr)
    sys.exit(1)
if resp.status != 200:
    bad(f"status {resp.status}")
if resp.getheader("content-encoding"):
    bad(f"the event stream is compressed ({resp.getheader('content-encoding')})")
# The turn's id comes first, then keep-alive comments while the model is silent.
seen = b""
first_at = None
while first_at is None:
    chunk = resp.read1(256)
    if not chunk:
        break
    seen += chunk
    if b": keep-alive" in seen:
        first_at = time.monotonic() - start
rest = resp.read()
total = time.monotonic() - start
text = (seen + rest).decode()
if not seen.startswith(b'data: {"type":"started"'):
    bad(f"the stream did not start with the turn's id: {seen[:80]!r}")
if first_at is None:
    bad("no keep-alive comment arrived while the model was silent")
# The model is silent for 3 s; a buffering proxy would hold the comments until then.
if first_at > 2.0 or total < 3.0:
    bad(f"first keep-alive after {first_at:.2f}s, end after {total:.2f}s: the stream was buffered")
last = [l for l in text.splitlines() if l.startswith("data: ")][-1]
if json.loads(last[6:])["type"] != "done":
    bad(f"the turn ended with {last}")
print(f"proxy-check: {name}: first keep-alive after {first_at:.2f}s, done after {total:.2f}s, not compressed")
PY
  local enc
  enc=$(curl -fsS -o /dev/null -D - -H 'accept-encoding: gzip' "$prefix/pkg/ponder.wasm" | tr -d '\r' \
    | awk -F': ' 'tolower($1) == "content-encoding" {print $2}')
  [ "$enc" = gzip ] || fail "$name: the wasm is not compressed (content-encoding: '$enc')"
  pass "$name"
}

check "nginx at the root" "http://127.0.0.1:$nginx_root_port"
check "nginx under /ponder/" "http://127.0.0.1:$nginx_sub_port/ponder"
check "Caddy at the root" "http://127.0.0.1:$caddy_root_port"
check "Caddy under /ponder/" "http://127.0.0.1:$caddy_sub_port/ponder"
echo "proxy-check: $passed passed, 0 failed"
