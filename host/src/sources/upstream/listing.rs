//! Listing an upstream server's tools within bounds: pages, tools, bytes and time.
//!
//! A server decides how many pages it answers, how many tools and how many bytes each
//! holds, and when it answers at all; MCP's "list all" follows `nextCursor` for as
//! long as the server hands one out. Here a listing stops at the first bound it
//! crosses, and the bound is the listing's failure: the namespace's load error names
//! it, and the server is tried again with backoff like any server that failed.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::service::Peer;

use crate::tool::check_count;

/// The most pages one listing may take: 64 pages of 4 tools hold the most tools one
/// source may serve.
pub(super) const MAX_PAGES: usize = 64;
/// The most bytes one listing's tools may take, as JSON: the most tools one source
/// may serve, each with a 16 KiB description and a schema of 100 KiB or so.
pub(super) const MAX_BYTES: usize = 32 << 20;

/// Every tool `peer` lists, page after page, within [`MAX_PAGES`], the tools one source
/// may offer ([`check_count`]), [`MAX_BYTES`], and `time` for the whole listing. The
/// error says which bound was crossed, or how the server failed.
pub(super) async fn list_tools(peer: &Peer<RoleClient>, time: Duration) -> Result<Vec<Tool>, String> {
    match tokio::time::timeout(time, pages(peer)).await {
        Ok(listed) => listed,
        Err(_elapsed) => Err(format!("`tools/list` did not complete within {}", seconds(time))),
    }
}

async fn pages(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, String> {
    let (mut tools, mut bytes, mut cursors_seen) = (Vec::new(), 0usize, HashSet::new());
    let mut cursor = None;
    for _page in 0..MAX_PAGES {
        let request = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let page = peer
            .list_tools(Some(request))
            .await
            .map_err(|e| format!("`tools/list` failed: {}", super::client::problem(&e)))?;
        // The rule every source obeys, in its words (the count is the tools so far).
        check_count(tools.len() + page.tools.len()).map_err(|refused| refused.to_string())?;
        for tool in &page.tools {
            bytes += serde_json::to_vec(tool).map_or(0, |json| json.len());
        }
        if bytes > MAX_BYTES {
            return Err(format!(
                "the server's tool listing takes more than {} MiB of JSON, the most one listing may take",
                MAX_BYTES >> 20
            ));
        }
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            // A cursor handed out twice would page for ever.
            Some(next) if !cursors_seen.insert(next.clone()) => {
                return Err("the server's `tools/list` handed out the same cursor twice".to_owned());
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("the server's tool listing goes on past {MAX_PAGES} pages, the most one listing may take"))
}

/// `2 s`, `0.5 s`.
pub(super) fn seconds(time: Duration) -> String {
    format!("{} s", time.as_secs_f64())
}
