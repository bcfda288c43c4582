//! The message operations: SendMessage and SendMessageBatch, ReceiveMessage (a long poll waits
//! here), DeleteMessage and DeleteMessageBatch, ChangeMessageVisibility and its batch; and a
//! message's size, MD5s and answer as the service computes them.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use super::super::ACCOUNT;
use super::super::error::{SqsError, SqsResult};
use super::super::queue::{Action, Outgoing, Queue, Received, md5_hex, parse_receipt};
use super::{Cx, int_of, str_of, string_list, visibility_value};

/// A message's system attributes ReceiveMessage may ask for.
const SYSTEM_ATTRIBUTES: &[&str] = &[
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
];

impl Cx<'_> {
    pub(super) fn send_message(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let now = self.now();
        q.admit(Action::Send, self.sqs.limits(), now)?;
        let out = outgoing(self.req, q.fifo, &q, self.sqs.limits())?;
        let sent = q.state.lock().send(
            q.fifo,
            out,
            self.sqs.limits(),
            now,
            self.sqs.clock.now_micros(),
        )?;
        q.changed.notify_waiters();
        let mut v = json!({ "MessageId": sent.id, "MD5OfMessageBody": sent.md5_body });
        if let Some(m) = sent.md5_attributes {
            v["MD5OfMessageAttributes"] = Value::String(m);
        }
        if let Some(s) = sent.sequence_number {
            v["SequenceNumber"] = Value::String(s);
        }
        Ok(v)
    }

    pub(super) fn send_message_batch(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let entries = self.entries()?;
        let limits = self.sqs.limits();
        let total: usize = entries.iter().map(|e| message_size(e).unwrap_or(0)).sum();
        if total as u64 > limits.batch_max_bytes {
            return Err(SqsError::batch_too_long(total, limits.batch_max_bytes));
        }
        let now = self.now();
        q.admit(Action::Send, limits, now)?;
        let (mut ok, mut failed) = (Vec::new(), Vec::new());
        for e in &entries {
            let id = e["Id"].as_str().unwrap_or_default();
            let sent = outgoing(e, q.fifo, &q, limits).and_then(|out| {
                q.state
                    .lock()
                    .send(q.fifo, out, limits, now, self.sqs.clock.now_micros())
            });
            match sent {
                Ok(sent) => {
                    let mut v = json!({
                        "Id": id, "MessageId": sent.id, "MD5OfMessageBody": sent.md5_body,
                    });
                    if let Some(m) = sent.md5_attributes {
                        v["MD5OfMessageAttributes"] = Value::String(m);
                    }
                    if let Some(s) = sent.sequence_number {
                        v["SequenceNumber"] = Value::String(s);
                    }
                    ok.push(v);
                }
                Err(err) => failed.push(err.entry(id)),
            }
        }
        q.changed.notify_waiters();
        Ok(json!({ "Successful": ok, "Failed": failed }))
    }

    /// A batch's entries, checked as the service checks them before any is done.
    pub(super) fn entries(&self) -> SqsResult<Vec<Value>> {
        let entries = match self.req.get("Entries") {
            None | Some(Value::Null) => return Err(SqsError::empty_batch()),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Err(SqsError::malformed("Entries must be a list")),
        };
        let max = self.sqs.limits().batch_max_entries;
        if entries.is_empty() {
            return Err(SqsError::empty_batch());
        }
        if entries.len() > max as usize {
            return Err(SqsError::too_many_entries(max, entries.len()));
        }
        let mut seen = std::collections::HashSet::new();
        for e in &entries {
            let id = str_of(e, "Id")?.ok_or_else(|| SqsError::missing_parameter("Id"))?;
            if id.is_empty()
                || id.len() > 80
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(SqsError::invalid_batch_entry_id(id));
            }
            if !seen.insert(id.to_string()) {
                return Err(SqsError::ids_not_distinct(id));
            }
        }
        Ok(entries)
    }

    pub(super) async fn receive_message(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let limits = self.sqs.limits();
        let max = match self.int_opt("MaxNumberOfMessages")? {
            None => 1,
            Some(n) if n >= 1 && n <= i64::from(limits.max_receive_messages) => n as usize,
            Some(n) => {
                return Err(SqsError::invalid_value(
                    "MaxNumberOfMessages",
                    &n.to_string(),
                    &format!(
                        "Must be between 1 and {}, if provided.",
                        limits.max_receive_messages
                    ),
                ));
            }
        };
        let wait = match self.int_opt("WaitTimeSeconds")? {
            None => q.state.lock().attributes.receive_wait,
            Some(n) if n >= 0 && n as u64 <= limits.max_wait.as_secs() => {
                Duration::from_secs(n as u64)
            }
            Some(n) => {
                return Err(SqsError::invalid_value(
                    "WaitTimeSeconds",
                    &n.to_string(),
                    &format!(
                        "Must be >= 0 and <= {}, if provided.",
                        limits.max_wait.as_secs()
                    ),
                ));
            }
        };
        let visibility = match self.int_opt("VisibilityTimeout")? {
            None => q.state.lock().attributes.visibility_timeout,
            Some(n) => visibility_value("VisibilityTimeout", n, limits)?,
        };
        let mut system = string_list(self.req, "AttributeNames")?;
        system.extend(string_list(self.req, "MessageSystemAttributeNames")?);
        for n in &system {
            if n != "All" && !SYSTEM_ATTRIBUTES.contains(&n.as_str()) {
                return Err(SqsError::invalid_attribute_name(n));
            }
        }
        let wanted_attributes = string_list(self.req, "MessageAttributeNames")?;
        q.admit(Action::Receive, limits, self.now())?;
        let short = wait.is_zero();
        let deadline = self.now() + wait;
        let got = loop {
            let changed = q.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let now = self.now();
            let (got, next) = {
                let mut s = q.state.lock();
                let got = s.receive(
                    &q.name,
                    q.fifo,
                    max,
                    visibility,
                    short,
                    limits,
                    now,
                    self.sqs.clock.now_micros(),
                )?;
                (got, s.next_change(now))
            };
            if !got.is_empty() || now >= deadline || q.deleted.load(Ordering::Relaxed) {
                break got;
            }
            let wake = next.map_or(deadline, |n| n.min(deadline));
            tokio::select! {
                _ = &mut changed => {}
                _ = self.sqs.clock.sleep_until(wake) => {}
            }
        };
        if got.is_empty() {
            q.state.lock().counts.empty_receives += 1;
            return Ok(json!({}));
        }
        let messages: Vec<Value> = got
            .iter()
            .map(|r| message_json(r, &system, &wanted_attributes))
            .collect();
        Ok(json!({ "Messages": messages }))
    }

    /// The message a receipt handle names in this request's queue: its id and generation.
    pub(super) fn receipt(&self, q: &Queue, handle: &str) -> SqsResult<(String, u64)> {
        match parse_receipt(handle) {
            Some((queue, id, generation)) if queue == q.name => Ok((id, generation)),
            _ => Err(SqsError::receipt_handle_invalid(handle)),
        }
    }

    pub(super) fn delete_message(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let handle = self.str_req("ReceiptHandle")?;
        let (id, generation) = self.receipt(&q, handle)?;
        q.admit(Action::Delete, self.sqs.limits(), self.now())?;
        if q.state.lock().delete(&id, generation) {
            q.changed.notify_waiters();
        }
        Ok(json!({}))
    }

    pub(super) fn delete_message_batch(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let entries = self.entries()?;
        q.admit(Action::Delete, self.sqs.limits(), self.now())?;
        let (mut ok, mut failed) = (Vec::new(), Vec::new());
        for e in &entries {
            let id = e["Id"].as_str().unwrap_or_default();
            let done = str_of(e, "ReceiptHandle")
                .and_then(|h| h.ok_or_else(|| SqsError::missing_parameter("ReceiptHandle")))
                .and_then(|h| self.receipt(&q, h));
            match done {
                Ok((mid, generation)) => {
                    q.state.lock().delete(&mid, generation);
                    ok.push(json!({ "Id": id }));
                }
                Err(err) => failed.push(err.entry(id)),
            }
        }
        q.changed.notify_waiters();
        Ok(json!({ "Successful": ok, "Failed": failed }))
    }

    pub(super) fn change_visibility(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let handle = self.str_req("ReceiptHandle")?;
        let timeout = self
            .int_opt("VisibilityTimeout")?
            .ok_or_else(|| SqsError::missing_parameter("VisibilityTimeout"))?;
        let timeout = visibility_value("VisibilityTimeout", timeout, self.sqs.limits())?;
        let (id, generation) = self.receipt(&q, handle)?;
        q.state
            .lock()
            .change_visibility(&id, generation, timeout, self.now(), handle)?;
        q.changed.notify_waiters();
        Ok(json!({}))
    }

    pub(super) fn change_visibility_batch(&self) -> SqsResult<Value> {
        let q = self.queue()?;
        let entries = self.entries()?;
        let limits = self.sqs.limits();
        let (mut ok, mut failed) = (Vec::new(), Vec::new());
        for e in &entries {
            let id = e["Id"].as_str().unwrap_or_default();
            let done = (|| {
                let handle = str_of(e, "ReceiptHandle")?
                    .ok_or_else(|| SqsError::missing_parameter("ReceiptHandle"))?;
                let timeout = int_of(e, "VisibilityTimeout")?
                    .ok_or_else(|| SqsError::missing_parameter("VisibilityTimeout"))?;
                let timeout = visibility_value("VisibilityTimeout", timeout, limits)?;
                let (mid, generation) = self.receipt(&q, handle)?;
                q.state
                    .lock()
                    .change_visibility(&mid, generation, timeout, self.now(), handle)
            })();
            match done {
                Ok(()) => ok.push(json!({ "Id": id })),
                Err(err) => failed.push(err.entry(id)),
            }
        }
        q.changed.notify_waiters();
        Ok(json!({ "Successful": ok, "Failed": failed }))
    }
}

