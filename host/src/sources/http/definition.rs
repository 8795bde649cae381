//! Reading an HTTP tool's definition file strictly: every problem a load error naming the file and the line.
//!
//! Reading an HTTP tool's definition file (`<ns>/<name>.http.toml`), strictly: every
//! problem is a load error naming the file and the line, and the tool is not served.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use http::{HeaderName, HeaderValue, Method};
use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::template::{Place, UrlTemplate};
use crate::error::{LoadError, LoadErrorKind};
use crate::error::{SchemaRole, ToolDefError, ToolProblem};
use crate::manifest::{RawPolicy, size_key, timeout_key};
use crate::sandbox::HostPattern;
use crate::tool::{Ceilings, DeclaredOutput, Limits, ToolDef, ToolHints, ToolPolicy};
use crate::units::{Problem, Size};

/// How an HTTP tool's file name ends; the rest is the tool's name.
pub(crate) const SUFFIX: &str = ".http.toml";

/// The largest response body read when the file sets no `max_response`.
const DEFAULT_MAX_RESPONSE: u64 = 1 << 20;

/// Everything a call needs besides the input.
#[derive(Debug, Clone)]
pub(crate) struct RequestSpec {
    pub method: Method,
    pub url: UrlTemplate,
    /// The allow-list; the URL's destination is in it.
    pub network: Arc<[HostPattern]>,
    pub headers: Vec<(HeaderName, HeaderSource)>,
    /// JSON Pointer into the input: the request's JSON body.
    pub body: Option<String>,
    /// JSON Pointer into the response: the tool's output.
    pub output: Option<String>,
    pub max_response: u64,
}

/// Where a header's value comes from. Values from the environment or a file are read
/// at every call (a rotated secret is used at once) and never shown anywhere.
#[derive(Clone)]
pub(crate) enum HeaderSource {
    Plain(HeaderValue),
    Env { variable: String, prefix: String },
    File { path: PathBuf, prefix: String },
}

impl std::fmt::Debug for HeaderSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderSource::Plain(value) => write!(f, "Plain({value:?})"),
            HeaderSource::Env { variable, .. } => write!(f, "Env({variable})"),
            HeaderSource::File { path, .. } => write!(f, "File({})", path.display()),
        }
    }
}

impl HeaderSource {
    /// The secret now, without its prefix; the error never holds the value.
    pub fn secret(&self) -> Result<Option<String>, String> {
        match self {
            HeaderSource::Plain(_) => Ok(None),
            HeaderSource::Env { variable, .. } => std::env::var(variable)
                .map(Some)
                .map_err(|_| format!("environment variable `{variable}` is not set (or not UTF-8)")),
            HeaderSource::File { path, .. } => std::fs::read_to_string(path)
                .map(|text| Some(text.trim_end_matches(['\r', '\n']).to_owned()))
                .map_err(|e| format!("secret file {} cannot be read: {}", path.display(), e.kind())),
        }
    }

