//! Kinesis Data Streams' vocabulary: its operations, the `x-amz-target` prefix they are sent
//! under, and the rule stream and consumer names follow.

super::operations! {
    /// Every Kinesis operation latlab makes (and the emulator answers).
    pub enum Op {
        CreateStream,
        DeleteStream,
        DescribeStream,
        DescribeStreamSummary,
        ListStreams,
        ListShards,
        AddTagsToStream,
        ListTagsForStream,
        PutRecord,
        PutRecords,
        GetShardIterator,
        GetRecords,
        RegisterStreamConsumer,
        DescribeStreamConsumer,
        ListStreamConsumers,
        DeregisterStreamConsumer,
        SubscribeToShard,
        UpdateShardCount,
        SplitShard,
        MergeShards,
    }
}

/// The `x-amz-target` prefix of every Kinesis operation (awsJson1_1).
pub const TARGET_PREFIX: &str = "Kinesis_20131202.";

impl Op {
    /// The operation an `x-amz-target` header names.
    pub fn of_target(target: &str) -> Option<Op> {
        target.strip_prefix(TARGET_PREFIX).and_then(Op::parse)
    }
}

/// What is wrong with a stream or consumer name, as the API's validation says it (1-128 of
/// `[a-zA-Z0-9_.-]`); None when it is a valid name.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 128 {
        return Some("Member must have length between 1 and 128, inclusive");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Some("Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
    }
    None
}

impl Op {
    /// The IAM action that allows it: Kinesis names each action after its operation
    /// (`kinesis:PutRecord`).
    pub fn iam_action(self) -> String {
        format!("kinesis:{}", self.name())
    }

    /// Whether it only reads: it changes nothing on the account (what `latlab plan` may call).
    pub fn read_only(self) -> bool {
        matches!(
            self,
            Op::DescribeStream
                | Op::DescribeStreamSummary
                | Op::ListStreams
                | Op::ListShards
                | Op::ListTagsForStream
                | Op::DescribeStreamConsumer
                | Op::ListStreamConsumers
        )
    }
}

/// The faults the emulator injects into Kinesis (`--fault kinesis.KIND`, `[[faults]]`, the TUI's
/// menu), in the order they are listed.
pub mod faults {
    use std::time::Duration;

    use crate::services::Service;
    use crate::services::fault_kinds::{Effect, KindInfo, declare};

    declare! { Service::Kinesis;
        /// The connection is reset before the request is served: nothing happened.
        RESET_BEFORE = KindInfo::hits(
            "kinesis.reset-before",
            "connection reset before the request is served",
            Effect::ResetBefore,
        );
        /// The request is served (a put is stored) and the connection reset instead of the answer.
        RESET_AFTER = KindInfo::hits(
            "kinesis.reset-after",
            "request served, then the connection reset instead of the answer",
            Effect::ResetAfter,
        );
        /// 500 InternalFailure.
        INTERNAL_FAILURE = KindInfo::hits(
            "kinesis.internal-failure",
            "500 InternalFailure",
            Effect::InternalError,
        );
        /// 503 ServiceUnavailable.
        SERVICE_UNAVAILABLE = KindInfo::hits(
            "kinesis.service-unavailable",
            "503 ServiceUnavailable",
            Effect::Unavailable,
        );
        /// A SubscribeToShard event stream is cut in the middle of a frame.
        STREAM_CUT = KindInfo::hits(
            "kinesis.stream-cut",
            "a fan-out event stream cut mid-frame",
            Effect::StreamCut,
        )
        .only(&["SubscribeToShard"]);
        /// A SubscribeToShard event stream ends early, cleanly.
        STREAM_END = KindInfo::hits(
            "kinesis.stream-end",
            "a fan-out event stream ended early",
            Effect::StreamEnd,
        )
        .only(&["SubscribeToShard"]);
        /// The answer is held back for the fault's duration.
        STALL = KindInfo::lasting(
            "kinesis.stall",
            "an answer held back",
            Effect::Stall,
            Duration::from_secs(3),
        );
        /// Every request waits the fault's delay more, for its duration.
        SPIKE = KindInfo::lasting(
            "kinesis.spike",
            "every request slower for a while",
            Effect::Spike,
            Duration::from_secs(5),
        );
        /// Every shard iterator handed out so far expires.
        EXPIRE_ITERATORS = KindInfo::hits(
            "kinesis.expire-iterators",
            "every shard iterator expires",
            Effect::Change,
        )
        .only(&[]);
    }
}
