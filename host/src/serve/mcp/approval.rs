//! Approval through the MCP client: the person behind it is asked, and the call runs only on an explicit yes.
//!
//! Approval through the MCP client: a call that needs approval (and that no operator hook
//! decides) asks the person behind the client, and runs only on an explicit yes.
//!
//! | Client | How it is asked |
//! |---|---|
//! | session (2025-06-18, 2025-11-25), declared `elicitation` | `elicitation/create` during the call, a form with one `approve` box |
//! | 2026-07-28 (no server→client requests), declared `elicitation` | the call answers `input_required` with that form; the retry carries the answer |
//! | no `elicitation` capability | denied, saying so |
//!
//! A decline, a cancel, an unticked box, an error or no answer within [`APPROVAL_WAIT`]
//! is a denial with its reason. With `[console] approve_via = "console"` every question
//! goes to the operator's console instead; with `"both"`, a client that can be asked
//! during the call is asked beside the console (the first answer decides), and one that
//! cannot be asked leaves the question to the console.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::FutureExt;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests, InputRequiredResult,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::policy::{Approval, ApprovalHook, ApprovalRequest};

/// The key of the approval question among a 2026-07-28 call's input requests.
pub(crate) const APPROVAL_INPUT: &str = "toolhost/approval";
/// The form's one field: ticked means run.
const APPROVE_FIELD: &str = "approve";
pub use crate::policy::APPROVAL_WAIT;
/// How much of a call's input the question shows; a longer input is cut and the
/// question says how much is not shown.
const INPUT_SHOWN: usize = 8192;

/// The approver of one call whose client can be asked during the call.
pub(crate) fn ask_during_call(peer: Peer<RoleServer>) -> ApprovalHook {
    elicit(peer, |error| async move {
        Approval::Denied { reason: format!("the client could not ask for approval: {error}") }
    })
}

/// The approver of one call whose client is asked beside the console: like
/// [`ask_during_call`], but a client that fails to ask (an error, no answer in time)
/// leaves the question to the console rather than deny.
pub(crate) fn ask_beside_console(peer: Peer<RoleServer>) -> ApprovalHook {
    elicit(peer, |_| futures::future::pending())
}

/// Asks the person behind `peer` with the approval form, at most [`APPROVAL_WAIT`]; an
/// answer decides, and a failure to ask is what `failed` makes of it.
fn elicit<F>(peer: Peer<RoleServer>, failed: fn(rmcp::service::ServiceError) -> F) -> ApprovalHook
where
    F: std::future::Future<Output = Approval> + Send + 'static,
{
    Arc::new(move |request: ApprovalRequest| {
        let peer = peer.clone();
        async move {
            match peer.create_elicitation_with_timeout(question(&request), Some(APPROVAL_WAIT)).await {
                Ok(answer) => decide(&answer),
                Err(error) => failed(error).await,
            }
        }
        .boxed()
    })
}

/// The approver that asks both `one` and `other` at once: the first answer decides, and
/// the other question is withdrawn (its future dropped).
pub(crate) fn first_of(one: ApprovalHook, other: ApprovalHook) -> ApprovalHook {
    Arc::new(move |request: ApprovalRequest| {
        let (one, other) = (one(request.clone()), other(request));
        async move {
            match futures::future::select(one, other).await {
                futures::future::Either::Left((answer, _)) | futures::future::Either::Right((answer, _)) => answer,
            }
        }
        .boxed()
    })
}

/// The approver of a 2026-07-28 retry: the answer the client sent with it.
pub(crate) fn answered(answer: &Value) -> ApprovalHook {
    let approval = match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(answer) => decide(&answer),
        Err(e) => {
            Approval::Denied { reason: format!("the client's approval answer is not an elicitation result: {e}") }
        }
    };
    Arc::new(move |_| futures::future::ready(approval.clone()).boxed())
}

/// The approver of a call whose client cannot ask anyone: every approval is denied with
/// `why`.
pub(crate) fn unable(why: &'static str) -> ApprovalHook {
    Arc::new(move |_| futures::future::ready(Approval::Denied { reason: why.into() }).boxed())
}

/// Why a client without the capability is never asked.
pub(crate) const NO_ELICITATION: &str =
    "the client cannot ask a person (it did not declare the elicitation capability)";

/// Why a call answered past the SDK's session worker is not asked: the policy came to
/// need approval after the call was routed ([`crate::serve::http::direct`]).
pub(crate) const NO_QUESTIONS: &str =
    "the tool came to need approval while the call started, and this call cannot ask; call it again";

