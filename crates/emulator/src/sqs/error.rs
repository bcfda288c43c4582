//! SQS's errors as the service answers them in the JSON protocol: the status, the
//! `x-amzn-query-error` header (the query protocol's code and whether the sender is at fault,
//! which the SDKs read first) and a body of `__type` and `message`.

/// One error answer.
#[derive(Clone, Debug, PartialEq)]
pub struct SqsError {
    pub status: u16,
    /// The query-protocol code (`AWS.SimpleQueueService.NonExistentQueue`).
    pub code: &'static str,
    /// The JSON protocol's shape name (`QueueDoesNotExist`).
    pub shape: &'static str,
    pub message: String,
    /// The caller's fault (`Sender`) or the service's (`Receiver`).
    pub sender: bool,
}

pub type SqsResult<T> = Result<T, SqsError>;

impl SqsError {
    fn new(status: u16, code: &'static str, shape: &'static str, message: &str) -> SqsError {
        SqsError {
            status,
            code,
            shape,
            message: message.to_string(),
            sender: status < 500,
        }
    }

    pub fn queue_does_not_exist() -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.NonExistentQueue",
            "QueueDoesNotExist",
            "The specified queue does not exist.",
        )
    }

    pub fn invalid_parameter(message: &str) -> SqsError {
        Self::new(
            400,
            "InvalidParameterValue",
            "InvalidParameterValue",
            message,
        )
    }

    /// A value out of its range: the service's sentence names the parameter and the reason.
    pub fn invalid_value(parameter: &str, value: &str, reason: &str) -> SqsError {
        Self::invalid_parameter(&format!(
            "Value {value} for parameter {parameter} is invalid. Reason: {reason}"
        ))
    }

    pub fn missing_parameter(parameter: &str) -> SqsError {
        Self::new(
            400,
            "MissingParameter",
            "MissingParameter",
            &format!("The request must contain the parameter {parameter}."),
        )
    }

    pub fn invalid_attribute_name(name: &str) -> SqsError {
        Self::new(
            400,
            "InvalidAttributeName",
            "InvalidAttributeName",
            &format!("Unknown Attribute {name}."),
        )
    }

    pub fn invalid_attribute_value(name: &str, reason: &str) -> SqsError {
        Self::new(
            400,
            "InvalidAttributeValue",
            "InvalidAttributeValue",
            &format!("Invalid value for the parameter {name}. Reason: {reason}"),
        )
    }

    pub fn receipt_handle_invalid(handle: &str) -> SqsError {
        Self::new(
            404,
            "ReceiptHandleIsInvalid",
            "ReceiptHandleIsInvalid",
            &format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
        )
    }

    pub fn message_not_in_flight() -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.MessageNotInflight",
            "MessageNotInflight",
            "The message referred to isn't in flight.",
        )
    }

    pub fn over_limit(cap: u32) -> SqsError {
        Self::new(
            403,
            "OverLimit",
            "OverLimit",
            &format!(
                "The maximum number of in flight messages ({cap}) is reached: delete or change the visibility of received messages"
            ),
        )
    }

    /// A FIFO queue's call past its quota. The API model's error for every operation is
    /// `RequestThrottled`, HTTP 403 (the SDKs' query-compatible table); the SDKs retry it as a
    /// throttle.
    pub fn throttled(message: &str) -> SqsError {
        Self::new(403, "RequestThrottled", "RequestThrottled", message)
    }

    pub fn queue_name_exists(name: &str) -> SqsError {
        Self::new(
            400,
            "QueueAlreadyExists",
            "QueueNameExists",
            &format!(
                "A queue already exists with the same name ({name}) and a different value for an attribute"
            ),
        )
    }

    pub fn queue_deleted_recently(name: &str, hold: std::time::Duration) -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.QueueDeletedRecently",
            "QueueDeletedRecently",
            &format!(
                "You must wait {} after deleting a queue before you can create another with the same name ({name}).",
                latlab_core::units::format_duration(hold)
            ),
        )
    }

    pub fn purge_in_progress(name: &str, hold: std::time::Duration) -> SqsError {
        Self::new(
            403,
            "AWS.SimpleQueueService.PurgeQueueInProgress",
            "PurgeQueueInProgress",
            &format!(
                "Only one PurgeQueue operation on {name} is allowed every {}.",
                latlab_core::units::format_duration(hold)
            ),
        )
    }

    pub fn empty_batch() -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.EmptyBatchRequest",
            "EmptyBatchRequest",
            "There should be at least one entry in the request.",
        )
    }

    pub fn too_many_entries(max: u32, got: usize) -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            "TooManyEntriesInBatchRequest",
            &format!("Maximum number of entries per request are {max}. You have sent {got}."),
        )
    }

    pub fn ids_not_distinct(id: &str) -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
            "BatchEntryIdsNotDistinct",
            &format!("Id {id} repeated."),
        )
    }

    pub fn invalid_batch_entry_id(id: &str) -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.InvalidBatchEntryId",
            "InvalidBatchEntryId",
            &format!(
                "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long; got '{id}'."
            ),
        )
    }

    pub fn batch_too_long(total: usize, max: u64) -> SqsError {
        Self::new(
            400,
            "AWS.SimpleQueueService.BatchRequestTooLong",
            "BatchRequestTooLong",
            &format!(
                "Batch requests cannot be longer than {max} bytes. You have sent {total} bytes."
            ),
        )
    }

    pub fn unknown_operation(target: &str) -> SqsError {
        Self::new(
            400,
            "InvalidAction",
            "InvalidAction",
            &format!(
                "The action {target} is not valid for this endpoint; the emulator's SQS answers {}",
                latlab_core::services::sqs::Op::NAMES.join(", ")
            ),
        )
    }

    pub fn malformed(message: &str) -> SqsError {
        Self::new(400, "MalformedQueryString", "MalformedQueryString", message)
    }

    pub fn internal(message: &str) -> SqsError {
        Self::new(500, "InternalFailure", "InternalFailure", message)
    }

    pub fn unavailable() -> SqsError {
        Self::new(
            503,
            "ServiceUnavailable",
            "ServiceUnavailable",
            "The request has failed due to a temporary failure of the server.",
        )
    }

    /// The `x-amzn-query-error` header's value.
    pub fn query_error(&self) -> String {
        format!(
            "{};{}",
            self.code,
            if self.sender { "Sender" } else { "Receiver" }
        )
    }

    /// The JSON body.
    pub fn body(&self) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "__type": format!("com.amazonaws.sqs#{}", self.shape),
            "message": self.message,
        }))
        .unwrap_or_default()
    }

    /// A batch entry's failure, as the batch answer lists it.
    pub fn entry(&self, id: &str) -> serde_json::Value {
        serde_json::json!({
            "Id": id,
            "SenderFault": self.sender,
            "Code": self.shape,
            "Message": self.message,
        })
    }
}
