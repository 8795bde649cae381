//! `[engine]` and `[cache]`: the engine's ceilings and pool, and where compiled code is kept.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::runtime::{CacheSetting, EngineSettings, MAX_INSTANCES, MIN_MAX_MEMORY};
use crate::units::{Problem, parse_duration, parse_size};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEngine {
    max_memory: Option<Spanned<String>>,
    max_instances: Option<Spanned<u32>>,
    tiering: Option<Spanned<String>>,
    drop_idle_code_after: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCache {
    dir: Option<PathBuf>,
    enabled: Option<bool>,
    pub precompiled: Option<PathBuf>,
}

/// `[engine]`: the engine's ceilings and pool.
pub(super) fn engine_settings(raw: RawEngine) -> Result<EngineSettings, Problem> {
    let mut engine = EngineSettings::default();
    if let Some(max_memory) = raw.max_memory {
        let span = max_memory.span();
        engine.max_memory =
            parse_size(max_memory.get_ref()).map_err(|e| Problem::at(span.clone(), format!("`max_memory`: {e}")))?;
        if engine.max_memory < MIN_MAX_MEMORY {
            return Err(Problem::at(span, "`max_memory` must be at least 64 KiB (one WebAssembly page)"));
        }
    }
    if let Some(max_instances) = raw.max_instances {
        if !(1..=MAX_INSTANCES).contains(max_instances.get_ref()) {
            return Err(Problem::at(
                max_instances.span(),
                format!("`max_instances` must be between 1 and {MAX_INSTANCES}"),
            ));
        }
        engine.max_instances = max_instances.into_inner();
    }
    if let Some(tiering) = raw.tiering {
        engine.tiering =
            tiering.get_ref().parse().map_err(|e| Problem::at(tiering.span(), format!("`tiering`: {e}")))?;
    }
    if let Some(after) = raw.drop_idle_code_after {
        engine.drop_idle_code_after = parse_duration(after.get_ref())
            .map_err(|e| Problem::at(after.span(), format!("`drop_idle_code_after`: {e}")))?;
    }
    Ok(engine)
}

/// `[cache]`: where compiled code is cached (`dir`, relative to the configuration), or
/// nowhere.
pub(super) fn cache_setting(base: &Path, raw: &RawCache) -> CacheSetting {
    match (raw.enabled, &raw.dir) {
        (Some(false), _) => CacheSetting::Disabled,
        (_, Some(dir)) => CacheSetting::Dir(base.join(dir)),
        _ => CacheSetting::Default,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::HostConfig;

    #[test]
    fn max_instances_is_bounded_both_ways() {
        for text in ["0", "4097", "4294967295"] {
            let error =
                HostConfig::parse(Path::new("t.toml"), &format!("[engine]\nmax_instances = {text}\n")).unwrap_err();
            assert_eq!(error.line, 2, "{text}");
            assert!(error.problem.contains("between 1 and 4096"), "{text}: {error}");
        }
        let config = HostConfig::parse(Path::new("t.toml"), "[engine]\nmax_instances = 4096\n").unwrap();
        assert_eq!(config.engine.max_instances, 4096);
    }
}