/// The answer to a 2026-07-28 call that needs approval first: ask, then call again
/// with the answer and `state` (the [`seal`] of the question) echoed back.
pub(crate) fn input_required(request: &ApprovalRequest, state: String) -> InputRequiredResult {
    let mut asks = InputRequests::new();
    asks.insert(APPROVAL_INPUT.into(), InputRequest::Elicitation(ElicitRequest::new(question(request))));
    InputRequiredResult::new(Some(asks), Some(state))
}

/// The key that seals 2026-07-28 approval questions. Each server process draws its own
/// unless the operator gives one (`[http] approval_key`): replicas behind a balancer
/// must share it, because a client's retry with the answer may reach another replica
/// than the one that asked.
#[derive(Clone, PartialEq, Eq)]
pub struct ApprovalKey([u8; 32]);

/// The shortest secret an approval key is made from, in characters.
pub const MIN_APPROVAL_SECRET: usize = 32;

impl ApprovalKey {
    /// A key of this process only, from the OS's randomness (none: an error, as a key
    /// anyone could guess would let clients seal their own approvals).
    pub fn random() -> Result<ApprovalKey, getrandom::Error> {
        let mut key = [0; 32];
        getrandom::fill(&mut key)?;
        Ok(ApprovalKey(key))
    }

    /// The key every replica given `secret` derives alike (its SHA-256); the secret is
    /// at least [`MIN_APPROVAL_SECRET`] characters, surrounding whitespace aside. The error
    /// never contains the secret.
    pub fn from_secret(secret: &str) -> Result<ApprovalKey, String> {
        use sha2::Digest;
        let secret = secret.trim();
        let characters = secret.chars().count();
        if characters < MIN_APPROVAL_SECRET {
            return Err(format!(
                "the approval key must be at least {MIN_APPROVAL_SECRET} characters (random ones), not {characters}"
            ));
        }
        Ok(ApprovalKey(sha2::Sha256::digest(secret.as_bytes()).into()))
    }
}

impl ApprovalKey {
    /// A key for another purpose (`purpose` names it), derived from this one: what is
    /// sealed with one cannot be forged with the other, and replicas sharing this key
    /// derive the same.
    pub(crate) fn derive(&self, purpose: &str) -> [u8; 32] {
        use hmac::Mac;
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(b"toolhost derived key: ");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

impl std::fmt::Debug for ApprovalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApprovalKey(…)")
    }
}

/// How far ahead of this server's clock another replica's clock may be: a question
/// sealed there a moment ago is not refused here as coming from the future.
const CLOCK_SKEW: Duration = Duration::from_secs(60);

/// What a question was about (caller, tool, input, risk, reason) and when it was asked,
/// sealed with the server's key (HMAC-SHA256) as `SECONDS.NONCE.MAC`: the retry must
/// carry it, so an answer approves only the call it was asked about — not the same tool
/// with another input, nor another caller's call — only within [`APPROVAL_WAIT`] of the
/// question, and only a server holding the key can make one. The nonce makes each
/// question's seal its own, so that the answer to it can be used once
/// ([`used_once_token`]).
pub(crate) fn seal(key: &ApprovalKey, request: &ApprovalRequest, asked: SystemTime) -> String {
    let seconds = asked.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let mut nonce = [0u8; 12];
    // Without randomness, two questions asked in one second share a seal, and the
    // second answer is refused as used: a refusal, never a replay.
    let _ = getrandom::fill(&mut nonce);
    let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    format!("{seconds}.{nonce}.{}", mac(key, request, seconds, &nonce))
}

/// What marks a checked seal used, in the store every replica shares: its MAC.
/// Until when the claim of an answer must be kept: past it, the seal it came with is
/// refused as expired by every replica whose clock is within [`CLOCK_SKEW`].
pub(crate) fn claim_kept_until(now: SystemTime) -> SystemTime {
    now + APPROVAL_WAIT + CLOCK_SKEW
}

pub(crate) fn used_once_token(seal: &str) -> String {
    format!("approval:{}", seal.rsplit_once('.').map_or(seal, |(_, mac)| mac))
}