/// A message's size as the quota counts it: its body and its attributes' names, types and values.
fn message_size(e: &Value) -> SqsResult<usize> {
    let body = str_of(e, "MessageBody")?.unwrap_or("");
    let mut n = body.len();
    if let Some(Value::Object(attrs)) = e.get("MessageAttributes") {
        for (name, a) in attrs {
            n += name.len();
            n += a["DataType"].as_str().map_or(0, str::len);
            n += a["StringValue"].as_str().map_or(0, str::len);
            n += a["BinaryValue"].as_str().map_or(0, |b| b.len() * 3 / 4);
        }
    }
    Ok(n)
}

/// A SendMessage (or batch entry) request as a message to send, checked.
fn outgoing(
    e: &Value,
    fifo: bool,
    q: &Queue,
    limits: &super::super::limits::SqsLimits,
) -> SqsResult<Outgoing> {
    let body =
        str_of(e, "MessageBody")?.ok_or_else(|| SqsError::missing_parameter("MessageBody"))?;
    if body.is_empty() {
        return Err(SqsError::invalid_parameter(
            "The request must contain the parameter MessageBody.",
        ));
    }
    if let Some(c) = body.chars().find(|c| !valid_char(*c)) {
        return Err(SqsError {
            status: 400,
            code: "InvalidMessageContents",
            shape: "InvalidMessageContents",
            message: format!(
                "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF; found U+{:04X}",
                c as u32
            ),
            sender: true,
        });
    }
    let max = q.state.lock().attributes.max_message_bytes;
    let size = message_size(e)?;
    if size as u64 > max {
        return Err(SqsError::invalid_parameter(&format!(
            "One or more parameters are invalid. Reason: Message must be shorter than {max} bytes; this one is {size}."
        )));
    }
    let delay = match int_of(e, "DelaySeconds")? {
        None => None,
        Some(_) if fifo => {
            return Err(SqsError::invalid_parameter(
                "Value for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.",
            ));
        }
        Some(n) if n >= 0 && n as u64 <= limits.max_delay.as_secs() => {
            Some(Duration::from_secs(n as u64))
        }
        Some(n) => {
            return Err(SqsError::invalid_value(
                "DelaySeconds",
                &n.to_string(),
                &format!(
                    "Must be >= 0 and <= {}, if provided.",
                    limits.max_delay.as_secs()
                ),
            ));
        }
    };
    let group = str_of(e, "MessageGroupId")?.map(str::to_string);
    let dedup_id = str_of(e, "MessageDeduplicationId")?.map(str::to_string);
    if fifo && group.is_none() {
        return Err(SqsError::missing_parameter("MessageGroupId"));
    }
    if !fifo && dedup_id.is_some() {
        return Err(SqsError::invalid_parameter(
            "Value for parameter MessageDeduplicationId is invalid. Reason: The request includes a parameter that is not valid for this queue type.",
        ));
    }
    let (message_attributes, md5_attributes) = match e.get("MessageAttributes") {
        Some(Value::Object(m)) if !m.is_empty() => {
            let md5 = attributes_md5(m)?;
            (Some(Value::Object(m.clone())), Some(md5))
        }
        _ => (None, None),
    };
    Ok(Outgoing {
        body: body.to_string(),
        delay,
        message_attributes,
        md5_attributes,
        group: if fifo { group } else { None },
        dedup_id,
    })
}

