//! Reading a client's JSON-RPC message, with a direct path for `tools/call`.
//!
//! The SDK reads a message as an untagged enum of untagged enums: the line is buffered,
//! then matched against a request, and a request against each of the 22 request kinds
//! in turn, `tools/call` being the fourteenth. Every kind that does not match builds an
//! error on the way: reading a trivial tool call took about a tenth of the stdio
//! server's CPU for it (some 6 µs of 60).
//!
//! A line that is exactly a `tools/call` request (the four members a request has,
//! nothing else) is read here with the SDK's own reader for that request kind, which is
//! what its enum reaches for such a line. Anything else, and any line the direct path
//! cannot read, goes through the SDK unchanged, so what is accepted and every error said
//! about it stay the SDK's.

use std::borrow::Cow;

use rmcp::model::{CallToolRequest, ClientJsonRpcMessage, ClientRequest, JsonRpcRequest, JsonRpcVersion2_0, RequestId};
use serde::Deserialize;
use serde::de::IgnoredAny;

/// Reads one client message from `line` (one JSON text).
pub(crate) fn client_message(line: &[u8]) -> serde_json::Result<ClientJsonRpcMessage> {
    match tool_call(line) {
        Some(message) => Ok(message),
        None => serde_json::from_slice(line),
    }
}

/// The members of a JSON-RPC request, and no others: a line with any other member (a
/// stray `result`, say) is the SDK's to judge.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestEnvelope<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(rename = "params")]
    _params: IgnoredAny,
}

/// `line` as a `tools/call` request, when it is one the SDK would read as such.
fn tool_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    let envelope: RequestEnvelope = serde_json::from_slice(line).ok()?;
    if envelope.method != "tools/call" {
        return None;
    }
    // The request kind's reader takes `method` and `params` and passes over the
    // envelope's other members.
    let request: CallToolRequest = serde_json::from_slice(line).ok()?;
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest::new(envelope.id, ClientRequest::CallToolRequest(request))))
}

#[cfg(test)]
mod tests {
    use rmcp::model::RequestMetaObject;
    use serde_json::Value;

    use super::*;

    /// What the SDK reads from `line`, and what this module does, agree: the same
    /// message on the wire, the same request id, arguments and `_meta` where the
    /// handler looks for it (the request's extensions), or the same error.
    fn assert_read_as_the_sdk_reads(line: &str) {
        let ours = client_message(line.as_bytes());
        let sdk = serde_json::from_str::<ClientJsonRpcMessage>(line);
        match (ours, sdk) {
            (Ok(ours), Ok(sdk)) => {
                assert_eq!(serde_json::to_value(&ours).unwrap(), serde_json::to_value(&sdk).unwrap(), "{line}");
                let call = |message: ClientJsonRpcMessage| match message {
                    ClientJsonRpcMessage::Request(JsonRpcRequest {
                        id,
                        request: ClientRequest::CallToolRequest(call),
                        ..
                    }) => Some((id, call)),
                    _ => None,
                };
                match (call(ours), call(sdk)) {
                    (Some((our_id, ours)), Some((sdk_id, sdk))) => {
                        assert_eq!(our_id, sdk_id, "{line}");
                        assert_eq!(ours.params, sdk.params, "{line}");
                        assert_eq!(
                            ours.extensions.get::<RequestMetaObject>(),
                            sdk.extensions.get::<RequestMetaObject>(),
                            "{line}"
                        );
                    }
                    (None, None) => {}
                    (ours, sdk) => panic!("{line}: read as a tool call by one side only: {ours:?} / {sdk:?}"),
                }
            }
            (Err(ours), Err(sdk)) => assert_eq!(ours.to_string(), sdk.to_string(), "{line}"),
            (ours, sdk) => panic!("{line}: {ours:?} against the SDK's {sdk:?}"),
        }
    }

    #[test]
    fn tool_calls_and_everything_else_read_as_the_sdk_reads_them() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"math/add","arguments":{"a":1,"b":2}}}"#,
            r#"{"id":"x-7","params":{"arguments":{"a":1.5,"big":18446744073709551615,"neg":-3,"s":"\u00e9\n","n":null,"l":[1,{"k":[]}]},"name":"math.add"},"method":"tools/call","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p1","x":{"y":1}}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":5},"requestState":"s","inputResponses":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","unknown":true}}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"tools\/call","params":{"name":"\u0074"}}"#,
            // Not tool calls the direct path takes: the SDK decides.
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t"},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t"},"extra":1}"#,
            r#"{"jsonrpc":"1.0","id":10,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"id":11,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":12,"id":13,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":18,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":19,"method":"x/custom","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":20,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"t"}} trailing"#,
            r#"[{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"t"}}]"#,
            r#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"t""#,
            "",
            "null",
        ];
        for line in lines {
            assert_read_as_the_sdk_reads(line);
        }
    }

    #[test]
    fn a_tool_call_is_read_by_the_direct_path() {
        // The direct path must be the one that reads an ordinary call (else the
        // agreement above proves nothing about it).
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"_meta":{"progressToken":"p"}}}"#;
        let message = tool_call(line.as_bytes()).expect("read directly");
        let value: Value = serde_json::to_value(&message).unwrap();
        assert_eq!(value["params"]["arguments"]["a"], 1);
        assert_eq!(value["params"]["_meta"]["progressToken"], "p");
        for refused in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        ] {
            assert!(tool_call(refused.as_bytes()).is_none(), "{refused}");
        }
    }
}
