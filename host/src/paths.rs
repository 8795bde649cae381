//! Where the host keeps things by default, per user, each overridable by an environment variable:
//!
//! Where the host keeps things by default, per user (the XDG base directories), each
//! overridable by an environment variable and by `toolhost.toml`:
//!
//! | what | variable | else |
//! |---|---|---|
//! | compile cache | `TOOLHOST_CACHE_DIR` | `$XDG_CACHE_HOME/toolhost`, `~/.cache/toolhost` |
//! | data (storage) | `TOOLHOST_DATA_DIR` | `$XDG_DATA_HOME/toolhost`, `~/.local/share/toolhost` |
//! | stdlib layer | `TOOLHOST_STDLIB_DIR` | `<data>/stdlib` |

use std::path::PathBuf;

/// The compile cache's directory.
pub fn cache_dir() -> Option<PathBuf> {
    base("TOOLHOST_CACHE_DIR", "XDG_CACHE_HOME", ".cache")
}

/// The directory of the user's data: the embedded storage database.
pub fn data_dir() -> Option<PathBuf> {
    base("TOOLHOST_DATA_DIR", "XDG_DATA_HOME", ".local/share")
}

/// The stdlib layer's directory, served below every other layer when it exists
/// (`cargo xtask stdlib` installs there).
pub fn stdlib_dir() -> Option<PathBuf> {
    match std::env::var_os("TOOLHOST_STDLIB_DIR") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => data_dir().map(|dir| dir.join("stdlib")),
    }
}

fn base(own: &str, xdg: &str, under_home: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(own).filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os(xdg).filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir).join("toolhost"));
    }
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(under_home).join("toolhost"))
}