    /// The header's value now, marked sensitive when it holds a secret.
    pub fn value(&self) -> Result<HeaderValue, String> {
        let (prefix, secret) = match self {
            HeaderSource::Plain(value) => return Ok(value.clone()),
            HeaderSource::Env { prefix, .. } | HeaderSource::File { prefix, .. } => {
                (prefix, self.secret()?.unwrap_or_default())
            }
        };
        let mut value = HeaderValue::from_str(&format!("{prefix}{secret}"))
            .map_err(|_| "its secret is not a valid header value (control characters?)".to_owned())?;
        value.set_sensitive(true);
        Ok(value)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefinition {
    description: Spanned<String>,
    method: Option<Spanned<String>>,
    url: Spanned<String>,
    network: Spanned<Vec<Spanned<String>>>,
    output: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
    max_response: Option<Spanned<Size>>,
    body: Option<Spanned<String>>,
    #[serde(default)]
    headers: BTreeMap<String, Spanned<toml::Value>>,
    input_schema: Spanned<toml::Table>,
    output_schema: Option<Spanned<toml::Table>>,
    #[serde(default)]
    policy: RawPolicy,
}

/// Headers the host writes itself, or that would change how the message is framed.
const RESERVED_HEADERS: &[&str] =
    &["host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive"];

/// Checks definition text; `path` names the file in errors and anchors relative paths.
pub(crate) fn parse(
    path: &Path,
    text: &str,
    defaults: Limits,
    ceilings: Ceilings,
) -> Result<(ToolDef, RequestSpec), LoadError> {
    check(path, text, defaults, ceilings).map_err(|problem| {
        LoadError::new(path, LoadErrorKind::Manifest { line: problem.line(text), problem: problem.message })
    })
}

/// The tool's name: the file's name without [`SUFFIX`].
pub(crate) fn tool_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()?.strip_suffix(SUFFIX)
}

fn check(path: &Path, text: &str, defaults: Limits, ceilings: Ceilings) -> Result<(ToolDef, RequestSpec), Problem> {
    let name = tool_name(path).unwrap_or_default();
    let raw: RawDefinition = toml::from_str(text).map_err(|e| Problem::from_toml(&e))?;
    let description_span = raw.description.span();
    if raw.description.get_ref().trim().is_empty() {
        return Err(Problem::at(description_span, "`description` says what the tool does for a model: not empty"));
    }
    let method = method(raw.method)?;
    let network = network(raw.network)?;
    let url_span = raw.url.span();
    let url = UrlTemplate::parse(raw.url.get_ref()).map_err(|e| Problem::at(url_span.clone(), e))?;
    if !network.iter().any(|pattern| pattern.matches(&url.host, url.port)) {
        let listed: Vec<String> = network.iter().map(ToString::to_string).collect();
        let destination = format!("{}:{}", url.host, url.port);
        let message = format!("the URL's destination {destination} is not in `network` ({})", listed.join(", "));
        return Err(Problem::at(url_span, message));
    }
    let spans = Spans {
        description: description_span,
        input: raw.input_schema.span(),
        output: raw.output_schema.as_ref().map(Spanned::span),
    };
    let input_json = table_json(raw.input_schema.into_inner());
    check_placeholders(&url, &input_json, url_span)?;
    let output_json =
        raw.output_schema.map_or_else(|| Value::Object(Default::default()), |t| table_json(t.into_inner()));
    let (input_text, output_text) = (input_json.to_string(), output_json.to_string());
    let mut def = ToolDef::new(name, raw.description.get_ref(), &input_text, DeclaredOutput::Json(&output_text))
        .map_err(|refused| spans.locate(refused))?;
    let body_span = raw.body.as_ref().map(Spanned::span);
    let body = pointer(raw.body, "body")?;
    if let (Some(span), true) = (body_span, method == Method::GET) {
        return Err(Problem::at(span, "a GET request has no body"));
    }
    let output = pointer(raw.output, "output")?;
    let timeout = raw.timeout.map(|timeout| timeout_key(timeout, ceilings)).transpose()?;
    let max_response = raw.max_response.map(|size| size_key(size, "max_response")).transpose()?;
    let headers = headers(path.parent().unwrap_or(Path::new(".")), raw.headers)?;
    // An HTTP tool reaches a service outside the host: say so unless the file says
    // otherwise.
    let base_policy =
        ToolPolicy { hints: ToolHints { open_world: Some(true), ..ToolHints::default() }, ..ToolPolicy::default() };
    def.limits = Limits { timeout: timeout.unwrap_or(defaults.timeout), ..defaults };
    def.policy = raw.policy.over(base_policy);
    let max_response = max_response.unwrap_or(DEFAULT_MAX_RESPONSE);
    let request = RequestSpec { method, url, network: network.into(), headers, body, output, max_response };
    Ok((def, request))
}

/// Where in the file the parts the tool rules judge are.
struct Spans {
    description: std::ops::Range<usize>,
    input: std::ops::Range<usize>,
    output: Option<std::ops::Range<usize>>,
}

impl Spans {
    /// A refusal by the tool rules, at the part it refuses.
    fn locate(&self, refused: ToolDefError) -> Problem {
        let span = match refused.problem() {
            Some(ToolProblem::Description { .. }) => Some(self.description.clone()),
            Some(
                ToolProblem::SchemaSize { role, .. }
                | ToolProblem::SchemaDepth { role, .. }
                | ToolProblem::Schema { role, .. },
            ) => match role {
                SchemaRole::Input => Some(self.input.clone()),
                SchemaRole::Output => self.output.clone(),
            },
            _ => None,
        };
        Problem { span, message: refused.to_string() }
    }
}

fn method(raw: Option<Spanned<String>>) -> Result<Method, Problem> {
    let Some(method) = raw else { return Ok(Method::GET) };
    let span = method.span();
    match method.get_ref().to_ascii_uppercase().as_str() {
        "GET" => Ok(Method::GET),
        "POST" => Ok(Method::POST),
        "PUT" => Ok(Method::PUT),
        "PATCH" => Ok(Method::PATCH),
        "DELETE" => Ok(Method::DELETE),
        other => Err(Problem::at(span, format!("method `{other}`: one of GET, POST, PUT, PATCH, DELETE"))),
    }
}

fn network(raw: Spanned<Vec<Spanned<String>>>) -> Result<Vec<HostPattern>, Problem> {
    let span = raw.span();
    let network: Vec<HostPattern> = raw
        .into_inner()
        .into_iter()
        .map(|pattern| HostPattern::parse(pattern.get_ref()).map_err(|e| Problem::at(pattern.span(), e)))
        .collect::<Result<_, _>>()?;
    if network.is_empty() {
        return Err(Problem::at(span, "`network` lists the destination of the URL (`host:port`)"));
    }
    Ok(network)
}

/// Every `{field}` of the URL is a property of the input, and one in its path is
/// required.
fn check_placeholders(url: &UrlTemplate, input: &Value, span: std::ops::Range<usize>) -> Result<(), Problem> {
    let properties = input.get("properties").and_then(Value::as_object);
    let required: Vec<&str> =
        input.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    for (field, place) in url.placeholders() {
        if !properties.is_some_and(|properties| properties.contains_key(field)) {
            let message = format!("the URL's `{{{field}}}` is not a property of [input_schema]");
            return Err(Problem::at(span, message));
        }
        if place == Place::Path && !required.contains(&field) {
            let message = format!("the URL's path needs `{{{field}}}`: list it in [input_schema] `required`");
            return Err(Problem::at(span, message));
        }
    }
    Ok(())
}

/// A JSON Pointer key of the file: `""` or starting with `/`.
fn pointer(value: Option<Spanned<String>>, key: &str) -> Result<Option<String>, Problem> {
    let Some(value) = value else { return Ok(None) };
    let span = value.span();
    let text = value.into_inner();
    if !text.is_empty() && !text.starts_with('/') {
        return Err(Problem::at(span, format!("`{key}` is a JSON Pointer: \"\" or starting with `/`")));
    }
    Ok(Some(text))
}

fn headers(
    base: &Path,
    raw: BTreeMap<String, Spanned<toml::Value>>,
) -> Result<Vec<(HeaderName, HeaderSource)>, Problem> {
    raw.into_iter()
        .map(|(name, value)| {
            let span = value.span();
            header(base, &name, value.into_inner()).map_err(|e| Problem::at(span, e))
        })
        .collect()
}

fn table_json(table: toml::Table) -> Value {
    serde_json::to_value(table).unwrap_or(Value::Null)
}

/// One `[headers]` entry: a plain string, `{ env = "VAR", prefix = "…" }` or
/// `{ file = "path", prefix = "…" }` (relative to the definition's directory). The
/// variable or file must be there now; its value is checked but not kept.
fn header(base: &Path, name: &str, value: toml::Value) -> Result<(HeaderName, HeaderSource), String> {
    let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("`{name}` is not a header name"))?;
    if RESERVED_HEADERS.contains(&header_name.as_str()) || header_name.as_str().starts_with("proxy-") {
        return Err(format!("header `{name}` is written by the host, not by a tool"));
    }
    let source = match value {
        toml::Value::String(text) => HeaderSource::Plain(
            HeaderValue::from_str(&text).map_err(|_| format!("header `{name}`: not a valid header value"))?,
        ),
        toml::Value::Table(mut table) => {
            let prefix = match table.remove("prefix") {
                None => String::new(),
                Some(toml::Value::String(prefix)) => prefix,
                Some(_) => return Err(format!("header `{name}`: `prefix` is a string")),
            };
            let env = table.remove("env");
            let file = table.remove("file");
            if let Some(key) = table.keys().next() {
                return Err(format!("header `{name}`: unknown key `{key}` (env, file, prefix)"));
            }
            match (env, file) {
                (Some(toml::Value::String(variable)), None) => HeaderSource::Env { variable, prefix },
                (None, Some(toml::Value::String(file))) => HeaderSource::File { path: base.join(file), prefix },
                _ => return Err(format!("header `{name}`: exactly one of `env` or `file`, a string")),
            }
        }
        _ => return Err(format!("header `{name}`: a string, or {{ env = \"VAR\" }} or {{ file = \"path\" }}")),
    };
    source.value().map_err(|problem| format!("header `{name}`: {problem}"))?;
    Ok((header_name, source))
}
