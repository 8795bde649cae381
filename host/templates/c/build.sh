#!/bin/sh
# Builds {{name}}.wasm from src/*.c: C bindings generated from wit/tool.wit, `zig cc`
# (PyPI ziglang) for wasm32-wasi as a reactor, then the WASI preview1 adapter makes it a
# component. The toolhost checkout's xtask does all three (installing ziglang in a venv
# under its target/ on first use); set TOOLHOST_SRC if the checkout has moved.
set -eu
cd "$(dirname "$0")"
TOOLHOST_SRC="${TOOLHOST_SRC:-{{toolhost_src}}}"
cargo run --quiet --release --manifest-path "$TOOLHOST_SRC/Cargo.toml" -p xtask -- build-c "$PWD" "$PWD/{{name}}.wasm"
