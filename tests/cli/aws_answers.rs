//! How latlab reads an endpoint's answer through the real SDK: which answers mean "this endpoint
//! lacks the operation" (the labs then stop that part and say so) and which are the service's
//! own answers. A one-shot HTTP server on 127.0.0.1 gives each answer.

use std::io::{Read, Write};
use std::net::TcpListener;

/// Serves `answer` to every request on a free port, for as many requests as `requests`.
fn serve(answer: &'static str, requests: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

async fn head_bucket(answer: &'static str) -> Option<String> {
    let url = serve(answer, 1);
    let s3 =
        latlab::aws::emulator_s3_client(&url, aws_smithy_types::retry::RetryConfig::disabled());
    let e = s3.head_bucket().bucket("b").send().await.unwrap_err();
    latlab::aws::unsupported(&e)
}

/// A HEAD's answer never has a body (a client does not read one), so S3's 403 and 404 to
/// HeadBucket carry only their status: they are S3's "access denied" and "no such bucket".
#[tokio::test]
async fn an_empty_403_or_404_to_a_head_is_an_answer() {
    for answer in [
        "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ] {
        assert_eq!(head_bucket(answer).await, None, "{answer}");
    }
}

/// A 500 (what `--lacking` makes the emulator answer, and what a proxy without the route often
/// does) is an endpoint lacking the operation.
#[tokio::test]
async fn a_server_error_is_an_endpoint_lacking_the_operation() {
    let page = "<html><body>no such route</body></html>";
    let answer: &'static str = Box::leak(
        format!(
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        )
        .into_boxed_str(),
    );
    assert_eq!(
        head_bucket(answer).await.as_deref(),
        Some("HTTP 500, not an AWS response")
    );
}
