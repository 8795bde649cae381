//! End-to-end tests of toolhost: components built from source in this test run, loaded
//! from real directories, driven through the library and the CLI. One file per feature.

mod agents;
#[cfg(target_os = "linux")]
mod allocator;
mod calls;
mod cli;
mod client_powers;
mod config_errors;
mod conformance;
mod console;
mod definitions;
mod deploy;
mod faults;
mod foreign;
mod fuzz;
mod grants;
mod http_abuse;
mod http_tools;
mod languages;
mod limits;
// Where host/build.rs orders the link (LLD on x86-64 Linux).
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod link_order;
mod listings;
mod load_errors;
mod mcp;
mod native;
mod oauth;
mod oci;
mod other_hosts;
mod plain;
mod precompiled;
mod preinit;
mod prompts_resources;
mod registry;
mod replicas;
mod scaffold;
mod serving;
mod stdlib;
mod stdlib_code;
mod stdlib_task;
mod storage;
mod threads;
mod tool_rules;
mod trust;
mod upstream;
mod upstream_bounds;
mod upstream_sandbox;
