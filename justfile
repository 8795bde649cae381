# Everyday commands. Each recipe is a thin wrapper over `cargo xtask`, which works
# without `just` on a fresh machine.

# Build the example tools and run the CLI demo on them.
demo:
    cargo xtask demo

# Run the whole test suite (builds every guest from source first).
test *ARGS:
    cargo xtask test {{ARGS}}

# rustfmt + clippy over the host and guest workspaces, warnings denied.
lint:
    cargo xtask lint

# Criterion benchmarks, then a table of medians.
bench *ARGS:
    cargo xtask bench {{ARGS}}

# Build the example tools into a tools directory.
install-examples DIR="tools":
    cargo xtask install-examples {{DIR}}
