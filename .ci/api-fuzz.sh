#!/usr/bin/env bash
# schemathesis against a live Ponder: the server the checks run ($PONDER_BIN), signed in with an
# API token, on a database of its own, the demo model as its upstream. Every operation of the
# served description is tried with generated inputs; a 5xx, a status or content type the
# description does not list, a body its schema refuses, or an answer slower than
# $MAX_RESPONSE_TIME seconds fails the run.
#   .ci/api-fuzz.sh quick   make test: stateless checks, a few examples per operation
#   .ci/api-fuzz.sh long    make api-fuzz: every phase, the stateful one (links) included,
#                           for $FUZZ_SECONDS
set -euo pipefail

mode=${1:-quick}
bin=${PONDER_BIN:-target/debug/ponder}
st=${SCHEMATHESIS:-.tools/venv/bin/st}
max_response_time=${MAX_RESPONSE_TIME:-5}
out=target/api-fuzz
rm -rf "$out" && mkdir -p "$out"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
PONDER_AUTH=password \
PONDER_DATABASE_URL="sqlite://$PWD/$out/ponder.db?mode=rwc" \
PONDER_TITLES=off \
PONDER_DEMO_DELAY_MS=1 \
PONDER_FIRST_BYTE_TIMEOUT=2 \
PONDER_IDLE_TIMEOUT=2 \
LEPTOS_SITE_ROOT=target/site \
LEPTOS_SITE_ADDR="127.0.0.1:$port" \
RUST_LOG=ponder=warn \
  "$bin" > "$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT

for _ in $(seq 1 300); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { cat "$out/server.log"; exit 1; }
  sleep 0.1
done

call() { curl -fsS -H 'content-type: application/json' "$@"; }
call -c "$out/cookies" -d '{"name":"fuzz","password":"fuzz-password-1"}' "$base/api/auth/setup" >/dev/null
token=$(call -b "$out/cookies" -d '{"name":"schemathesis"}' "$base/api/tokens/create" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
# Something to find: a conversation with a stored turn, and a workspace.
call -H "authorization: Bearer $token" -d '{"content":"hello"}' "$base/api/chat" >/dev/null
call -H "authorization: Bearer $token" -d '{"name":"fuzzed"}' "$base/api/workspaces/create" >/dev/null

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance
common=(
  "$base/api/openapi.json"
  --header "Authorization: Bearer $token"
  --checks "$checks"
  --max-response-time "$max_response_time"
  --request-timeout 30
  --suppress-health-check all
  --report junit --report-dir "$out"
  --seed "${FUZZ_SEED:-47}"
  --workers 2
)
start=$(date +%s)
status=0
case "$mode" in
  quick) "$st" run "${common[@]}" --phases examples,coverage,fuzzing --mode positive --max-examples 15 --no-shrink || status=$? ;;
  long) "$st" run "${common[@]}" --max-time "${FUZZ_SECONDS:-600}" --mode all || status=$? ;;
  *) echo "usage: $0 quick|long"; exit 2 ;;
esac
echo "schemathesis ($mode) ran $(( $(date +%s) - start )) s; server log: $out/server.log"
if [ "$mode" = quick ]; then
  # The book's example client, run as it is written there.
  awk '/^```sh$/{on=1; next} /^```$/{on=0} on' docs/src/api/example-client.md > "$out/example.sh"
  awk '/^```python$/{on=1; next} /^```$/{on=0} on' docs/src/api/example-client.md > "$out/example.py"
  if ! (cd "$out" && PONDER_URL="$base" PONDER_USER=fuzz PONDER_PASSWORD=fuzz-password-1 \
        bash -euo pipefail -c "source example.sh && python3 example.py") > "$out/example.log" 2>&1; then
    echo "the book's example client failed:"; cat "$out/example.log"; status=1
  else
    echo "the book's example client ran: $(tail -n 1 "$out/example.log")"
  fi
fi
if grep -q "panicked" "$out/server.log"; then
  echo "the server panicked:"; grep -A3 "panicked" "$out/server.log"; exit 1
fi
exit $status
