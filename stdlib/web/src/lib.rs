//! `web/search`: web search through the Brave Search API
//! (`GET /res/v1/web/search`, key in `X-Subscription-Token`). The key is the operator's:
//! until one is granted (`[grants] env = ["BRAVE_SEARCH_API_KEY"]` or `[grants] config
//! = { api_key = "…" }`) every call fails before anything is sent, saying what to grant.
//! `[grants] config = { endpoint = "…" }` points it at another server with the same API.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use stdlib_httpclient::{Method, Request, Url};
use toolhost_guest::{ToolError, toolbox};

const DEFAULT_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// The environment variable an operator grants the key through.
const KEY_VARIABLE: &str = "BRAVE_SEARCH_API_KEY";
/// The configuration keys an operator grants the key and the endpoint through.
const KEY_CONFIG: &str = "api_key";
const ENDPOINT_CONFIG: &str = "endpoint";
/// A page of results is a few KiB per result; anything near this is not a search answer.
const MAX_RESPONSE_BYTES: usize = 2 << 20;
/// An error body is quoted to the caller up to this many characters.
const MAX_QUOTED_CHARS: usize = 300;
const USER_AGENT: &str = concat!("toolhost-stdlib-web/", env!("CARGO_PKG_VERSION"));

#[derive(Deserialize, JsonSchema, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
enum SafeSearch {
    Off,
    #[default]
    Moderate,
    Strict,
}

impl SafeSearch {
    fn parameter(self) -> &'static str {
        match self {
            SafeSearch::Off => "off",
            SafeSearch::Moderate => "moderate",
            SafeSearch::Strict => "strict",
        }
    }
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Freshness {
    Day,
    Week,
    Month,
    Year,
}

