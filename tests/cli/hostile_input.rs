//! Property tests of every parser that takes outside bytes, with a fixed number of cases so CI
//! runs them in seconds: whatever the input, each answers a value or an error, never a panic, and
//! what it accepts holds together (a decoded aws-chunked body is the data that was encoded; a
//! duration prints back to itself exactly, a size to within its printed precision).

use crate::common;

use bytes::Bytes;
use latlab::scenario::Scenario;
use latlab::theme::Theme;
use latlab_core::units::{format_bytes, format_duration, parse_bytes, parse_duration};
use latlab_emulator::kinesis::json::Req;
use latlab_emulator::limits::Limits;
use latlab_emulator::s3::body::Chunked;
use proptest::prelude::*;

use common::proptest_config as config;

/// Text that looks like the inputs: TOML and JSON punctuation, keys, numbers and units, mixed
/// with anything.
fn texty() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("[kinesis]\n".to_string()),
            Just("[[kinesis.consumers]]\n".to_string()),
            Just("[s3]\n".to_string()),
            Just("[redis]\n".to_string()),
            Just("name = \"x\"\n".to_string()),
            Just("duration = \"10s\"\n".to_string()),
            Just("kind = \"poller\"\n".to_string()),
            Just("{\"StreamName\":".to_string()),
            Just("\"ShardId\":\"shardId-000000000000\"".to_string()),
            Just("\"Data\":\"".to_string()),
            Just("}".to_string()),
            Just("= ".to_string()),
            "[0-9]{1,20}".prop_map(|s| s),
            "[a-z_.]{1,12}".prop_map(|s| s),
            any::<String>(),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn kinesis_request_bodies_parse_or_are_refused(body in prop::collection::vec(any::<u8>(), 0..512), text in texty()) {
        let _ = Req::parse(&body);
        let _ = Req::parse(text.as_bytes());
    }

    #[test]
    fn aws_chunked_bodies_decode_to_what_was_encoded(
        data in prop::collection::vec(any::<u8>(), 0..4096),
        chunk in 1usize..1024,
        cut in 1usize..97,
        trailer in "[a-z-]{1,16}",
    ) {
        // Encoded as the SDK does: hex length, data, CRLF; a zero chunk; a trailer line.
        let mut encoded = Vec::new();
        for piece in data.chunks(chunk) {
            encoded.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            encoded.extend_from_slice(piece);
            encoded.extend_from_slice(b"\r\n");
        }
        encoded.extend_from_slice(format!("0\r\nx-amz-checksum-{trailer}:abc\r\n\r\n").as_bytes());
        // Fed in pieces of any size, as they arrive off the socket.
        let mut dec = Chunked::default();
        let mut out = Vec::new();
        for piece in encoded.chunks(cut) {
            for b in dec.feed(Bytes::copy_from_slice(piece)).unwrap() {
                out.extend_from_slice(&b);
            }
        }
        prop_assert_eq!(out, data);
        prop_assert_eq!(dec.trailers.len(), 1);
    }

    #[test]
    fn aws_chunked_garbage_is_refused_not_panicked_on(
        pieces in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..8),
    ) {
        let mut dec = Chunked::default();
        for p in pieces {
            if dec.feed(Bytes::from(p)).is_err() {
                break;
            }
        }
    }

    #[test]
    fn scenario_files_parse_or_name_what_is_wrong(text in texty()) {
        if let Err(e) = Scenario::parse(&text, "fuzz") {
            let message = format!("{e:#}");
            prop_assert!(!message.is_empty());
        }
    }

    #[test]
    fn a_valid_scenario_with_one_value_changed_parses_or_names_it(
        line in 0usize..40,
        value in prop_oneof![
            Just("-1".to_string()),
            Just("1e309".to_string()),
            Just("\"\"".to_string()),
            Just("\"0s\"".to_string()),
            Just("\"99999999999h\"".to_string()),
            Just("\"18446744073709551616B\"".to_string()),
            Just("nan".to_string()),
            Just("[]".to_string()),
            any::<i64>().prop_map(|v| v.to_string()),
            "\"[0-9]{1,25}(ms|s|m|h|B|KB|MiB|GB)?\"".prop_map(|s| s),
        ],
    ) {
        let text = latlab::scenario::builtin()[0].1;
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let n = lines.len();
        if let Some((key, _)) = lines[line % n].split_once(" = ") {
            let key = key.to_string();
            lines[line % n] = format!("{key} = {value}");
        }
        let _ = Scenario::parse(&lines.join("\n"), "fuzz");
    }

    #[test]
    fn theme_files_parse_or_name_what_is_wrong(text in texty(), color in any::<String>()) {
        let _ = Theme::parse(&text, Some(&Theme::dark()));
        let _ = Theme::parse(&format!("name = \"t\"\n[colors]\ntext = {color:?}\n"), Some(&Theme::dark()));
    }

    #[test]
    fn config_files_parse_or_name_the_line_and_key(
        text in texty(),
        key in prop::sample::select(latlab::config::keys().iter().map(|k| k.name).collect::<Vec<_>>()),
        value in any::<String>(),
        number in any::<i64>(),
    ) {
        let path = std::path::Path::new("/nonexistent/latlab/config.toml");
        let _ = latlab::config::Config::parse(&text, path);
        // Each key with a value of every type: accepted, or an error naming its line and key.
        for v in [format!("{value:?}"), number.to_string(), "true".into(), format!("[{value:?}]")] {
            let text = format!("{key} = {v}\n");
            if let Err(e) = latlab::config::Config::parse(&text, path) {
                let e = format!("{e:#}");
                prop_assert!(e.starts_with(&format!("line 1, key `{key}`: ")) || e.starts_with("line 1, column"), "{e}");
            }
        }
    }

    #[test]
    fn limits_files_and_overrides_parse_or_name_what_is_wrong(text in texty(), key in "[a-z_.]{0,40}", value in any::<String>()) {
        let _ = Limits::from_toml(&text);
        let _ = Limits::load(None, &[format!("{key}={value}")]);
        let _ = Limits::load(None, std::slice::from_ref(&value));
    }

    #[test]
    fn durations_and_sizes_parse_or_are_refused(text in any::<String>(), units in "[0-9]{0,30}(ns|us|ms|s|m|h|d|B|KB|MB|GB|TB|KiB|MiB|GiB)?") {
        let _ = parse_duration(&text);
        let _ = parse_bytes(&text);
        let _ = parse_duration(&units);
        let _ = parse_bytes(&units);
    }

    #[test]
    fn durations_and_sizes_print_back_to_themselves(ms in 0u64..86_400_000, bytes in 0u64..(1u64 << 40)) {
        let d = std::time::Duration::from_millis(ms);
        prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        let shown = format_bytes(bytes);
        let back = parse_bytes(&shown).unwrap();
        // Sizes print for reading, to one decimal of their unit (`1.5 MB`): back within 5%.
        prop_assert!((back as f64 - bytes as f64).abs() <= bytes as f64 * 0.05, "{bytes} -> {shown} -> {back}");
    }
}
