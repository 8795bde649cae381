//! What bytes may run: a component's pinned digest and its cosign signature, checked before anything compiles it.
//!
//! What bytes may run. A component can be pinned to a SHA-256 digest (`sha256 = "…"` in
//! its manifest, and by `toolhost.lock` when it was pulled from an OCI registry), and when the operator configures signing keys (`[signatures]` in
//! `toolhost.toml`) it must carry a valid cosign signature by one of them. Both are
//! checked on the bytes just read, before the compile cache is asked or anything is
//! compiled: bytes that fail are never treated as code, and the version served until
//! then keeps serving.
//!
//! Signatures are cosign's keyed blob signatures, as `cosign sign-blob --key cosign.key
//! --output-signature tool.wasm.sig tool.wasm` writes them: ECDSA P-256 over the
//! SHA-256 of the file, DER, base64, in `<name>.wasm.sig` beside the component. Keys are
//! the PEM public keys `cosign generate-key-pair` writes (`cosign.pub`); `cosign
//! verify-blob --key cosign.pub --signature tool.wasm.sig tool.wasm` accepts exactly
//! what this module accepts.

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey;
use sha2::Digest as _;

use crate::error::LoadErrorKind;
use crate::text::{bounded, read_file_bounded};

/// A SHA-256 digest, shown (and written in pins) as `sha256:<64 hex digits>`, the form
/// OCI registries and cosign use.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256([u8; 32]);

impl Sha256 {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256 {
        Sha256(sha2::Sha256::digest(bytes).into())
    }

    /// Reads `sha256:<hex>` or bare `<hex>` (64 hex digits, either case).
    pub fn parse(text: &str) -> Result<Sha256, String> {
        let hex = text.strip_prefix("sha256:").unwrap_or(text);
        decode_hex32(hex).map(Sha256).ok_or_else(|| {
            format!("`{}` is not a SHA-256 digest (`sha256:` and 64 hex digits)", bounded(text.into(), 80))
        })
    }

    /// The 32 bytes.
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// 32 bytes written as 64 hex digits (either case); `None` for anything else.
pub(crate) fn decode_hex32(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut bytes = [0u8; 32];
    for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(bytes)
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl serde::Serialize for Sha256 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The public keys whose signatures the operator accepts; none means signatures are
/// not required (and not checked).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SigningKeys {
    keys: Vec<SigningKey>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SigningKey {
    path: PathBuf,
    key: VerifyingKey,
}

/// A public key file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("signing key {}: {problem}", .path.display())]
pub struct KeyError {
    /// The key file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: String,
}

impl SigningKeys {
    /// No keys: components need no signature.
    pub fn none() -> SigningKeys {
        SigningKeys::default()
    }

    /// Reads PEM public keys (`-----BEGIN PUBLIC KEY-----`, ECDSA P-256, as `cosign
    /// generate-key-pair` writes them).
    pub fn load(paths: impl IntoIterator<Item = impl Into<PathBuf>>) -> Result<SigningKeys, KeyError> {
        let mut keys = SigningKeys::none();
        for path in paths {
            keys.add(path.into())?;
        }
        Ok(keys)
    }

    /// Reads one more PEM public key.
    pub fn add(&mut self, path: PathBuf) -> Result<(), KeyError> {
        let problem = |problem: String| KeyError { path: path.clone(), problem };
        let pem = read_file_bounded(&path, MAX_KEY_FILE).map_err(|e| problem(format!("cannot read: {e}")))?;
        let key = p256::PublicKey::from_public_key_pem(pem.trim())
            .map_err(|e| problem(format!("not a PEM ECDSA P-256 public key (cosign's `cosign.pub` form): {e}")))?;
        self.keys.push(SigningKey { path, key: VerifyingKey::from(&key) });
        Ok(())
    }

    /// Whether components must be signed.
    pub fn required(&self) -> bool {
        !self.keys.is_empty()
    }

    /// The key files, in the order given.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.keys.iter().map(|key| key.path.as_path())
    }

    /// The key whose cosign signature (DER, base64) over `payload` this is, when one
    /// of them made it.
    pub fn payload_signer(&self, payload: &[u8], signature: &str) -> Option<&Path> {
        let der = base64::engine::general_purpose::STANDARD.decode(signature.trim()).ok()?;
        self.signer(&Sha256::of(payload), &Signature::from_der(&der).ok()?)
    }

    /// The key that signed `digest`, when one of them did.
    fn signer(&self, digest: &Sha256, signature: &Signature) -> Option<&Path> {
        self.keys
            .iter()
            .find(|key| key.key.verify_prehash(digest.bytes(), signature).is_ok())
            .map(|key| key.path.as_path())
    }
}

/// A private key that signs what `toolhost push --sign-key` publishes: ECDSA P-256, in
/// an unencrypted PKCS#8 PEM file (`-----BEGIN PRIVATE KEY-----`).
pub struct PrivateKey {
    key: p256::ecdsa::SigningKey,
}

impl PrivateKey {
    /// Reads the key at `path`; errors name the file, never the key.
    pub fn load(path: &Path) -> Result<PrivateKey, KeyError> {
        use p256::pkcs8::DecodePrivateKey;
        let problem = |problem: String| KeyError { path: path.to_owned(), problem };
        let pem = read_file_bounded(path, MAX_KEY_FILE).map_err(|e| problem(format!("cannot read: {e}")))?;
        if pem.contains("ENCRYPTED") {
            return Err(problem(
                "is password-encrypted (as `cosign generate-key-pair` writes keys); give an unencrypted PKCS#8 \
                 ECDSA P-256 key (`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`)"
                    .into(),
            ));
        }
        let key = p256::SecretKey::from_pkcs8_pem(pem.trim())
            .map_err(|_| problem("not a PEM PKCS#8 ECDSA P-256 private key".into()))?;
        Ok(PrivateKey { key: p256::ecdsa::SigningKey::from(&key) })
    }

