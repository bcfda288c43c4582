//! An SDK error as users read it: its code, one readable line, and whether it says the endpoint
//! lacks the operation.

/// The code of an SDK error, for counting escaped errors and for messages.
pub fn error_code<E, R>(e: &aws_smithy_runtime_api::client::result::SdkError<E, R>) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    match e {
        SdkError::ServiceError(s) => s.err().code().unwrap_or("UnknownServiceError").to_string(),
        SdkError::TimeoutError(_) => "Timeout".into(),
        SdkError::DispatchFailure(d) if d.is_timeout() => "Timeout".into(),
        SdkError::DispatchFailure(_) => "DispatchFailure".into(),
        SdkError::ResponseError(_) => "ResponseError".into(),
        SdkError::ConstructionFailure(_) => "ConstructionFailure".into(),
        _ => "Unknown".into(),
    }
}

/// An SDK error as one readable line: the service's code and message, or what the endpoint
/// answered instead (its HTTP status), or the transport's cause. Never the SDK's `Debug` dump:
/// the whole error goes to the log at debug level.
pub fn error_line<E>(
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
) -> String
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    let full = aws_smithy_types::error::display::DisplayErrorContext(e).to_string();
    tracing::debug!("SDK error: {full}");
    match e {
        SdkError::ServiceError(s) if s.err().code().is_none() => {
            let raw = s.raw();
            let kind = raw
                .headers()
                .get("content-type")
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            format!(
                "HTTP {}: the answer{kind} is not an AWS error",
                raw.status().as_u16()
            )
        }
        SdkError::ServiceError(s) => format!(
            "{}: {}",
            s.err().code().unwrap_or("UnknownServiceError"),
            s.err().message().unwrap_or("(no message)")
        ),
        SdkError::ResponseError(r) => {
            let raw = r.raw();
            let kind = raw
                .headers()
                .get("content-type")
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            format!(
                "HTTP {}: the answer{kind} is not an AWS response",
                raw.status().as_u16()
            )
        }
        SdkError::TimeoutError(_) => "timed out".into(),
        SdkError::DispatchFailure(_) if session_failure(e).is_some() => format!(
            "CreateSession (the SDK's S3 Express session): {}",
            error_line(session_failure(e).expect("checked"))
        ),
        // The transport's cause.
        _ => error_chain(e),
    }
}

/// The error of the S3 Express session the SDK asked for by itself, inside a call that failed
/// for it (the SDK reports it as the call's dispatch failure).
fn session_failure(
    e: &dyn std::error::Error,
) -> Option<
    &aws_smithy_runtime_api::client::result::SdkError<
        aws_sdk_s3::operation::create_session::CreateSessionError,
        aws_smithy_runtime_api::http::Response,
    >,
> {
    let mut next = e.source();
    while let Some(err) = next {
        if let Some(s) = err.downcast_ref() {
            return Some(s);
        }
        next = err.source();
    }
    None
}

/// An error and its causes, each by its Display (never its Debug), on one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = next {
        let text = latlab_core::units::one_line(&err.to_string());
        if !text.is_empty() && parts.last() != Some(&text) {
            parts.push(text);
        }
        next = err.source();
    }
    let line = parts.join(": ");
    if line.contains("invalid peer certificate") {
        return format!("{line}: {UNTRUSTED}");
    }
    if line.contains("tunnel error") {
        return format!("{line}: {}", refused_by_proxy());
    }
    line
}

/// What a proxy that would not open a tunnel means, naming the proxy the environment gives.
fn refused_by_proxy() -> String {
    let named = ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .find_map(|k| {
            std::env::var(k)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| format!("{k}={}", without_password(&v)))
        })
        .unwrap_or_else(|| "the proxy".into());
    format!(
        "{named} did not open a tunnel to the endpoint; check that it allows the endpoint's host \
         and port 443, or name the host in NO_PROXY to go around it"
    )
}

/// A proxy URL without the password it may carry (`http://user:secret@host` -> `http://user@host`).
fn without_password(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((auth, host)) => {
                let user = auth.split(':').next().unwrap_or("");
                format!("{scheme}://{user}@{host}")
            }
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// What a certificate the trust store refuses means, and what to do about it.
const UNTRUSTED: &str = "the endpoint's certificate is not signed by a certificate authority this \
     machine trusts; if a proxy or TLS inspection on your network signs it, name that \
     authority's PEM file in AWS_CA_BUNDLE (or ca_bundle in your AWS profile)";

/// Whether an SDK error says the endpoint lacks the operation: it answered an HTTP error with
/// something that is not an AWS response (an HTML page, say), or with the code of an unknown
/// operation. Returns what it answered, for one line naming the operation.
pub fn unsupported<E>(
    e: &aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
) -> Option<String>
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    match e {
        SdkError::ResponseError(r) if r.raw().status().as_u16() >= 400 => Some(format!(
            "HTTP {}, not an AWS response",
            r.raw().status().as_u16()
        )),
        // S3's SDK reads an error body it cannot parse as an error without a code. A HEAD's
        // answer has no body at all: an empty 403 or 404 (HeadBucket, HeadObject) is S3's
        // "access denied" or "not found", an answer, not an endpoint lacking the operation.
        SdkError::ServiceError(s)
            if s.err().code().is_none()
                && s.raw().status().as_u16() >= 400
                && !(matches!(s.raw().status().as_u16(), 403 | 404)
                    && s.raw().body().bytes().is_some_and(<[u8]>::is_empty)) =>
        {
            Some(format!(
                "HTTP {}, not an AWS response",
                s.raw().status().as_u16()
            ))
        }
        // The S3 Express session the SDK asks for on its own (from inside the call) failed.
        SdkError::DispatchFailure(_) => session_failure(e).and_then(unsupported),
        SdkError::ServiceError(s) => match s.err().code() {
            Some(
                code @ ("UnknownOperationException"
                | "UnknownOperation"
                | "NotImplemented"
                | "InvalidAction"),
            ) => Some(format!("HTTP {} {code}", s.raw().status().as_u16())),
            _ => None,
        },
        _ => None,
    }
}
