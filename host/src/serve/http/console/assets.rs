//! The console's pages, script and style, embedded in the binary: hand-written, no external asset.
//!
//! The pages hold no data: the script asks the API for everything and puts it on the
//! page as text, never as markup.

use axum::response::{IntoResponse, Response};
use http::header;

const LOGIN: &str = include_str!("assets/login.html");
const SHELL: &str = include_str!("assets/console.html");
const STYLE: &str = include_str!("assets/console.css");
const SCRIPT: &str = include_str!("assets/console.js");

fn asset(content_type: &'static str, body: &'static str, cache: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, cache)], body).into_response()
}

/// The sign-in page.
pub(super) async fn login() -> Response {
    asset("text/html; charset=utf-8", LOGIN, "no-store")
}

/// Every signed-in page: one shell the script draws.
pub(super) async fn shell() -> Response {
    asset("text/html; charset=utf-8", SHELL, "no-store")
}

/// `/console/`: the tools page.
pub(super) async fn to_tools() -> Response {
    (http::StatusCode::SEE_OTHER, [(header::LOCATION, "/console/tools")]).into_response()
}

/// The style sheet; checked again on each use, so that an upgraded server's is used.
pub(super) async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE, "no-cache")
}

/// The script.
pub(super) async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT, "no-cache")
}