    /// The signature of `bytes` as cosign writes it: ECDSA over their SHA-256, DER, base64.
    pub fn sign(&self, bytes: &[u8]) -> Result<String, String> {
        use p256::ecdsa::signature::hazmat::PrehashSigner;
        let signature: Signature = self.key.sign_prehash(Sha256::of(bytes).bytes()).map_err(|e| e.to_string())?;
        Ok(base64::engine::general_purpose::STANDARD.encode(signature.to_der()))
    }
}

/// Where a component's signature is: `<name>.wasm.sig` beside `<name>.wasm`.
pub fn signature_path(component: &Path) -> PathBuf {
    let mut path = component.as_os_str().to_owned();
    path.push(".sig");
    PathBuf::from(path)
}

/// The longest signature file read: a DER P-256 signature is at most 72 bytes, 96 in
/// base64; the bound keeps a wrong file from being read whole.
const MAX_SIGNATURE_FILE: u64 = 4096;

/// The longest key file read: a PEM P-256 key is a few hundred bytes.
const MAX_KEY_FILE: u64 = 16 << 10;

/// What was checked of a component's bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// The digest of the bytes served.
    pub sha256: Sha256,
    /// The files that pinned it to that digest (its manifest, `toolhost.lock`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pinned_by: Vec<PathBuf>,
    /// The key whose signature it carries, when signatures are required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<PathBuf>,
}

/// A pin on a component's bytes, and what set it (for the error that names both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The digest the bytes must have.
    pub sha256: Sha256,
    /// The file that says so.
    pub by: PathBuf,
    /// The key whose signature of these bytes `toolhost pull` found in the registry
    /// and checked (`toolhost.lock` records it): it stands for a `.sig` file.
    pub signed_by: Option<PathBuf>,
}

