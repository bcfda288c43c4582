//! The primary and replica the lab measures: latlab's own pair or a user's, each checked to be
//! what it claims (a replica of that primary), with passwords hidden in every label.

use super::*;

/// Where the servers are.
#[derive(Clone)]
pub struct Endpoints {
    pub primary: redis::Client,
    pub replica: redis::Client,
    /// Shown on screens and in reports (passwords hidden).
    pub primary_label: String,
    pub replica_label: String,
    /// latlab runs these servers: it may change their memory settings.
    pub local: bool,
}

impl Endpoints {
    pub fn open(primary: &str, replica: &str, local: bool) -> anyhow::Result<Endpoints> {
        let open = |url: &str, flag: &str| {
            redis::Client::open(url).map_err(|e| {
                anyhow::anyhow!("{flag} {}: {e} (write redis://[:PASSWORD@]HOST:PORT[/DB] or rediss:// for TLS)", crate::labs::redis::local::redact(url))
            })
        };
        Ok(Endpoints {
            primary: open(primary, "--redis-primary")?,
            replica: open(replica, "--redis-replica")?,
            primary_label: crate::labs::redis::local::redact(primary),
            replica_label: crate::labs::redis::local::redact(replica),
            local,
        })
    }

    /// Connects to both and checks the replica replicates from a primary that is a primary.
    pub async fn check(&self) -> anyhow::Result<(MultiplexedConnection, MultiplexedConnection)> {
        let timeout = Duration::from_secs(10);
        let connect = |c: &redis::Client, label: &str| {
            let (c, label) = (c.clone(), label.to_string());
            async move {
                tokio::time::timeout(timeout, connect(&c))
                    .await
                    .map_err(|_| {
                        anyhow::anyhow!("{label} did not answer within {}s", timeout.as_secs())
                    })?
                    .map_err(|e| {
                        // A rediss:// endpoint that fails says so: its causes are TLS's words.
                        let tls = if label.starts_with("rediss://") {
                            " over TLS"
                        } else {
                            ""
                        };
                        anyhow::anyhow!(
                            "cannot connect to {label}{tls}: {}",
                            latlab_core::units::one_line(&e.to_string())
                        )
                    })
            }
        };
        let mut p = connect(&self.primary, &self.primary_label).await?;
        let mut r = connect(&self.replica, &self.replica_label).await?;
        let pinfo: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut p)
            .await?;
        let rinfo: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut r)
            .await?;
        if !pinfo.contains("role:master") {
            bail!(
                "{} is not a primary (its INFO says {})",
                self.primary_label,
                field(&pinfo, "role").unwrap_or("no role")
            );
        }
        if !rinfo.contains("role:slave") {
            bail!(
                "{} is not a replica (its INFO says role:{})",
                self.replica_label,
                field(&rinfo, "role").unwrap_or("?")
            );
        }
        if field(&rinfo, "master_link_status") != Some("up") {
            bail!("{}'s link to its primary is down", self.replica_label);
        }
        Ok((p, r))
    }
}

/// A connection for the lab: WAIT and big values take longer than the client's default 500 ms.
pub async fn connect(c: &redis::Client) -> redis::RedisResult<MultiplexedConnection> {
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(10)))
        .set_response_timeout(Some(Duration::from_secs(120)));
    c.get_multiplexed_async_connection_with_config(&config)
        .await
}