fn mac(key: &ApprovalKey, request: &ApprovalRequest, seconds: u64, nonce: &str) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key.0).expect("HMAC takes a key of any length");
    mac.update(&seconds.to_be_bytes());
    mac.update(nonce.as_bytes());
    mac.update(b".");
    mac.update(&serde_json::to_vec(request).unwrap_or_default());
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a retry echoed a seal of this question made by a holder of `key` no longer
/// than [`APPROVAL_WAIT`] before `now`; if not, why the answer is not taken. The MAC
/// is compared in constant time, so the time a refusal takes says nothing about it.
pub(crate) fn check_seal(
    key: &ApprovalKey,
    request: &ApprovalRequest,
    echoed: Option<&str>,
    now: SystemTime,
) -> Result<(), &'static str> {
    use subtle::ConstantTimeEq;
    let (seconds, nonce, echoed_mac) = echoed
        .and_then(|echoed| echoed.split_once('.'))
        .and_then(|(seconds, rest)| Some((seconds.parse::<u64>().ok()?, rest.split_once('.')?)))
        .map(|(seconds, (nonce, mac))| (seconds, nonce, mac))
        .ok_or(ANOTHER_QUESTION)?;
    let expected = mac(key, request, seconds, nonce);
    let same = echoed_mac.len() == expected.len() && bool::from(echoed_mac.as_bytes().ct_eq(expected.as_bytes()));
    if !same {
        return Err(ANOTHER_QUESTION);
    }
    let asked = UNIX_EPOCH + Duration::from_secs(seconds);
    let fresh = match now.duration_since(asked) {
        Ok(age) => age <= APPROVAL_WAIT,
        Err(ahead) => ahead.duration() <= CLOCK_SKEW,
    };
    if fresh { Ok(()) } else { Err(EXPIRED) }
}

/// Why a retry's answer is not taken: it was given for another question.
pub(crate) const ANOTHER_QUESTION: &str =
    "the approval answers another question (a different caller, tool or input, or another server)";
/// Why a retry's answer is not taken: it was taken before (a replay).
pub(crate) const USED: &str = "the approval was already used: an answer approves one call";
/// Why a retry's answer is not taken: whether it was used cannot be known.
pub(crate) const UNCHECKED: &str = "the approval cannot be checked as unused: the store is not reachable";
/// Why a retry's answer is not taken: the question is too old.
pub(crate) const EXPIRED: &str = "the approval question has expired: it was asked more than 10 minutes ago";

fn decide(answer: &ElicitResult) -> Approval {
    let denied = |reason: &str| Approval::Denied { reason: reason.into() };
    match answer.action {
        ElicitationAction::Accept
            if answer.content.as_ref().and_then(|c| c.get(APPROVE_FIELD)).and_then(Value::as_bool) == Some(true) =>
        {
            Approval::Approved
        }
        ElicitationAction::Accept => denied("the person asked did not tick `approve`"),
        ElicitationAction::Decline => denied("the person asked declined"),
        ElicitationAction::Cancel => denied("the person asked dismissed the question"),
        _ => denied("the client answered with an unknown action"),
    }
}

