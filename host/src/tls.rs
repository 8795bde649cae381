//! The one TLS client configuration of the host: webpki's root certificates, on ring.
//!
//! Every connection the host opens over TLS (a guest's outgoing HTTPS, an upstream MCP
//! server, an OAuth issuer's keys) trusts the same roots with the same provider, so a
//! change of trust is made here once.

use std::sync::{Arc, OnceLock};

/// The client configuration, built once per process.
pub(crate) fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default protocol versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// An HTTP client that writes small messages at once (`TCP_NODELAY`), verifies servers
/// with [`client_config`], and follows no redirect: what is sent to a configured URL
/// (credentials, or trust in its answer) goes there and nowhere else.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured((*client_config()).clone())
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}
