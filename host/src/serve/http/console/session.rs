//! Signing in to the console: an operator's token for a sealed cookie, and the CSRF token of each sign-in.
//!
//! The cookie holds its expiry, a nonce and the operator's name, sealed (HMAC-SHA256)
//! with a key derived from the server's approval key, together with the digest of the
//! token the operator signed in with. So replicas sharing `[http] approval_key` accept
//! each other's sign-ins, and a sign-in ends when its time is up or when the operator's
//! token is replaced or removed from `toolhost.toml`. It is `HttpOnly` and
//! `SameSite=Strict`, so neither another site's page nor the console's own script can
//! use it elsewhere; a request that changes anything must also carry the sign-in's CSRF
//! token (`X-CSRF-Token`), which only a page of the console can read.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use subtle::ConstantTimeEq;

use super::{Console, body_within, error};
use crate::serve::Tokens;
use crate::serve::mcp::ApprovalKey;
use crate::text::Escaped;

/// The sign-in cookie's name.
pub(super) const COOKIE: &str = "toolhost_console";
/// The header that carries the CSRF token.
pub(super) const CSRF_HEADER: &str = "x-csrf-token";
/// How long a refused sign-in takes, so that guessing is slow.
const REFUSAL_DELAY: Duration = Duration::from_millis(300);

/// Who is signed in on a request, and the CSRF token of their sign-in.
#[derive(Debug, Clone)]
pub(super) struct Operator {
    pub name: String,
    pub csrf: String,
    /// When the sign-in ends: what it opened (a live stream) ends then too.
    pub expires: SystemTime,
}

/// Seals and opens sign-ins.
pub(super) struct Sessions {
    key: [u8; 32],
    operators: Tokens,
    lifetime: Duration,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

impl Sessions {
    pub(super) fn new(approval_key: &ApprovalKey, operators: Tokens, lifetime: Duration) -> Sessions {
        Sessions { key: approval_key.derive("console sign-in"), operators, lifetime }
    }

    fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        use hmac::Mac;
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        for part in parts {
            // Each part's length first, so that no two lists of parts seal alike.
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// The cookie value of a sign-in by `name` with the token of `digest`, made `now`.
    fn seal(&self, name: &str, digest: &[u8; 32], now: SystemTime) -> Option<String> {
        let expires = (now + self.lifetime).duration_since(UNIX_EPOCH).ok()?.as_secs().to_string();
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).ok()?;
        let nonce = hex(&nonce);
        let mac = self.mac(&[b"sign-in", expires.as_bytes(), nonce.as_bytes(), name.as_bytes(), digest]);
        Some(format!("{expires}.{nonce}.{}.{}", hex(name.as_bytes()), hex(&mac)))
    }

    /// The operator a cookie value stands for, if it is sealed by this key, not expired,
    /// and their token is still the one they signed in with.
    fn open(&self, value: &str, now: SystemTime) -> Option<Operator> {
        let mut parts = value.splitn(4, '.');
        let (expires, nonce, name, mac) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        // A time past what the clock can hold is refused, never a panic.
        let expires_at = UNIX_EPOCH.checked_add(Duration::from_secs(expires.parse().ok()?))?;
        if expires_at < now {
            return None;
        }
        let name = String::from_utf8(unhex(name)?).ok()?;
        let mac = unhex(mac)?;
        let matches = self.operators.digests_of(&name).any(|digest| {
            let expected = self.mac(&[b"sign-in", expires.as_bytes(), nonce.as_bytes(), name.as_bytes(), digest]);
            bool::from(expected.as_slice().ct_eq(&mac))
        });
        let csrf = hex(&self.mac(&[b"csrf", nonce.as_bytes()]));
        matches.then_some(Operator { name, csrf, expires: expires_at })
    }

    /// The operator a request's cookie stands for.
    fn operator_of(&self, headers: &HeaderMap) -> Option<Operator> {
        let now = SystemTime::now();
        cookie_values(headers, COOKIE).find_map(|value| self.open(value, now))
    }
}

/// The values of the cookies named `name` a request carries.
fn cookie_values<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(move |pair| pair.trim().strip_prefix(name)?.strip_prefix('='))
}

fn cookie(value: &str, max_age: u64) -> HeaderValue {
    let text = format!("{COOKIE}={value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={max_age}");
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("toolhost_console=; Max-Age=0"))
}

fn see_other(location: &'static str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response()
}

