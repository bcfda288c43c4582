//! Amazon DynamoDB's vocabulary: its operations, the `x-amz-target` prefix they are sent under
//! (the AWS JSON 1.0 protocol), its table-name rule and its faults.

super::operations! {
    /// Every DynamoDB operation latlab makes (and the emulator answers).
    pub enum Op {
        CreateTable,
        DescribeTable,
        UpdateTable,
        DeleteTable,
        ListTables,
        TagResource,
        UntagResource,
        ListTagsOfResource,
        PutItem,
        GetItem,
        UpdateItem,
        DeleteItem,
        Query,
        BatchWriteItem,
        BatchGetItem,
        EnableKinesisStreamingDestination,
        DisableKinesisStreamingDestination,
        DescribeKinesisStreamingDestination,
        ListStreams,
        DescribeStream,
        GetShardIterator,
        GetRecords,
    }
}

/// The `x-amz-target` prefix of every DynamoDB operation (`DynamoDB_20120810.PutItem`).
pub const TARGET_PREFIX: &str = "DynamoDB_20120810.";

/// The prefix of DynamoDB Streams' operations (`DynamoDBStreams_20120810.GetRecords`): the
/// table's change stream, served beside its table.
pub const STREAMS_TARGET_PREFIX: &str = "DynamoDBStreams_20120810.";

impl Op {
    /// The operation an `x-amz-target` header names.
    pub fn of_target(target: &str) -> Option<Op> {
        let (streams, name) = match target.strip_prefix(STREAMS_TARGET_PREFIX) {
            Some(name) => (true, name),
            None => (false, target.strip_prefix(TARGET_PREFIX)?),
        };
        Op::parse(name).filter(|op| op.of_streams() == streams)
    }

    /// Whether DynamoDB Streams answers it (under its own prefix), not DynamoDB.
    pub fn of_streams(self) -> bool {
        matches!(
            self,
            Op::ListStreams | Op::DescribeStream | Op::GetShardIterator | Op::GetRecords
        )
    }

    /// The IAM action that allows it: DynamoDB names each action after its operation.
    pub fn iam_action(self) -> String {
        format!("dynamodb:{}", self.name())
    }

    /// Whether it only reads: it changes nothing on the account (what `latlab plan` may call).
    pub fn read_only(self) -> bool {
        matches!(
            self,
            Op::DescribeTable
                | Op::DescribeKinesisStreamingDestination
                | Op::ListTables
                | Op::ListTagsOfResource
                | Op::GetItem
                | Op::Query
                | Op::BatchGetItem
                | Op::ListStreams
                | Op::DescribeStream
                | Op::GetShardIterator
                | Op::GetRecords
        )
    }

    /// Whether it writes items (and so consumes write capacity).
    pub fn writes_items(self) -> bool {
        matches!(
            self,
            Op::PutItem | Op::UpdateItem | Op::DeleteItem | Op::BatchWriteItem
        )
    }
}

/// What is wrong with a table name, as the API says it (3 to 255 of `[a-zA-Z0-9_.-]`); None when
/// it is a valid name.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if !(3..=255).contains(&name.len()) {
        return Some(
            "TableName must be at least 3 characters long and at most 255 characters long",
        );
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Some("TableName must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_targets_and_actions() {
        assert_eq!(name_problem("latlab-orders"), None);
        assert!(name_problem("ab").is_some());
        assert!(name_problem("a b c").is_some());
        assert_eq!(
            Op::of_target("DynamoDB_20120810.PutItem"),
            Some(Op::PutItem)
        );
        assert_eq!(Op::of_target("AmazonSQS.SendMessage"), None);
        assert_eq!(
            Op::of_target("DynamoDBStreams_20120810.GetRecords"),
            Some(Op::GetRecords)
        );
        assert_eq!(Op::of_target("DynamoDB_20120810.GetRecords"), None);
        assert_eq!(Op::BatchWriteItem.iam_action(), "dynamodb:BatchWriteItem");
        assert!(Op::Query.read_only() && !Op::PutItem.read_only());
    }
}

/// The faults the emulator injects into DynamoDB and DynamoDB Streams (`--fault dynamodb.KIND`,
/// `[[faults]]`, the TUI's menu), in the order they are listed.
pub mod faults {
    use std::time::Duration;

    use crate::services::Service;
    use crate::services::fault_kinds::{Effect, KindInfo, declare};

    declare! { Service::Dynamodb;
        /// The connection is reset before a DynamoDB request is served: nothing happened.
        RESET = KindInfo::hits(
            "dynamodb.reset",
            "connection reset before a DynamoDB request is served",
            Effect::ResetBefore,
        );
        /// A PutItem is served (the item written, its change on the stream) and the connection
        /// reset instead of its answer: the writer cannot tell it happened.
        RESET_AFTER = KindInfo::hits(
            "dynamodb.reset-after",
            "a PutItem served, then the connection reset instead of its answer",
            Effect::ResetAfter,
        )
        .only(&["PutItem"]);
        /// 500 InternalServerError from DynamoDB.
        INTERNAL_ERROR = KindInfo::hits(
            "dynamodb.internal-error",
            "500 InternalServerError from DynamoDB",
            Effect::InternalError,
        );
        /// A DynamoDB Streams GetRecords answer is held back for the fault's duration.
        STREAMS_STALL = KindInfo::lasting(
            "dynamodb.streams-stall",
            "a DynamoDB Streams GetRecords answer held back",
            Effect::Stall,
            Duration::from_secs(3),
        )
        .only(&["GetRecords"]);
    }
}
