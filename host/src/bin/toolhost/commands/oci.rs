//! `toolhost pull` and `toolhost push`: components from and to OCI registries, pinned in `toolhost.lock`.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use toolhost::oci::{Lock, OciReference, PullMode};
use toolhost::{HostConfig, exit};

use super::HostOptions;
use crate::output::{fail, print_json};

#[derive(clap::Args)]
pub struct PullArgs {
    /// Resolve every tag again and move the pins to what the tags name now.
    #[arg(long, conflicts_with = "locked")]
    update: bool,
    /// Fetch exactly what toolhost.lock pins and never write it; a component it does
    /// not pin is an error (for replicas: every one runs the same bytes).
    #[arg(long)]
    locked: bool,
}

#[derive(clap::Args)]
pub struct PushArgs {
    /// The component file.
    file: PathBuf,
    /// Where: `oci://registry[:port]/repository[:tag]`.
    reference: String,
    /// Sign the pushed manifest with this ECDSA P-256 key (unencrypted PKCS#8 PEM),
    /// beside it in the registry as cosign does (`sha256-<digest>.sig`).
    #[arg(long, value_name = "KEY")]
    sign_key: Option<PathBuf>,
}

/// `toolhost pull`: the configuration's OCI components into their roots, pinned in the
/// lock beside the configuration file.
pub async fn pull(options: &HostOptions, args: PullArgs) -> anyhow::Result<ExitCode> {
    let mode = match (args.update, args.locked) {
        (true, _) => PullMode::Update,
        (_, true) => PullMode::Locked,
        _ => PullMode::Pin,
    };
    let Some(path) = HostConfig::locate(options.config.as_deref()) else {
        anyhow::bail!("no toolhost.toml here (or --config): it names what to pull and where the lock goes");
    };
    let config = HostConfig::load(&path)?;
    // A replica's `pull --locked` before it serves has nothing to do for a toolset
    // without OCI components; asked by hand, a pull of nothing is a mistake.
    if config.oci.is_empty() && mode != PullMode::Locked {
        anyhow::bail!("{} names no component by OCI reference ([layer.oci.NAMESPACE])", path.display());
    }
    let lock_path = Lock::path_for(&path);
    match toolhost::oci::pull(
        &config.oci,
        &config.layers,
        &config.oci_settings,
        &lock_path,
        (mode, &config.signing_keys),
    )
    .await
    {
        Ok(pulled) => {
            print_json(&json!({ "lock": lock_path, "components": pulled }));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail("oci", &e.to_string(), exit::LOAD)),
    }
}

/// `toolhost push FILE REFERENCE`.
pub async fn push(options: &HostOptions, args: PushArgs) -> anyhow::Result<ExitCode> {
    let settings = options.config()?.oci_settings;
    let reference = OciReference::parse(&args.reference).map_err(anyhow::Error::msg)?;
    let key = args.sign_key.as_deref().map(toolhost::trust::PrivateKey::load).transpose()?;
    match toolhost::oci::push(&args.file, &reference, &settings, key.as_ref()).await {
        Ok(pushed) => {
            print_json(&serde_json::to_value(pushed)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail("oci", &e.to_string(), exit::LOAD)),
    }
}
