//! AWS's query protocol as the emulator reads and answers it (STS): a form posted to `/` whose
//! `Action` names the operation, answered in XML (`<ActionResponse><ActionResult>…`), its errors
//! as `<ErrorResponse><Error><Type/><Code/><Message/></Error>…`. Also the percent-decoding every
//! form and query string shares.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::StatusCode;

use crate::{Body, request_id, respond};

/// Percent-decodes a form or query string value (`+` is a space).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A form's fields (`a=1&b=two`), decoded; a repeated name keeps its last value.
pub(crate) fn form(body: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(body)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

/// Escapes text for an XML element.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// `action`'s answer: `result` (the inner XML of `<ActionResult>`) in the service's namespace.
pub(crate) fn answer(ns: &str, action: &str, result: &str) -> http::Response<Body> {
    let body = format!(
        "<{action}Response xmlns=\"{ns}\"><{action}Result>{result}</{action}Result>\
         <ResponseMetadata><RequestId>{}</RequestId></ResponseMetadata></{action}Response>",
        request_id()
    );
    respond(StatusCode::OK, "text/xml", Bytes::from(body))
}

/// An error as the query protocol sends it: `Sender` for a client's fault, else `Receiver`.
pub(crate) fn error(ns: &str, status: u16, code: &str, message: &str) -> http::Response<Body> {
    let kind = if status < 500 { "Sender" } else { "Receiver" };
    let body = format!(
        "<ErrorResponse xmlns=\"{ns}\"><Error><Type>{kind}</Type><Code>{}</Code>\
         <Message>{}</Message></Error><RequestId>{}</RequestId></ErrorResponse>",
        esc(code),
        esc(message),
        request_id()
    );
    respond(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        "text/xml",
        Bytes::from(body),
    )
}
