//! Reading from a registry within bounds: a manifest's bytes, and a blob as it downloads.

use oci_client::{Client, Reference};

use super::artifact;

/// The most bytes of a manifest read: the limit the OCI distribution specification
/// suggests registries enforce. A component's manifest is well under 1 KiB.
pub(crate) const MAX_MANIFEST_SIZE: usize = 4 << 20;

/// The Docker image manifest's media type, which registries also serve.
const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// The manifest's bytes, read within [`MAX_MANIFEST_SIZE`] (the OCI client reads any
/// size a registry sends), and the digest the registry named for it, if any. The
/// request is the client's: its scheme, its credentials (a token it obtained, or the
/// basic credentials), and the same trust in certificates.
pub(super) async fn manifest_bytes(
    client: &Client,
    plain_http: &[String],
    target: &Reference,
    auth: &oci_client::secrets::RegistryAuth,
) -> Result<(Vec<u8>, String), String> {
    use oci_client::RegistryOperation;
    use oci_client::secrets::RegistryAuth;
    let token = client.auth(target, auth, RegistryOperation::Pull).await.map_err(|e| e.to_string())?;
    let registry = target.resolve_registry();
    let scheme = if plain_http.iter().any(|plain| plain == registry) { "http" } else { "https" };
    let reference = target.digest().or(target.tag()).unwrap_or("latest");
    let url = format!("{scheme}://{registry}/v2/{}/manifests/{reference}", target.repository());
    let http = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    // Cosign wrote signatures as Docker manifests before it wrote OCI ones; the shape is the same.
    let accept = format!("{}, {DOCKER_MANIFEST_MEDIA_TYPE}", artifact::MANIFEST_MEDIA_TYPE);
    let mut request = http.get(&url).header(reqwest::header::ACCEPT, accept);
    request = match (token, auth) {
        (Some(token), _) => request.bearer_auth(token),
        (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
        (None, _) => request,
    };
    let mut response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered HTTP {status}"));
    }
    let over = || format!("the registry's manifest is over {} MiB, the most read", MAX_MANIFEST_SIZE >> 20);
    if response.content_length().is_some_and(|length| length > MAX_MANIFEST_SIZE as u64) {
        return Err(over());
    }
    let said = response
        .headers()
        .get("Docker-Content-Digest")
        .and_then(|digest| digest.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_MANIFEST_SIZE {
            return Err(over());
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, said))
}

/// A blob as it downloads, refused past the size its manifest gives: a registry cannot
/// make a pull hold more than it announced (and at most [`MAX_COMPONENT_SIZE`]).
pub(super) struct Bounded {
    pub bytes: Vec<u8>,
    pub limit: u64,
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.bytes.len() as u64 + buf.len() as u64 > this.limit {
            let problem = format!("more than the {} bytes its manifest gives", this.limit);
            return std::task::Poll::Ready(Err(std::io::Error::other(problem)));
        }
        this.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}
