//! The issuer's signing keys: found through its metadata, read from its JWKS, read again when a token names a new one.
//!
//! Keys are read on first need and kept for [`MAX_AGE`], then read again in the
//! background while they go on serving, so a slow issuer slows no request whose key is
//! known. A token naming a key not among them waits for them to be read again (the
//! issuer rotated), but not more often than once per [`MIN_INTERVAL`], so tokens with
//! made-up key ids cannot make the server flood the issuer. While the issuer cannot be
//! reached, the keys read last keep serving.
//! Only keys for signatures with an asymmetric algorithm are kept: a symmetric key
//! published by mistake verifies nothing, and an `alg` of `none` or `HS256` in a token
//! never selects a key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Header};
use serde_json::Value;

use super::{OAuthSettings, Refusal};

/// How long keys read are used before they are read again.
const MAX_AGE: Duration = Duration::from_secs(300);
/// The least time between two reads prompted by a token naming an unknown key.
const MIN_INTERVAL: Duration = Duration::from_secs(2);
/// How long one read of metadata or keys may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest metadata document or key set read.
const MAX_DOCUMENT: usize = 256 << 10;

/// One key the issuer signs with, and the algorithms it verifies.
pub(super) struct SigningKey {
    id: Option<String>,
    algorithms: Vec<Algorithm>,
    pub(super) decoding: DecodingKey,
}

/// The keys read at one time.
#[derive(Default)]
struct KeySet {
    keys: Vec<Arc<SigningKey>>,
    /// When they were read; `None`: never.
    read_at: Option<Instant>,
    /// When a read was last tried, whether or not it succeeded.
    tried_at: Option<Instant>,
}

impl KeySet {
    fn find(&self, header: &Header) -> Option<Arc<SigningKey>> {
        let fits = |key: &&Arc<SigningKey>| key.algorithms.contains(&header.alg);
        match &header.kid {
            Some(id) => self.keys.iter().filter(fits).find(|key| key.id.as_deref() == Some(id.as_str())).cloned(),
            // Without a key id, only an issuer with one key for the algorithm is unambiguous.
            None => {
                let mut candidates = self.keys.iter().filter(fits);
                candidates.next().filter(|_| candidates.next().is_none()).cloned()
            }
        }
    }

    fn is_fresh(&self) -> bool {
        self.read_at.is_some_and(|at| at.elapsed() < MAX_AGE)
    }
}

/// The keys of one issuer, read as needed.
pub(super) struct IssuerKeys {
    issuer: String,
    configured_jwks: Option<String>,
    http: reqwest::Client,
    current: ArcSwap<KeySet>,
    /// Held while keys are read (one read at a time); holds the JWKS address once the
    /// issuer's metadata named it.
    reading: tokio::sync::Mutex<Option<String>>,
    /// How many times keys were read: a token verified with keys of an earlier read is
    /// verified again.
    generation: std::sync::atomic::AtomicU64,
}

