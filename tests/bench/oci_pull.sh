#!/usr/bin/env bash
# Pull time of a 0.9 MB (stdlib http) and an 18.7 MB (Python py_dates) component from a
# docker-registry on a free loopback port, five runs each: a fresh blob store (fetch,
# check, write), then the whole `toolhost pull` command when everything is in place, then
# with the store warm and the served file removed. Needs `cargo xtask test` (or its
# build) to have built target/release/toolhost and the guests, and docker-registry.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TOOLHOST_BIN:-$ROOT/target/release/toolhost}
GUESTS=$ROOT/target/guests
WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s/data}}\nhttp: {addr: 127.0.0.1:%s, secret: bench}\n' \
  "$WORK" "$PORT" > "$WORK/registry.yml"
docker-registry serve "$WORK/registry.yml" >/dev/null 2>&1 &
REGISTRY=$!
trap 'kill $REGISTRY; rm -rf "$WORK"' EXIT
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT))" 2>/dev/null; do sleep 0.05; done
printf '[oci]\nplain_http = ["127.0.0.1:%s"]\n' "$PORT" > "$WORK/push.toml"
"$BIN" --config "$WORK/push.toml" push "$GUESTS/wasm32-wasip2/release/stdlib_http.wasm" "oci://127.0.0.1:$PORT/t/http:1" >/dev/null
"$BIN" --config "$WORK/push.toml" push "$GUESTS/polyglot/py_dates.wasm" "oci://127.0.0.1:$PORT/t/py:1" >/dev/null
ms() { echo $(( ($2 - $1) / 1000000 )); }
for name in http py; do
  dir=$WORK/$name
  mkdir -p "$dir"
  printf '[[layer]]\nname = "org"\nroot = "org"\n[layer.oci.ns]\n%s = "oci://127.0.0.1:%s/t/%s:1"\n[oci]\nplain_http = ["127.0.0.1:%s"]\nstore = "store"\n' \
    "$name" "$PORT" "$name" "$PORT" > "$dir/toolhost.toml"
  for run in 1 2 3 4 5; do
    rm -rf "$dir/store" "$dir/org" "$dir/toolhost.lock"
    fresh=$("$BIN" --config "$dir/toolhost.toml" pull | python3 -c 'import json, sys; print(round(json.load(sys.stdin)["components"][0]["ms"], 1))')
    start=$(date +%s%N); "$BIN" --config "$dir/toolhost.toml" pull >/dev/null; end=$(date +%s%N)
    rm -rf "$dir/org"
    start2=$(date +%s%N); "$BIN" --config "$dir/toolhost.toml" pull >/dev/null; end2=$(date +%s%N)
    echo "$name run $run: fresh store ${fresh} ms (fetch and check); in place: $(ms "$start" "$end") ms (whole command); store warm, file rewritten: $(ms "$start2" "$end2") ms"
  done
done