/// `POST /console/login` with `token=…` (a form): a sign-in cookie and the tools page,
/// or back to the sign-in page saying it failed.
pub(super) async fn sign_in(State(console): State<Arc<Console>>, request: Request) -> Response {
    let body = match body_within(request.into_body(), &console.limits).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let token = url::form_urlencoded::parse(&body).find(|(key, _)| key == "token").map(|(_, token)| token);
    let token = token.as_deref().map(str::trim).unwrap_or_default();
    let digest = crate::serve::digest(token);
    let sessions = &console.sessions;
    let signed_in = sessions.operators.agent_for_digest(&digest).map(str::to_owned);
    let sealed = signed_in.as_deref().and_then(|name| Some((name, sessions.seal(name, &digest, SystemTime::now())?)));
    let Some((name, sealed)) = sealed else {
        tracing::warn!("console: a sign-in with a token that is no operator's was refused");
        tokio::time::sleep(REFUSAL_DELAY).await;
        return see_other("/console/login?failed=1");
    };
    tracing::info!(operator = %Escaped(name), "console: signed in");
    let mut response = see_other("/console/tools");
    response.headers_mut().insert(header::SET_COOKIE, cookie(&sealed, sessions.lifetime.as_secs()));
    response
}

/// `POST /console/logout`: the cookie is forgotten by the browser.
pub(super) async fn sign_out(axum::Extension(operator): axum::Extension<Operator>) -> Response {
    tracing::info!(operator = %Escaped(&operator.name), "console: signed out");
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie("", 0));
    response
}

/// `GET /console/api/session`: who is signed in, their CSRF token, and where approvals go.
pub(super) async fn who(
    State(console): State<Arc<Console>>,
    axum::Extension(operator): axum::Extension<Operator>,
) -> Response {
    axum::Json(serde_json::json!({
        "operator": operator.name,
        "csrf": operator.csrf,
        "approve_via": console.approve_via,
    }))
    .into_response()
}

/// In front of every signed-in route: no sign-in is the sign-in page (for a page) or
/// 401 (for the API); a request that changes anything needs the sign-in's CSRF token.
pub(super) async fn require_operator(
    State(console): State<Arc<Console>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(operator) = console.sessions.operator_of(request.headers()) else {
        let page = request.method() == Method::GET && !request.uri().path().starts_with("/console/api/");
        return match page {
            true => see_other("/console/login"),
            false => error(StatusCode::UNAUTHORIZED, "sign in to the console first"),
        };
    };
    if request.method() != Method::GET {
        let presented = request.headers().get(CSRF_HEADER).map(HeaderValue::as_bytes).unwrap_or_default();
        if !bool::from(presented.ct_eq(operator.csrf.as_bytes())) {
            return error(StatusCode::FORBIDDEN, "the request lacks the console's CSRF token");
        }
    }
    request.extensions_mut().insert(operator);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(operators: Tokens) -> Sessions {
        Sessions::new(&ApprovalKey::from_secret(&"k".repeat(40)).unwrap(), operators, Duration::from_secs(3600))
    }

    #[test]
    fn a_sign_in_opens_only_while_fresh_and_while_its_token_stands() {
        let (alice, bob) = (crate::serve::digest("alice-token"), crate::serve::digest("bob-token"));
        let both = Tokens::none().with_digest("alice", alice).with_digest("bob", bob);
        let now = SystemTime::now();
        let sealed = sessions(both.clone()).seal("alice", &alice, now).unwrap();
        let opened = sessions(both.clone()).open(&sealed, now).expect("opens on a replica with the same key");
        assert_eq!(opened.name, "alice");
        assert_eq!(opened.csrf.len(), 64);
        assert!(sessions(both.clone()).open(&sealed, now + Duration::from_secs(3601)).is_none(), "expired");
        let rotated = Tokens::none().with_digest("alice", crate::serve::digest("new-token"));
        assert!(sessions(rotated).open(&sealed, now).is_none(), "a replaced token ends the sign-in");
        // Another operator's name under the same seal, or a changed expiry, does not open.
        let parts: Vec<&str> = sealed.split('.').collect();
        let [expires, nonce, name, mac] = parts[..] else { panic!("four parts: {sealed}") };
        assert_eq!(name, hex(b"alice"));
        assert!(sessions(both.clone()).open(&format!("{expires}.{nonce}.{}.{mac}", hex(b"bob")), now).is_none());
        let later = expires.parse::<u64>().unwrap() + 9999;
        let extended = format!("{later}.{nonce}.{name}.{mac}");
        assert!(sessions(both.clone()).open(&extended, now).is_none(), "the expiry is sealed");
        for hostile in ["99999999999999999999.a.b.c", "18446744073709551615.00.616c696365.00", "1.2.3", "", "...."] {
            assert!(sessions(both.clone()).open(hostile, now).is_none(), "{hostile}");
        }
        let other_key = Sessions::new(&ApprovalKey::random().unwrap(), both, Duration::from_secs(3600));
        assert!(other_key.open(&sealed, now).is_none(), "another key");
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; toolhost_console_x=2"));
        headers.append(header::COOKIE, HeaderValue::from_static("b=3; toolhost_console=value; c=4"));
        assert_eq!(cookie_values(&headers, COOKIE).collect::<Vec<_>>(), ["value"]);
    }
}
