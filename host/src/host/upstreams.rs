//! A host's upstream MCP servers: their supervisors, and the namespaces they publish.

use std::sync::Arc;
use std::time::Duration;

use super::ToolHost;
use crate::error::NativeToolError;
use crate::sources::{Publication, Supervisors, UpstreamChanges, UpstreamServer, UpstreamStatus};

impl ToolHost {
    /// This host with supervisors for its upstream servers, which publish to a clone of
    /// the host that does not own them: the embedder's last clone of this one stops them.
    pub(super) fn with_upstream_supervisors(self) -> ToolHost {
        let (publisher, mut publications) = tokio::sync::mpsc::unbounded_channel::<Publication>();
        let publishing = self.clone();
        tokio::spawn(async move {
            while let Some(Publication { layer, namespace, tools, errors, done }) = publications.recv().await {
                if let Err(problem) = publishing.replace_source(&layer, &namespace, tools, errors).await {
                    tracing::error!(server = %namespace, "upstream MCP server: {problem}");
                }
                let _ = done.send(());
            }
        });
        let supervisors = Supervisors::new(publisher, self.loaders.defaults);
        ToolHost { upstreams: Some(Arc::new(supervisors)), ..self }
    }

    /// Makes `servers` this host's upstream MCP servers: connects the new ones, stops
    /// the ones not among them (their tools go at once), restarts the ones declared
    /// differently, and leaves the others connected. Fails, changing nothing, when a
    /// server names a layer this host does not have. Servers of namespaces the host
    /// does not serve ([`ToolHostBuilder::only_namespaces`](crate::ToolHostBuilder::only_namespaces))
    /// are left out.
    pub async fn set_upstreams(&self, mut servers: Vec<UpstreamServer>) -> Result<UpstreamChanges, NativeToolError> {
        let Some(supervisors) = &self.upstreams else {
            return Ok(UpstreamChanges::default());
        };
        servers.retain(|server| self.loaders.serves_namespace(&server.name));
        if let Some(server) = servers.iter().find(|server| !self.layers.iter().any(|l| l.name == server.layer)) {
            return Err(NativeToolError::NoSuchLayer(server.layer.clone()));
        }
        Ok(supervisors.apply(servers).await)
    }

    /// This host's upstream MCP servers, by name, and how each is doing.
    pub async fn upstreams(&self) -> Vec<UpstreamStatus> {
        match &self.upstreams {
            Some(supervisors) => supervisors.statuses().await,
            None => Vec::new(),
        }
    }

    /// Waits until every upstream server has been tried once, or `limit` passed.
    pub(super) async fn upstream_first_attempts(&self, limit: Duration) {
        if let Some(supervisors) = &self.upstreams {
            supervisors.first_attempts(limit).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use crate::ToolHost;
    use crate::registry::Layer;

    /// The task applying the supervisors' publications holds a clone of the host: it
    /// must end with the embedder's last clone, or the host (its engines, its instance
    /// pools) would outlive it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_last_clone_dropped_frees_the_host() {
        let host = ToolHost::builder().layer(Layer::native("app")).build().await.unwrap();
        let loaders = Arc::downgrade(&host.loaders);
        let clone = host.clone();
        drop(host);
        assert!(loaders.upgrade().is_some(), "a clone keeps the host");
        let dropped = Instant::now();
        drop(clone);
        while loaders.upgrade().is_some() {
            assert!(dropped.elapsed() < Duration::from_secs(5), "the host outlived its last clone by 5 s");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}
