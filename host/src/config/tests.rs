//! Tests of `toolhost.toml` as a whole: layers, and errors that name the file and the line.

use std::path::Path;
use std::time::Duration;

use super::HostConfig;
use crate::registry::Layer;
use crate::runtime::CacheSetting;

#[test]
fn layers_resolve_relative_to_the_file_in_order() {
    let config = HostConfig::parse(
        Path::new("/etc/toolhost/toolhost.toml"),
        "[[layer]]\nname = \"project\"\nroot = \"tools\"\n\n[[layer]]\nname = \"stdlib\"\nroot = \"/usr/share/stdlib\"\nstdlib = true\n\n[defaults]\ntimeout = \"2s\"\n\n[engine]\nmax_memory = \"512 MiB\"\n\n[cache]\nenabled = false\n",
    )
    .unwrap();
    assert_eq!(
        config.layers,
        vec![Layer::directory("project", "/etc/toolhost/tools"), Layer::stdlib("/usr/share/stdlib".into()),]
    );
    assert_eq!(config.defaults.timeout, Duration::from_secs(2));
    assert_eq!(config.engine.max_memory, 512 << 20);
    assert_eq!(config.cache, CacheSetting::Disabled);
}

#[test]
fn errors_name_file_and_line() {
    let error = HostConfig::parse(Path::new("t.toml"), "[engine]\nmax_memory = \"1 GiB\"\nthreads = 4\n").unwrap_err();
    assert_eq!(error.line, 3);
    assert!(error.problem.contains("unknown field `threads`"), "{error}");
    let error = HostConfig::parse(Path::new("t.toml"), "[engine]\nmax_memory = \"0\"\n").unwrap_err();
    assert_eq!(error.line, 2);
    assert!(error.problem.contains("at least 64 KiB"), "{error}");
    let error = HostConfig::parse(Path::new("t.toml"), "[defaults]\nmemory = \"2 GiB\"\n").unwrap_err();
    assert!(error.problem.contains("over the host's ceiling"), "{error}");
    let error = HostConfig::parse(
        Path::new("t.toml"),
        "[[layer]]\nname = \"a\"\nroot = \"x\"\n[[layer]]\nname = \"a\"\nroot = \"y\"\n",
    )
    .unwrap_err();
    assert_eq!(error.line, 4, "the line of the second `[[layer]]`");
    assert!(error.to_string().starts_with("t.toml, line 4: layer `a` is defined twice"), "{error}");
}
