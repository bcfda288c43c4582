//! A recording as another host may have written it (`latlab merge` and `compare` of `s3://`
//! prefixes read any host's): `recording.json`, `frames.jsonl`, `events.jsonl`, `report.json`,
//! `scenario.toml` and an interval log, each a real recording's file (`fuzz/seeds/recording/`),
//! that file with a piece replaced, or any bytes; and an interval log's histograms as any bytes.
//! Read as `latlab replay`, `compare` and `merge` read them: a recording, or an error naming the
//! file, never a panic; a merge writes inside its output folder only.
#![no_main]

use std::path::Path;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[
    (
        "recording.json",
        include_bytes!("../seeds/recording/recording.json"),
    ),
    (
        "frames.jsonl",
        include_bytes!("../seeds/recording/frames.jsonl"),
    ),
    (
        "events.jsonl",
        include_bytes!("../seeds/recording/events.jsonl"),
    ),
    (
        "report.json",
        include_bytes!("../seeds/recording/report.json"),
    ),
    (
        "scenario.toml",
        include_bytes!("../seeds/recording/scenario.toml"),
    ),
    (
        "hlog/kinesis.get_records.arrival_to_receive.hlog",
        include_bytes!("../seeds/recording/hlog/kinesis.get_records.arrival_to_receive.hlog"),
    ),
];

#[derive(Arbitrary, Debug)]
enum File {
    Kept,
    Missing,
    Any(Vec<u8>),
    /// The real file with `len` bytes from `at` replaced by `with`.
    Patched {
        at: u16,
        len: u8,
        with: Vec<u8>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    files: [File; 6],
    /// A base64 histogram put in an interval line of its own.
    histogram: Vec<u8>,
}

fn write(dir: &Path, input: &Input) {
    std::fs::create_dir_all(dir.join("hlog")).unwrap();
    for ((name, real), file) in FILES.iter().zip(&input.files) {
        let bytes: Vec<u8> = match file {
            File::Kept => real.to_vec(),
            File::Missing => continue,
            File::Any(b) => b.clone(),
            File::Patched { at, len, with } => {
                let mut b = real.to_vec();
                let at = (*at as usize).min(b.len());
                let end = (at + *len as usize).min(b.len());
                b.splice(at..end, with.iter().copied());
                b
            }
        };
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    use base64::Engine;
    let line = format!(
        "Tag=x,0.000,1.000,1.0,{}\n",
        base64::engine::general_purpose::STANDARD.encode(&input.histogram)
    );
    std::fs::write(
        dir.join("hlog/fuzz.x.hlog"),
        format!("#[BaseTime: 1700000000.000 (seconds since epoch)]\n{line}"),
    )
    .unwrap();
}

fuzz_target!(|input: Input| {
    let root = tempfile::tempdir().unwrap();
    let (a, b, out) = (
        root.path().join("a"),
        root.path().join("b"),
        root.path().join("out"),
    );
    write(&a, &input);
    std::fs::create_dir_all(&b).unwrap();
    for (name, real) in FILES {
        std::fs::create_dir_all(b.join(name).parent().unwrap()).unwrap();
        std::fs::write(b.join(name), real).unwrap();
    }
    let _ = latlab::record::read::Recording::open(&a).map(|r| {
        for i in 0..r.len().min(4) {
            let _ = r.snapshot(i);
        }
        let _ = r.report(r.len().saturating_sub(1));
    });
    if let (Ok(x), Ok(y)) = (
        latlab::compare::Input::read(&a),
        latlab::compare::Input::read(&b),
    ) {
        if let Ok(c) = latlab::compare::compare(&[x.clone(), y.clone()], true) {
            let _ = latlab::compare::render::document(&[x, y], &c, false);
        }
    }
    let _ = latlab::compare::merge::merge(&[a.clone(), b.clone()], &out);
    // Nothing outside the three folders.
    for entry in std::fs::read_dir(root.path()).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            ["a", "b", "out"].contains(&name.to_str().unwrap_or("")),
            "{name:?} written beside the output"
        );
    }
});
