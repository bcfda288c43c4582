//! A frozen view of the Redis lab.

use super::local::ShaperStats;
use super::{ConditionResult, MethodSnapshot};

#[derive(Clone, Debug, PartialEq)]
pub struct RedisSnapshot {
    /// The endpoints, passwords hidden.
    pub primary: String,
    pub replica: String,
    /// latlab's own redis-server pair (else a user's Redis).
    pub local: bool,
    /// The link shaper between latlab's servers.
    pub link: Option<ShaperStats>,
    pub value_bytes: u64,
    pub cpu_load: bool,
    pub memory_full: bool,
    pub status: String,
    /// The live figures, one per method.
    pub methods: Vec<MethodSnapshot>,
    /// A headless run's figures per condition.
    pub conditions: Vec<ConditionResult>,
    /// Why the lab is not running, and how to fix it.
    pub unavailable: Option<String>,
    /// The ElastiCache node type the scenario prices the primary and the replica as: an
    /// assumption of the scenario's, since latlab measures its own redis-server pair (or yours).
    pub node_type: String,
}

impl RedisSnapshot {
    pub fn unavailable(why: &str) -> RedisSnapshot {
        RedisSnapshot {
            primary: String::new(),
            replica: String::new(),
            local: false,
            link: None,
            value_bytes: 0,
            cpu_load: false,
            memory_full: false,
            status: "unavailable".into(),
            methods: Vec::new(),
            conditions: Vec::new(),
            unavailable: Some(why.to_string()),
            node_type: super::config::DEFAULT_NODE_TYPE.into(),
        }
    }
}