impl Freshness {
    fn parameter(self) -> &'static str {
        match self {
            Freshness::Day => "pd",
            Freshness::Week => "pw",
            Freshness::Month => "pm",
            Freshness::Year => "py",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchInput {
    /// What to search for, as a person would type it (at most 400 characters).
    #[schemars(length(min = 1, max = 400))]
    query: String,
    /// How many results to return.
    #[serde(default = "default_count")]
    #[schemars(range(min = 1, max = 20))]
    count: u8,
    /// Which page of results, counted from 0 in pages of `count`; for more results on
    /// the same query.
    #[serde(default)]
    #[schemars(range(min = 0, max = 9))]
    page: u8,
    /// Prefer results from this country: a two-letter code such as `us`, `de`, `jp`.
    #[serde(default)]
    #[schemars(regex(pattern = r"^[A-Za-z]{2}$"))]
    country: Option<String>,
    /// Only pages from the last day, week, month or year.
    #[serde(default)]
    freshness: Option<Freshness>,
    /// Filtering of adult content.
    #[serde(default)]
    safesearch: SafeSearch,
}

fn default_count() -> u8 {
    10
}

#[derive(Serialize, JsonSchema)]
struct SearchResult {
    /// The page's title.
    title: String,
    /// The page's address; fetch it (with `http/fetch`, where granted) to read the page.
    url: String,
    /// A snippet of the page around the query's words.
    description: String,
    /// How old the page is, as the search engine says (e.g. "2 days ago"), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    age: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct SearchOutput {
    /// The query searched for (the engine may have corrected its spelling: see
    /// `altered_query`).
    query: String,
    /// The query the engine actually searched, when it changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    altered_query: Option<String>,
    /// The results, best first; empty when nothing matched.
    results: Vec<SearchResult>,
    /// True when asking for the next `page` would give more results.
    more_results_available: bool,
}

toolbox! {
    /// Searches the web and returns the best matching pages: title, URL, a snippet and
    /// the page's age. Use it to find current information, documentation or sources
    /// before reading a page with `http/fetch`. Write the query as you would in a search
    /// box; `count` (1-20, default 10) and `page` (0-9) give more results, `freshness`
    /// limits them to recent pages. Fails with a message for the operator when no search
    /// API key has been granted.
    fn search(input: SearchInput) -> Result<SearchOutput, ToolError> {
        search_brave(input)
    }
}

/// The Brave Search API's answer, as far as this tool reads it.
#[derive(Deserialize)]
struct ApiAnswer {
    #[serde(default)]
    query: ApiQuery,
    #[serde(default)]
    web: Option<ApiWeb>,
}

#[derive(Deserialize, Default)]
struct ApiQuery {
    #[serde(default)]
    altered: Option<String>,
    #[serde(default)]
    more_results_available: bool,
}

#[derive(Deserialize)]
struct ApiWeb {
    #[serde(default)]
    results: Vec<ApiResult>,
}

#[derive(Deserialize)]
struct ApiResult {
    title: String,
    url: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    age: Option<String>,
}

/// `{"error": {"detail": …, "code": …}}`, the API's error answer.
#[derive(Deserialize)]
struct ApiError {
    error: ApiErrorDetail,
}

#[derive(Deserialize)]
struct ApiErrorDetail {
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    code: Option<String>,
}

fn api_key() -> Option<String> {
    let from_config = toolhost_guest::config(KEY_CONFIG);
    let key = from_config.or_else(|| std::env::var(KEY_VARIABLE).ok())?;
    let key = key.trim().to_owned();
    (!key.is_empty()).then_some(key)
}

fn not_set_up() -> ToolError {
    ToolError::failed(format!(
        "web search is not set up: no search API key is granted to this tool. The operator grants one in the \
         tool's manifest (web/web.toml in the stdlib directory): `[grants] env = [\"{KEY_VARIABLE}\"]` with that \
         variable set for the host, or `[grants] config = {{ {KEY_CONFIG} = \"…\" }}`. Keys come from \
         https://brave.com/search/api/"
    ))
}

fn endpoint() -> Result<Url, ToolError> {
    let configured = toolhost_guest::config(ENDPOINT_CONFIG);
    let text = configured.as_deref().unwrap_or(DEFAULT_ENDPOINT);
    Url::parse(text).map_err(|e| {
        ToolError::failed(format!(
            "the configured search endpoint `{text}` cannot be used: {e}; the operator sets it in the manifest's \
             `[grants] config`"
        ))
    })
}

fn search_brave(input: SearchInput) -> Result<SearchOutput, ToolError> {
    let query = input.query.trim();
    if query.is_empty() {
        return Err(ToolError::invalid_input("the query is blank"));
    }
    let key = api_key().ok_or_else(not_set_up)?;
    let endpoint = endpoint()?;
    let mut parameters = vec![
        ("q", query.to_owned()),
        ("count", input.count.to_string()),
        ("offset", input.page.to_string()),
        ("safesearch", input.safesearch.parameter().to_owned()),
    ];
    if let Some(country) = &input.country {
        parameters.push(("country", country.to_ascii_lowercase()));
    }
    if let Some(freshness) = input.freshness {
        parameters.push(("freshness", freshness.parameter().to_owned()));
    }
    let query_string =
        parameters.iter().map(|(name, value)| format!("{name}={}", form_encode(value))).collect::<Vec<_>>().join("&");
    let separator = if endpoint.path_and_query().contains('?') { '&' } else { '?' };
    let url = endpoint
        .join(&format!("{}{separator}{query_string}", endpoint.path_and_query()))
        .map_err(|e| ToolError::failed(format!("the search URL cannot be built: {e}")))?;
    let headers = [
        ("accept".to_owned(), "application/json".to_owned()),
        ("x-subscription-token".to_owned(), key),
        ("user-agent".to_owned(), USER_AGENT.to_owned()),
    ];
    let request =
        Request { method: Method::Get, url: &url, headers: &headers, body: None, max_body_bytes: MAX_RESPONSE_BYTES };
    let response = stdlib_httpclient::send(&request)?;
    if response.status != 200 {
        return Err(api_failure(response.status, &response.body));
    }
    if response.truncated {
        return Err(ToolError::failed(format!("the search API answered with more than {MAX_RESPONSE_BYTES} bytes")));
    }
    let answer: ApiAnswer = serde_json::from_slice(&response.body).map_err(|e| {
        ToolError::failed(format!("the search API's answer is not the expected JSON ({e}): {}", quote(&response.body)))
    })?;
    let results = answer
        .web
        .map(|web| web.results)
        .unwrap_or_default()
        .into_iter()
        .map(|result| SearchResult {
            title: plain_text(&result.title),
            url: result.url,
            description: plain_text(&result.description),
            age: result.age,
        })
        .collect();
    Ok(SearchOutput {
        query: query.to_owned(),
        altered_query: answer.query.altered,
        results,
        more_results_available: answer.query.more_results_available,
    })
}

fn api_failure(status: u16, body: &[u8]) -> ToolError {
    let detail = serde_json::from_slice::<ApiError>(body)
        .ok()
        .and_then(|answer| match (answer.error.code, answer.error.detail) {
            (Some(code), Some(detail)) => Some(format!("{code}: {detail}")),
            (code, detail) => code.or(detail),
        })
        .unwrap_or_else(|| quote(body));
    let meaning = match status {
        401 | 403 => "the search API refused the granted API key; the operator should check it",
        422 if detail.contains("TOKEN") => "the search API refused the granted API key; the operator should check it",
        429 => "the search API's rate limit or quota is used up; try again later",
        400..=499 => "the search API refused the request",
        _ => "the search API failed",
    };
    ToolError::failed(format!("{meaning} (status {status}: {detail})"))
}

/// The start of a body, for messages.
fn quote(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut quoted: String = text.chars().take(MAX_QUOTED_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

/// `application/x-www-form-urlencoded` value encoding, spaces as `%20`: every byte but
/// the unreserved ones escaped.
fn form_encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// Snippets mark the query's words with `<strong>` and escape characters as entities:
/// tags dropped, common entities decoded.
fn plain_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for character in html.chars() {
        match character {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(character),
            _ => {}
        }
    }
    [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#x27;", "'"), ("&#39;", "'"), ("&nbsp;", " "), ("&amp;", "&")]
        .iter()
        .fold(text, |text, (entity, character)| text.replace(entity, character))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_lose_markup() {
        assert_eq!(plain_text("The <strong>Rust</strong> &amp; WASI &#x27;guide&#x27;"), "The Rust & WASI 'guide'");
        assert_eq!(plain_text("a &amp;lt; b"), "a &lt; b");
    }

    #[test]
    fn values_are_form_encoded() {
        assert_eq!(form_encode("rust wasm & wasi/p2?"), "rust%20wasm%20%26%20wasi%2Fp2%3F");
        assert_eq!(form_encode("crème"), "cr%C3%A8me");
    }

    #[test]
    fn api_errors_name_their_cause() {
        let body =
            br#"{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"Invalid token."}}"#;
        let ToolError::Failed(message) = api_failure(422, body) else { panic!("a failure") };
        assert!(message.contains("refused the granted API key"), "{message}");
        assert!(message.contains("SUBSCRIPTION_TOKEN_INVALID"), "{message}");
        let ToolError::Failed(message) = api_failure(429, b"slow down") else { panic!("a failure") };
        assert!(message.contains("rate limit") && message.contains("slow down"), "{message}");
    }
}
