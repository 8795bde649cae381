#!/bin/sh
# Builds {{name}}.wasm from app.py. The first run creates .venv with componentize-py.
set -eu
cd "$(dirname "$0")"
if [ ! -x .venv/bin/componentize-py ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check componentize-py==0.25.1
fi
.venv/bin/componentize-py --wit-path wit --world plugin componentize app --output {{name}}.wasm
echo "built {{name}}.wasm"
