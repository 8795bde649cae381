//! The writer: every second, one step of a cycle that replaces, breaks, removes and
//! re-adds the `churn` namespace's component and manifest under both hosts' watchers.
//!
//! Each valid manifest grants a new `version` (1, 2, 3, …) to the component's `config`
//! tool, so an answer names the manifest it came from. Valid files are written
//! atomically (a temporary file, then a rename), as a deployment does; broken ones in
//! place, as a copy interrupted halfway leaves them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use toolhost_tests::{with_custom_section, write_atomically};

use crate::Pause;

/// The namespace set aside for churn; no other namespace is touched after the start.
pub const NAMESPACE: &str = "churn";

/// How often the writer takes a step.
pub const STEP_EVERY: Duration = Duration::from_secs(1);

/// The versions the writer has written. They are numbered 1, 2, 3, … in the order they
/// are written, and each is announced before its file is, so a version existed if and
/// only if it is between 1 and the last one announced.
#[derive(Default)]
pub struct Versions {
    last: AtomicU64,
}

impl Versions {
    fn announce(&self) -> u64 {
        self.last.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn last(&self) -> u64 {
        self.last.load(Ordering::SeqCst)
    }

    pub fn was_written(&self, version: u64) -> bool {
        (1..=self.last()).contains(&version)
    }
}

/// One thing the writer does to the namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// A manifest granting a new version, beside the same component.
    NewManifest,
    /// Different component bytes (a distinct file that behaves the same), same manifest.
    NewComponent,
    /// The first half of the component, as a copy caught mid-write.
    TruncatedComponent,
    /// The component header followed by noise.
    GarbageComponent,
    /// A manifest that does not load (a bad size, bad TOML, a tool the component lacks).
    InvalidManifest,
    /// The last good component and a manifest of a new version.
    Restore,
    /// The component, then its manifest, removed.
    RemoveFiles,
    /// The whole namespace directory removed.
    RemoveNamespace,
    /// A manifest of a new version, then the last good component, written back.
    ReAdd,
}

/// The writer's cycle: each breakage is followed by the step that repairs it.
const CYCLE: [Step; 12] = [
    Step::NewManifest,
    Step::NewComponent,
    Step::TruncatedComponent,
    Step::Restore,
    Step::GarbageComponent,
    Step::Restore,
    Step::InvalidManifest,
    Step::NewManifest,
    Step::RemoveFiles,
    Step::ReAdd,
    Step::RemoveNamespace,
    Step::ReAdd,
];

const INVALID_MANIFESTS: [&str; 3] = [
    "[limits]\nmemory = \"lots\"\n",
    "[grants\nconfig = { version = \n",
    "[tools.no_such_tool.limits]\ntimeout = \"1s\"\n",
];

pub struct Writer {
    dir: PathBuf,
    /// The hostile component's bytes, which every variant extends.
    base: Vec<u8>,
    /// The component bytes last written whole.
    good: Vec<u8>,
    variants: u64,
    invalid_manifests: usize,
    noise: u64,
    versions: Arc<Versions>,
    steps: BTreeMap<Step, u64>,
}

impl Writer {
    /// Writes the first state, version 1, into `<root>/churn/`.
    pub fn start(root: &Path, base: Vec<u8>, versions: Arc<Versions>) -> Writer {
        let mut writer = Writer {
            dir: root.join(NAMESPACE),
            good: base.clone(),
            base,
            variants: 0,
            invalid_manifests: 0,
            noise: 0x9e37_79b9_7f4a_7c15,
            versions,
            steps: BTreeMap::new(),
        };
        writer.take(Step::ReAdd);
        writer.steps.clear();
        writer
    }

    fn component(&self) -> PathBuf {
        self.dir.join(format!("{NAMESPACE}.wasm"))
    }

    fn manifest(&self) -> PathBuf {
        self.dir.join(format!("{NAMESPACE}.toml"))
    }

    fn write_new_manifest(&self) {
        let version = self.versions.announce();
        let text = format!("# written by the soak's writer\n[grants]\nconfig = {{ version = \"{version}\" }}\n");
        write_atomically(&self.manifest(), text.as_bytes());
    }

    fn write_good_component(&self) {
        write_atomically(&self.component(), &self.good);
    }

    /// Component header, then xorshift noise: past the magic number, nothing parses.
    fn garbage(&mut self) -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        for _ in 0..4096 {
            self.noise ^= self.noise << 13;
            self.noise ^= self.noise >> 7;
            self.noise ^= self.noise << 17;
            bytes.push(self.noise as u8);
        }
        bytes
    }

    pub fn take(&mut self, step: Step) {
        match step {
            Step::NewManifest => self.write_new_manifest(),
            Step::NewComponent => {
                self.variants += 1;
                self.good = with_custom_section(&self.base, "soak-variant", &self.variants.to_le_bytes());
                self.write_good_component();
            }
            Step::TruncatedComponent => std::fs::write(self.component(), &self.good[..self.good.len() / 2])
                .expect("write a truncated component"),
            Step::GarbageComponent => {
                let garbage = self.garbage();
                std::fs::write(self.component(), garbage).expect("write garbage");
            }
            Step::InvalidManifest => {
                let text = INVALID_MANIFESTS[self.invalid_manifests % INVALID_MANIFESTS.len()];
                self.invalid_manifests += 1;
                std::fs::write(self.manifest(), text).expect("write an invalid manifest");
            }
            Step::Restore => {
                self.write_good_component();
                self.write_new_manifest();
            }
            Step::RemoveFiles => {
                // The component first: a component never stands without its manifest.
                std::fs::remove_file(self.component()).expect("remove the component");
                std::fs::remove_file(self.manifest()).expect("remove the manifest");
            }
            Step::RemoveNamespace => std::fs::remove_dir_all(&self.dir).expect("remove the namespace"),
            Step::ReAdd => {
                std::fs::create_dir_all(&self.dir).expect("create the namespace");
                self.write_new_manifest();
                self.write_good_component();
            }
        }
        *self.steps.entry(step).or_default() += 1;
    }

    /// Takes one step of the cycle every [`STEP_EVERY`] (none while `pause` holds it)
    /// until `deadline`; returns how many of each it took.
    pub fn run_until(mut self, deadline: Instant, pause: &Pause) -> BTreeMap<Step, u64> {
        for step in CYCLE.iter().cycle() {
            std::thread::sleep(STEP_EVERY);
            pause.wait_while_requested();
            if Instant::now() >= deadline {
                break;
            }
            self.take(*step);
        }
        self.steps
    }
}
