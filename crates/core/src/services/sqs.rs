//! Amazon SQS's vocabulary: its operations, the `x-amz-target` prefix they are sent under (the
//! AWS JSON 1.0 protocol today's SDKs speak), and the rule queue names follow.

super::operations! {
    /// Every SQS operation latlab makes (and the emulator answers).
    pub enum Op {
        CreateQueue,
        GetQueueUrl,
        GetQueueAttributes,
        SetQueueAttributes,
        DeleteQueue,
        ListQueues,
        PurgeQueue,
        TagQueue,
        ListQueueTags,
        SendMessage,
        SendMessageBatch,
        ReceiveMessage,
        DeleteMessage,
        DeleteMessageBatch,
        ChangeMessageVisibility,
        ChangeMessageVisibilityBatch,
    }
}

/// The `x-amz-target` prefix of every SQS operation (`AmazonSQS.SendMessage`).
pub const TARGET_PREFIX: &str = "AmazonSQS.";

/// The suffix a FIFO queue's name must end with.
pub const FIFO_SUFFIX: &str = ".fifo";

impl Op {
    /// The operation an `x-amz-target` header names.
    pub fn of_target(target: &str) -> Option<Op> {
        target.strip_prefix(TARGET_PREFIX).and_then(Op::parse)
    }

    /// The IAM action that allows it: SQS names each action after its operation, the batch
    /// forms sharing their single form's (`sqs:SendMessage` allows SendMessageBatch).
    pub fn iam_action(self) -> String {
        let action = match self {
            Op::SendMessageBatch => "SendMessage",
            Op::DeleteMessageBatch => "DeleteMessage",
            Op::ChangeMessageVisibilityBatch => "ChangeMessageVisibility",
            other => other.name(),
        };
        format!("sqs:{action}")
    }

    /// Whether it only reads: it changes nothing on the account (what `latlab plan` may call).
    pub fn read_only(self) -> bool {
        matches!(
            self,
            Op::GetQueueUrl | Op::GetQueueAttributes | Op::ListQueues | Op::ListQueueTags
        )
    }
}

/// What is wrong with a queue name, as the API says it (1-80 of `[a-zA-Z0-9_-]`, a FIFO queue's
/// ending in `.fifo`); None when it is a valid name.
pub fn name_problem(name: &str) -> Option<&'static str> {
    let base = name.strip_suffix(FIFO_SUFFIX).unwrap_or(name);
    if name.is_empty() || name.len() > 80 || base.is_empty() {
        return Some("Queue names must be 1 to 80 characters long");
    }
    if !base
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    {
        return Some(
            "Queue names can contain only alphanumeric characters, hyphens (-) and underscores (_), and a FIFO queue's name ends in .fifo",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_actions() {
        assert_eq!(name_problem("latlab-1234"), None);
        assert_eq!(name_problem("latlab-1234.fifo"), None);
        assert!(name_problem("").is_some());
        assert!(name_problem(".fifo").is_some());
        assert!(name_problem("a.b").is_some());
        assert!(name_problem(&"a".repeat(81)).is_some());
        assert_eq!(Op::SendMessageBatch.iam_action(), "sqs:SendMessage");
        assert_eq!(Op::ReceiveMessage.iam_action(), "sqs:ReceiveMessage");
        assert_eq!(
            Op::of_target("AmazonSQS.ReceiveMessage"),
            Some(Op::ReceiveMessage)
        );
        assert_eq!(Op::of_target("Kinesis_20131202.GetRecords"), None);
    }
}

/// The faults the emulator injects into SQS (`--fault sqs.KIND`, `[[faults]]`, the TUI's menu),
/// in the order they are listed.
pub mod faults {
    use std::time::Duration;

    use crate::services::Service;
    use crate::services::fault_kinds::{Effect, KindInfo, declare};

    declare! { Service::Sqs;
        /// The connection is reset before an SQS request is served: nothing happened.
        RESET = KindInfo::hits(
            "sqs.reset",
            "connection reset before an SQS request is served",
            Effect::ResetBefore,
        );
        /// 500 InternalFailure from SQS.
        INTERNAL_ERROR = KindInfo::hits(
            "sqs.internal-error",
            "500 InternalFailure from SQS",
            Effect::InternalError,
        );
        /// A ReceiveMessage's answer is held back for the fault's duration (its messages already
        /// taken: their visibility timeout runs meanwhile).
        RECEIVE_STALL = KindInfo::lasting(
            "sqs.receive-stall",
            "a ReceiveMessage answer held back",
            Effect::Stall,
            Duration::from_secs(3),
        )
        .only(&["ReceiveMessage"]);
    }
}