/// Checks the bytes of the component at `path` against its pins (each must hold) and,
/// when keys are configured, its signature. `None` when there was nothing to check. CPU-bound for
/// large components (one SHA-256 pass); call it off the executor.
pub fn verify(path: &Path, bytes: &[u8], pins: &[Pin], keys: &SigningKeys) -> Result<Option<Verified>, LoadErrorKind> {
    if pins.is_empty() && !keys.required() {
        return Ok(None);
    }
    let sha256 = Sha256::of(bytes);
    if let Some(pin) = pins.iter().find(|pin| pin.sha256 != sha256) {
        return Err(LoadErrorKind::PinMismatch {
            pinned: pin.sha256.to_string(),
            actual: sha256.to_string(),
            pinned_by: pin.by.clone(),
        });
    }
    let signed_at_pull =
        pins.iter().filter_map(|pin| pin.signed_by.as_deref()).find(|key| keys.paths().any(|k| k == *key));
    let signed_by = match signed_at_pull {
        _ if !keys.required() => None,
        Some(key) => Some(key.to_owned()),
        None => Some(check_signature(path, &sha256, keys)?.to_owned()),
    };
    Ok(Some(Verified { sha256, pinned_by: pins.iter().map(|pin| pin.by.clone()).collect(), signed_by }))
}