impl IssuerKeys {
    pub(super) fn new(settings: &OAuthSettings) -> Result<IssuerKeys, String> {
        Ok(IssuerKeys {
            issuer: settings.issuer.clone(),
            configured_jwks: settings.jwks_uri.clone(),
            http: crate::tls::http_client()?,
            current: ArcSwap::from_pointee(KeySet::default()),
            reading: tokio::sync::Mutex::new(None),
            generation: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Which read of the keys is in use; starts a read in the background when they are
    /// stale.
    pub(super) fn generation(self: &Arc<Self>) -> u64 {
        let seen = self.current.load_full();
        self.read_again_if_stale(seen);
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Reads the keys again in the background when `seen` is stale, unless a read is
    /// under way.
    fn read_again_if_stale(self: &Arc<Self>, seen: Arc<KeySet>) {
        if seen.read_at.is_some() && !seen.is_fresh() && self.reading.try_lock().is_ok() {
            let keys = self.clone();
            tokio::spawn(async move { keys.read_again(seen).await });
        }
    }

    /// The key that verifies a token with `header`.
    pub(super) async fn key_for(self: &Arc<Self>, header: &Header) -> Result<Arc<SigningKey>, Refusal> {
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(Refusal::Invalid("the token is signed with an algorithm this server does not accept"));
        }
        let seen = self.current.load_full();
        if let Some(key) = seen.find(header) {
            self.read_again_if_stale(seen);
            return Ok(key);
        }
        let now = self.read_again(seen).await?;
        now.find(header).ok_or(Refusal::Invalid("the token is signed by a key the issuer does not publish"))
    }

    /// The keys after reading them again, unless another request just did or the last
    /// try was too recent; the keys read before when the issuer cannot be reached.
    async fn read_again(&self, seen: Arc<KeySet>) -> Result<Arc<KeySet>, Refusal> {
        let mut jwks_uri = self.reading.lock().await;
        let now = self.current.load_full();
        let tried_lately = now.tried_at.is_some_and(|at| at.elapsed() < MIN_INTERVAL);
        if !Arc::ptr_eq(&now, &seen) || tried_lately {
            return known(now);
        }
        let next = match self.read(&mut jwks_uri).await {
            Ok(keys) => {
                tracing::info!(issuer = %self.issuer, keys = keys.len(), "read the OAuth issuer's signing keys");
                self.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                KeySet { keys, read_at: Some(Instant::now()), tried_at: Some(Instant::now()) }
            }
            Err(error) => {
                tracing::warn!(issuer = %self.issuer, "cannot read the OAuth issuer's signing keys: {error}");
                KeySet { keys: now.keys.clone(), read_at: now.read_at, tried_at: Some(Instant::now()) }
            }
        };
        let next = Arc::new(next);
        self.current.store(next.clone());
        known(next)
    }

    /// The issuer's keys, its JWKS address found first when not configured.
    async fn read(&self, jwks_uri: &mut Option<String>) -> Result<Vec<Arc<SigningKey>>, String> {
        let uri = match (&self.configured_jwks, &*jwks_uri) {
            (Some(uri), _) | (None, Some(uri)) => uri.clone(),
            (None, None) => jwks_uri.insert(self.discover().await?).clone(),
        };
        let set = fetch_json(&self.http, &uri).await.inspect_err(|_| {
            // The issuer's metadata may name another address by now.
            jwks_uri.take();
        })?;
        let keys = set.get("keys").and_then(Value::as_array).ok_or_else(|| format!("{uri} has no `keys` list"))?;
        Ok(keys.iter().filter_map(signing_key).map(Arc::new).collect())
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414's address first, then OpenID
    /// Connect's. The metadata must name this very issuer.
    async fn discover(&self) -> Result<String, String> {
        let mut failures = Vec::new();
        for address in metadata_addresses(&self.issuer)? {
            match fetch_json(&self.http, &address).await {
                Ok(metadata) if metadata.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) => {
                    failures.push(format!("{address} is the metadata of another issuer"));
                }
                Ok(metadata) => {
                    let uri = metadata.get("jwks_uri").and_then(Value::as_str);
                    let uri = uri.ok_or_else(|| format!("{address} names no `jwks_uri`"))?;
                    check_address(uri).map_err(|e| format!("{address}: `jwks_uri` {e}"))?;
                    return Ok(uri.to_owned());
                }
                Err(error) => failures.push(error),
            }
        }
        Err(failures.join("; "))
    }
}

/// `keys`, unless none was ever read.
fn known(keys: Arc<KeySet>) -> Result<Arc<KeySet>, Refusal> {
    match keys.read_at {
        Some(_) => Ok(keys),
        None => Err(Refusal::KeysUnavailable),
    }
}

/// The algorithms a token may be signed with.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// A signature key of a JWKS entry, with the algorithms it may verify (its `alg`, else
/// every one its type and curve allow); `None` for encryption and symmetric keys and
/// for entries that do not parse.
fn signing_key(entry: &Value) -> Option<SigningKey> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))) {
        return None;
    }
    let by_type: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &ASYMMETRIC[..6],
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => &[Algorithm::ES256],
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P384 => &[Algorithm::ES384],
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
        _ => return None,
    };
    let algorithms = match jwk.common.key_algorithm {
        Some(declared) => by_type.iter().copied().filter(|alg| Some(*alg) == algorithm_of(declared)).collect(),
        None => by_type.to_vec(),
    };
    let decoding = DecodingKey::from_jwk(&jwk).ok()?;
    (!algorithms.is_empty()).then_some(SigningKey { id: jwk.common.key_id, algorithms, decoding })
}

