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