fn valid_char(c: char) -> bool {
    matches!(c as u32, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// The MD5 of a message's attributes, as the service computes it: for each attribute in name
/// order, its name, data type and value, each with its 4-byte big-endian length, the value after
/// a byte saying string (1) or binary (2).
fn attributes_md5(attrs: &serde_json::Map<String, Value>) -> SqsResult<String> {
    use base64::Engine;
    let mut buf = Vec::new();
    let put = |b: &[u8], buf: &mut Vec<u8>| {
        buf.extend_from_slice(&(b.len() as u32).to_be_bytes());
        buf.extend_from_slice(b);
    };
    let mut names: Vec<&String> = attrs.keys().collect();
    names.sort();
    for name in names {
        let a = &attrs[name];
        let data_type = a["DataType"].as_str().ok_or_else(|| {
            SqsError::invalid_parameter(&format!(
                "The message attribute '{name}' must contain non-empty DataType."
            ))
        })?;
        put(name.as_bytes(), &mut buf);
        put(data_type.as_bytes(), &mut buf);
        if let Some(s) = a["StringValue"].as_str() {
            buf.push(1);
            put(s.as_bytes(), &mut buf);
        } else if let Some(b) = a["BinaryValue"].as_str() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|_| {
                    SqsError::invalid_parameter(&format!(
                        "The message attribute '{name}' has a BinaryValue that is not base64."
                    ))
                })?;
            buf.push(2);
            put(&bytes, &mut buf);
        } else {
            return Err(SqsError::invalid_parameter(&format!(
                "The message attribute '{name}' must contain a non-empty value of message attribute type '{data_type}'."
            )));
        }
    }
    Ok(md5_hex(&buf))
}