fn algorithm_of(declared: KeyAlgorithm) -> Option<Algorithm> {
    Some(match declared {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Where an issuer's metadata may be: RFC 8414's well-known address (inserted before
/// the issuer's path), then OpenID Connect Discovery's (appended to it).
fn metadata_addresses(issuer: &str) -> Result<[String; 2], String> {
    let url = url::Url::parse(issuer).map_err(|e| format!("the issuer `{issuer}` is not a URL: {e}"))?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    Ok([
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ])
}

/// Refuses addresses the host would read trust from in the clear: only `https`, or
/// `http` to this machine's loopback interface.
pub(crate) fn check_address(address: &str) -> Result<(), String> {
    let url = url::Url::parse(address).map_err(|e| format!("is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err("must be an https:// address (http:// only to a loopback address)".into()),
    }
}

/// The JSON document at `address`, read within [`FETCH_TIMEOUT`] and [`MAX_DOCUMENT`].
async fn fetch_json(http: &reqwest::Client, address: &str) -> Result<Value, String> {
    let read = async {
        let mut response = http.get(address).send().await.map_err(|e| format!("{address}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{address} answered HTTP {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("{address}: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(format!("{address} sent more than {} KiB", MAX_DOCUMENT >> 10));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("{address} sent no JSON: {e}"))
    };
    tokio::time::timeout(FETCH_TIMEOUT, read)
        .await
        .unwrap_or_else(|_| Err(format!("{address} took over {FETCH_TIMEOUT:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_looked_for_where_both_specifications_put_it() {
        assert_eq!(
            metadata_addresses("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server".to_owned(),
                "https://auth.example.com/.well-known/openid-configuration".to_owned()
            ]
        );
        assert_eq!(
            metadata_addresses("https://auth.example.com/realms/tools/").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/realms/tools".to_owned(),
                "https://auth.example.com/realms/tools/.well-known/openid-configuration".to_owned()
            ]
        );
    }

    #[test]
    fn trust_is_read_over_tls_or_from_loopback_only() {
        assert!(check_address("https://auth.example.com/jwks").is_ok());
        assert!(check_address("http://127.0.0.1:9000/jwks").is_ok());
        assert!(check_address("http://[::1]:9000/jwks").is_ok());
        assert!(check_address("http://localhost/jwks").is_ok());
        assert!(check_address("http://auth.example.com/jwks").is_err());
        assert!(check_address("http://10.0.0.1/jwks").is_err());
        assert!(check_address("file:///etc/jwks").is_err());
        assert!(check_address("jwks").is_err());
    }

    #[test]
    fn only_asymmetric_signature_keys_are_kept() {
        let ec = json!({"kty": "EC", "crv": "P-256", "kid": "e1",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
        let key = signing_key(&ec).expect("a P-256 key");
        assert_eq!((key.id.as_deref(), key.algorithms.as_slice()), (Some("e1"), &[Algorithm::ES256][..]));
        let mut encryption = ec.clone();
        encryption["use"] = json!("enc");
        assert!(signing_key(&encryption).is_none());
        let mut declared_otherwise = ec.clone();
        declared_otherwise["alg"] = json!("ES384");
        assert!(signing_key(&declared_otherwise).is_none(), "a P-256 key cannot verify ES384");
        assert!(signing_key(&json!({"kty": "oct", "k": "c2VjcmV0", "kid": "s"})).is_none());
        assert!(signing_key(&json!({"kty": "RSA", "kid": "r"})).is_none(), "an entry that does not parse");
    }

    #[test]
    fn a_token_without_a_key_id_needs_a_single_candidate() {
        let ec = |kid: &str| {
            let entry = json!({"kty": "EC", "crv": "P-256", "kid": kid,
                "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
            Arc::new(signing_key(&entry).unwrap())
        };
        let one = KeySet { keys: vec![ec("a")], ..KeySet::default() };
        let two = KeySet { keys: vec![ec("a"), ec("b")], ..KeySet::default() };
        let header = Header::new(Algorithm::ES256);
        assert!(one.find(&header).is_some());
        assert!(two.find(&header).is_none());
        let named = Header { kid: Some("b".into()), ..Header::new(Algorithm::ES256) };
        assert_eq!(two.find(&named).and_then(|key| key.id.clone()).as_deref(), Some("b"));
        let other_alg = Header { kid: Some("b".into()), ..Header::new(Algorithm::RS256) };
        assert!(two.find(&other_alg).is_none());
    }
}
