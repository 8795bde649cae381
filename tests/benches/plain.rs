//! A plain component's call against a toolbox component's call of the same work: `add`
//! of two 64-bit integers, with both validations and a fresh instance each. The toolbox
//! call crosses as JSON text (serialised by the host, parsed and written by the guest's
//! serde); the plain call crosses as typed component values, converted by the host.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost::ToolHost;
use toolhost_tests::ToolsDir;

fn plain_against_toolbox(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let tools = ToolsDir::new();
    tools.install("shapes", "toolbox", "shapes");
    tools.install("plain-types", "plain", "plain");
    let host = rt.block_on(ToolHost::builder().root(tools.path()).build()).expect("host");
    assert_eq!(rt.block_on(host.call("toolbox/add", json!({ "a": 2, "b": 3 }))), Ok(json!(5)));
    assert_eq!(rt.block_on(host.call("plain/add", json!({ "a": 2, "b": 3 }))), Ok(json!(5)));
    let mut group = c.benchmark_group("plain_vs_toolbox");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("toolbox_add", |b| {
        b.to_async(&rt).iter(|| async { host.call("toolbox/add", json!({ "a": 2, "b": 3 })).await.unwrap() })
    });
    group.bench_function("plain_add", |b| {
        b.to_async(&rt).iter(|| async { host.call("plain/add", json!({ "a": 2, "b": 3 })).await.unwrap() })
    });
    group.finish();
}

criterion_group!(benches, plain_against_toolbox);
criterion_main!(benches);