/// A received message as ReceiveMessage's answer lists it, with the attributes asked for.
fn message_json(r: &Received, system: &[String], wanted: &[String]) -> Value {
    let m = &r.message;
    let all = system.iter().any(|n| n == "All");
    let mut attrs = serde_json::Map::new();
    let mut add = |name: &str, v: Option<String>| {
        if let Some(v) = v
            && (all || system.iter().any(|n| n == name))
        {
            attrs.insert(name.to_string(), Value::String(v));
        }
    };
    add("SenderId", Some(ACCOUNT.to_string()));
    add("SentTimestamp", Some((m.sent_micros / 1000).to_string()));
    add("ApproximateReceiveCount", Some(m.receive_count.to_string()));
    add(
        "ApproximateFirstReceiveTimestamp",
        m.first_receive_micros.map(|t| (t / 1000).to_string()),
    );
    add("SequenceNumber", m.sequence_number.clone());
    add("MessageDeduplicationId", m.dedup_id.clone());
    add("MessageGroupId", m.group.clone());
    let mut v = json!({
        "MessageId": m.id,
        "ReceiptHandle": r.receipt,
        "MD5OfBody": m.md5_body,
        "Body": m.body,
    });
    if !attrs.is_empty() {
        v["Attributes"] = Value::Object(attrs);
    }
    if let Some(Value::Object(ma)) = &m.message_attributes {
        let picked: serde_json::Map<String, Value> = ma
            .iter()
            .filter(|(k, _)| {
                wanted.iter().any(|w| {
                    w == "All"
                        || w == ".*"
                        || w == *k
                        || w.strip_suffix(".*").is_some_and(|p| k.starts_with(p))
                })
            })
            .map(|(k, x)| (k.clone(), x.clone()))
            .collect();
        if !picked.is_empty() {
            let md5 = attributes_md5(&picked).unwrap_or_default();
            v["MessageAttributes"] = Value::Object(picked);
            v["MD5OfMessageAttributes"] = Value::String(md5);
        }
    }
    v
}