/// The form the person sees: who asks to run what, why it needs approval, the input.
fn question(request: &ApprovalRequest) -> ElicitRequestParams {
    let message = request.question(INPUT_SHOWN);
    let schema = json!({
        "type": "object",
        "properties": { APPROVE_FIELD: {
            "type": "boolean",
            "title": "Approve",
            "description": format!("Run {} with this input", request.tool),
            "default": false,
        }},
        "required": [APPROVE_FIELD],
    });
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: serde_json::from_value::<ElicitationSchema>(schema)
            .expect("a one-boolean form is a valid elicitation schema"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Caller;
    use crate::tool::Risk;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            caller: Caller::new("planner"),
            tool: "fs/write".into(),
            input: json!({ "path": "a\u{202e}b", "text": "x".repeat(10_000) }),
            risk: Risk::High,
            reason: "the tool requires approval".into(),
        }
    }

    #[test]
    fn only_an_accept_with_the_box_ticked_approves() {
        let answer = |value: Value| decide(&serde_json::from_value(value).unwrap());
        assert_eq!(answer(json!({ "action": "accept", "content": { "approve": true } })), Approval::Approved);
        for denied in [
            json!({ "action": "accept", "content": { "approve": false } }),
            json!({ "action": "accept" }),
            json!({ "action": "decline" }),
            json!({ "action": "cancel" }),
        ] {
            assert!(matches!(answer(denied.clone()), Approval::Denied { .. }), "{denied}");
        }
    }

    #[test]
    fn a_seal_binds_the_answer_to_its_question() {
        let key = ApprovalKey([7; 32]);
        let asked = request();
        let mut other_input = request();
        other_input.input = json!({ "path": "elsewhere" });
        let mut other_caller = request();
        other_caller.caller = Caller::new("intruder");
        let now = SystemTime::now();
        let sealed = seal(&key, &asked, now);
        assert_ne!(sealed, seal(&key, &request(), now), "each question's seal is its own");
        assert_ne!(used_once_token(&sealed), used_once_token(&seal(&key, &request(), now)));
        assert_eq!(check_seal(&key, &asked, Some(&sealed), now), Ok(()));
        for (refused, why) in [
            (check_seal(&key, &other_input, Some(&sealed), now), "another input"),
            (check_seal(&key, &other_caller, Some(&sealed), now), "another caller"),
            (check_seal(&ApprovalKey([8; 32]), &asked, Some(&sealed), now), "another key"),
            (check_seal(&key, &asked, None, now), "no state"),
            (check_seal(&key, &asked, Some("12.00"), now), "a short MAC"),
            (check_seal(&key, &asked, Some(&sealed.replace('.', "")), now), "no time"),
        ] {
            assert_eq!(refused, Err(ANOTHER_QUESTION), "{why}");
        }
        // The time and the nonce are sealed too: a client cannot make an old question
        // look new, nor a used answer look unused.
        let (seconds, rest) = sealed.split_once('.').unwrap();
        let moved = format!("{}.{rest}", seconds.parse::<u64>().unwrap() + 500);
        assert_eq!(check_seal(&key, &asked, Some(&moved), now), Err(ANOTHER_QUESTION));
        let (nonce, mac) = rest.split_once('.').unwrap();
        let renewed = format!("{seconds}.{}.{mac}", nonce.replace(|c: char| c != '0', "0"));
        assert_eq!(check_seal(&key, &asked, Some(&renewed), now), Err(ANOTHER_QUESTION));
    }

    #[test]
    fn an_answer_is_taken_only_within_the_wait_and_a_little_clock_skew() {
        let key = ApprovalKey([7; 32]);
        let asked = SystemTime::now();
        let sealed = seal(&key, &request(), asked);
        let check = |now: SystemTime| check_seal(&key, &request(), Some(&sealed), now);
        assert_eq!(check(asked + APPROVAL_WAIT - Duration::from_secs(1)), Ok(()));
        assert_eq!(check(asked + APPROVAL_WAIT + Duration::from_secs(2)), Err(EXPIRED));
        assert_eq!(check(asked - Duration::from_secs(30)), Ok(()), "a replica whose clock is a bit behind");
        assert_eq!(check(asked - Duration::from_secs(120)), Err(EXPIRED), "a question from the future");
    }

    #[test]
    fn replicas_given_one_secret_seal_alike_and_random_keys_differ() {
        let secret = "correct horse battery staple, 32+ characters";
        let (one, other) = (ApprovalKey::from_secret(secret).unwrap(), ApprovalKey::from_secret(secret).unwrap());
        let now = SystemTime::now();
        assert_eq!(check_seal(&other, &request(), Some(&seal(&one, &request(), now)), now), Ok(()));
        assert_eq!(
            ApprovalKey::from_secret(&format!("  {secret}\n")).unwrap(),
            one,
            "whitespace around is not the key"
        );
        assert_ne!(ApprovalKey::random().unwrap(), ApprovalKey::random().unwrap());
        let other_secret = ApprovalKey::from_secret(&format!("{secret}!")).unwrap();
        assert_eq!(
            check_seal(&other_secret, &request(), Some(&seal(&one, &request(), now)), now),
            Err(ANOTHER_QUESTION)
        );
        let short = ApprovalKey::from_secret("hunter2").unwrap_err();
        assert!(short.contains("at least 32") && !short.contains("hunter2"), "{short}");
        assert_eq!(format!("{one:?}"), "ApprovalKey(…)", "Debug shows no key");
    }

    #[test]
    fn the_question_names_caller_tool_risk_and_a_bounded_input() {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = question(&request()) else {
            panic!("a form")
        };
        assert!(message.starts_with("planner asks to run fs/write (risk: high)"), "{message}");
        assert!(message.len() < INPUT_SHOWN + 200, "{}", message.len());
        assert!(message.ends_with(" … (NOT SHOWN: 1839 more bytes)"), "{}", &message[message.len() - 60..]);
        assert!(message.contains(r"a\u{202e}b") && !message.contains('\u{202e}'), "bidi overrides are shown escaped");
        let schema = serde_json::to_value(requested_schema).unwrap();
        assert_eq!(schema["required"], json!(["approve"]));
    }
}