fn check_signature<'k>(path: &Path, sha256: &Sha256, keys: &'k SigningKeys) -> Result<&'k Path, LoadErrorKind> {
    let signature_file = signature_path(path);
    let shown = signature_file.display();
    let unsigned = |problem: String| LoadErrorKind::Signature(problem);
    let text = read_file_bounded(&signature_file, MAX_SIGNATURE_FILE).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => unsigned(format!(
            "unsigned: `[signatures]` in toolhost.toml requires a signature, and {shown} does not exist"
        )),
        std::io::ErrorKind::FileTooLarge => unsigned(format!(
            "cannot read its signature {shown}: it is over {MAX_SIGNATURE_FILE} bytes, not a signature"
        )),
        _ => unsigned(format!("cannot read its signature {shown}: {e}")),
    })?;
    let der = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| unsigned(format!("{shown} is not base64 (as `cosign sign-blob` writes signatures): {e}")))?;
    let signature = Signature::from_der(&der)
        .map_err(|_| unsigned(format!("{shown} does not hold a DER-encoded ECDSA P-256 signature")))?;
    keys.signer(sha256, &signature).ok_or_else(|| {
        let keys: Vec<String> = keys.paths().map(|path| path.display().to_string()).collect();
        unsigned(format!(
            "the signature in {shown} is not valid for these bytes ({sha256}) under any configured key ({})",
            keys.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_read_both_forms_and_refuse_the_rest() {
        let digest = Sha256::of(b"abc");
        let shown = digest.to_string();
        assert_eq!(shown, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(Sha256::parse(&shown), Ok(digest));
        assert_eq!(Sha256::parse(&shown["sha256:".len()..].to_uppercase()), Ok(digest));
        for wrong in ["", "sha256:", "sha512:ba78", &shown[..70], &format!("{shown}00"), &shown.replace('b', "g")] {
            assert!(Sha256::parse(wrong).is_err(), "{wrong}");
        }
        let error = Sha256::parse(&"é".repeat(32)).unwrap_err();
        assert!(error.contains("not a SHA-256 digest"), "{error}");
    }

    #[test]
    fn nothing_to_check_costs_nothing() {
        assert_eq!(verify(Path::new("x.wasm"), b"bytes", &[], &SigningKeys::none()), Ok(None));
    }

    #[test]
    fn a_pin_names_both_digests() {
        let by = Path::new("tools/ns/x.toml");
        let pin = Pin { sha256: Sha256::of(b"old"), by: by.to_owned(), signed_by: None };
        let error = verify(Path::new("x.wasm"), b"new", &[pin], &SigningKeys::none()).unwrap_err().to_string();
        assert!(error.contains(&Sha256::of(b"old").to_string()), "{error}");
        assert!(error.contains(&Sha256::of(b"new").to_string()), "{error}");
        assert!(error.contains("tools/ns/x.toml"), "{error}");
        let pin = Pin { sha256: Sha256::of(b"new"), by: by.to_owned(), signed_by: None };
        let lock = Pin { sha256: Sha256::of(b"new"), by: "toolhost.lock".into(), signed_by: None };
        let verified =
            verify(Path::new("x.wasm"), b"new", &[pin.clone(), lock], &SigningKeys::none()).unwrap().unwrap();
        assert_eq!(verified.pinned_by, [by, Path::new("toolhost.lock")]);
        let stale = Pin { sha256: Sha256::of(b"old"), by: "toolhost.lock".into(), signed_by: None };
        let error = verify(Path::new("x.wasm"), b"new", &[pin, stale], &SigningKeys::none()).unwrap_err();
        assert!(error.to_string().contains("toolhost.lock pins"), "every pin must hold: {error}");
    }

    /// A key pair as `cosign generate-key-pair` makes one, and `cosign sign-blob`'s
    /// signature file for `bytes`.
    fn signer(dir: &Path, name: &str, secret: u8) -> (PathBuf, impl Fn(&[u8]) -> String) {
        use p256::ecdsa::signature::hazmat::PrehashSigner;
        use p256::pkcs8::EncodePublicKey;
        let key = p256::ecdsa::SigningKey::from_slice(&[secret; 32]).unwrap();
        let public = dir.join(name);
        std::fs::write(&public, key.verifying_key().to_public_key_pem(Default::default()).unwrap()).unwrap();
        let sign = move |bytes: &[u8]| {
            let signature: Signature = key.sign_prehash(Sha256::of(bytes).bytes()).unwrap();
            base64::engine::general_purpose::STANDARD.encode(signature.to_der())
        };
        (public, sign)
    }

    #[test]
    fn a_signature_by_a_configured_key_over_these_bytes_and_nothing_else_passes() {
        let dir = tempfile::tempdir().unwrap();
        let (ours, sign) = signer(dir.path(), "ours.pub", 7);
        let (theirs, sign_theirs) = signer(dir.path(), "theirs.pub", 9);
        let keys = SigningKeys::load([&theirs, &ours]).unwrap();
        let wasm = dir.path().join("tool.wasm");
        let check = |bytes: &[u8]| verify(&wasm, bytes, &[], &keys).map(|v| v.unwrap().signed_by);

        let error = check(b"component").unwrap_err().to_string();
        assert!(error.contains("unsigned") && error.contains("tool.wasm.sig does not exist"), "{error}");

        std::fs::write(signature_path(&wasm), format!("{}\n", sign(b"component"))).unwrap();
        assert_eq!(check(b"component"), Ok(Some(ours.clone())));
        let error = check(b"other bytes").unwrap_err().to_string();
        assert!(error.contains("not valid for these bytes") && error.contains("ours.pub"), "{error}");

        std::fs::write(signature_path(&wasm), sign_theirs(b"component")).unwrap();
        assert_eq!(check(b"component"), Ok(Some(theirs)), "either key will do");
        let only_ours = SigningKeys::load([&ours]).unwrap();
        assert!(verify(&wasm, b"component", &[], &only_ours).is_err(), "a key not configured will not");

        std::fs::write(signature_path(&wasm), "not base64!").unwrap();
        let error = check(b"component").unwrap_err().to_string();
        assert!(error.contains("is not base64"), "{error}");
        std::fs::write(signature_path(&wasm), "aGVsbG8=").unwrap();
        let error = check(b"component").unwrap_err().to_string();
        assert!(error.contains("DER-encoded ECDSA P-256"), "{error}");
        std::fs::write(signature_path(&wasm), "A".repeat(1 << 20)).unwrap();
        let error = check(b"component").unwrap_err().to_string();
        assert!(error.contains("not a signature"), "{error}");
    }

    #[test]
    fn a_key_file_that_is_no_p256_public_key_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cosign.pub");
        std::fs::write(&path, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n").unwrap();
        let error = SigningKeys::load([&path]).unwrap_err();
        assert_eq!(error.path, path);
        assert!(error.problem.contains("P-256"), "{error}");
        let error = SigningKeys::load([dir.path().join("missing.pub")]).unwrap_err();
        assert!(error.problem.contains("cannot read"), "{error}");
    }
}
