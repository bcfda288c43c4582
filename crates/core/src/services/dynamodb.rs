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
    }
}

/// The `x-amz-target` prefix of every DynamoDB operation (`DynamoDB_20120810.PutItem`).
pub const TARGET_PREFIX: &str = "DynamoDB_20120810.";

impl Op {
    /// The operation an `x-amz-target` header names.
    pub fn of_target(target: &str) -> Option<Op> {
        target.strip_prefix(TARGET_PREFIX).and_then(Op::parse)
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
                | Op::ListTables
                | Op::ListTagsOfResource
                | Op::GetItem
                | Op::Query
                | Op::BatchGetItem
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
        assert_eq!(Op::BatchWriteItem.iam_action(), "dynamodb:BatchWriteItem");
        assert!(Op::Query.read_only() && !Op::PutItem.read_only());
    }
}

/// The faults the emulator injects into DynamoDB (`--fault dynamodb.KIND`, `[[faults]]`, the
/// TUI's menu), in the order they are listed.
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
        /// 500 InternalServerError from DynamoDB.
        INTERNAL_ERROR = KindInfo::hits(
            "dynamodb.internal-error",
            "500 InternalServerError from DynamoDB",
            Effect::InternalError,
        );
        /// Every DynamoDB request waits the fault's delay more, for its duration.
        LATENCY_SPIKE = KindInfo::lasting(
            "dynamodb.latency-spike",
            "every DynamoDB request delayed",
            Effect::Spike,
            Duration::from_secs(5),
        );
    }
}
