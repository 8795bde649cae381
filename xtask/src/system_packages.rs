//! The Debian packages the test suite's real servers and browser come from, installed
//! with apt when they are missing: as root, or through `sudo` when it asks no password;
//! otherwise the one command that would install them, and a stop.
//!
//! | package | what the tests start |
//! |---|---|
//! | `redis-server` | a Redis store shared by replicas |
//! | `docker-registry` | an OCI registry (the CNCF distribution registry) |
//! | `haproxy` | a balancer in front of replicas |
//! | `chromium` | the browser the console's test drives with Playwright |
//! | `make` | jemalloc's C build |

use std::path::Path;
use std::process::{Command, Stdio};

/// Each package and a file that is there once it is installed.
const PACKAGES: &[(&str, &[&str])] = &[
    ("redis-server", &["/usr/bin/redis-server"]),
    ("docker-registry", &["/usr/bin/docker-registry"]),
    ("haproxy", &["/usr/sbin/haproxy", "/usr/bin/haproxy"]),
    ("chromium", &["/usr/bin/chromium"]),
    ("make", &["/usr/bin/make"]),
];

/// Installs the missing packages, or says how.
pub fn ensure() -> Result<(), String> {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(_, files)| !files.iter().any(|file| Path::new(file).exists()))
        .map(|(package, _)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let command = format!("apt-get install -y {}", missing.join(" "));
    if !Path::new("/usr/bin/apt-get").exists() {
        return Err(format!("the tests need these Debian packages (or their equivalents): {}", missing.join(" ")));
    }
    let as_root = is_root();
    let can_sudo = !as_root && sudo_without_password();
    if !as_root && !can_sudo {
        return Err(format!("the tests need Debian packages that are missing; install them with:\n  sudo {command}"));
    }
    println!("installing {} with apt", missing.join(" "));
    // The registry package would start a registry on :5000 where an init system runs;
    // the tests start their own on free loopback ports.
    let apt = |args: &[&str]| {
        let mut apt = if as_root { Command::new("env") } else { Command::new("sudo") };
        if !as_root {
            apt.args(["-n", "env"]);
        }
        apt.args(["DEBIAN_FRONTEND=noninteractive", "apt-get"]).args(args);
        apt
    };
    crate::run(apt(&["update", "-qq"]))?;
    let mut install = apt(&["install", "-y", "-qq"]);
    install.args(&missing);
    crate::run(install).map_err(|e| format!("{e}\ninstall them by hand with: sudo {command}"))
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn sudo_without_password() -> bool {
    Command::new("sudo")
        .args(["-n", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
