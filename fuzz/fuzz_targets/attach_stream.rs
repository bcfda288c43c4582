//! What `latlab attach` reads from a host it does not control: an event stream in pieces of any
//! size, cut into events (each at most 32 MB, each byte looked at once), each `frame` event read
//! as a `latlab-frame/1` frame, taken into the screen's state and drawn at 120x40, each `end`
//! read as one. Any bytes give events, a refusal or errors: never a panic, and what is held of
//! an event that has not ended stays within the bound.
#![no_main]

use arbitrary::Arbitrary;
use latlab::share::client::EventStream;
use latlab::share::frame::{Ended, Received};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// The stream, as raw bytes or built from events (a frame's JSON of any shape).
    pieces: Vec<Piece>,
}

#[derive(Arbitrary, Debug)]
enum Piece {
    Raw(Vec<u8>),
    Event {
        name: u8,
        data: String,
    },
    /// A real frame of the tour with one of its fields set to a value of any kind.
    Frame {
        field: u8,
        value: String,
    },
}

fn tour_frame() -> serde_json::Value {
    static F: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        let theme = latlab::theme::Theme::dark();
        let mut app = latlab::tui::app::App::new(theme);
        app.sync_labs(&latlab::labs::LabKind::ALL);
        let view = latlab::tui::fixture::sample_tour_moment();
        let tick = latlab::tui::shared::tick(&app, &view, Default::default(), "fuzz", "t");
        let text = latlab::share::frame::envelope(
            1,
            "full",
            1.0,
            Some(1),
            &serde_json::to_string(&tick.run).unwrap(),
            &serde_json::to_string(&tick.snapshot).unwrap(),
            &serde_json::to_string(&tick.points).unwrap(),
            &serde_json::to_string(&tick.screen).unwrap(),
        );
        serde_json::from_str(&text).expect("a frame")
    })
    .clone()
}

/// Every leaf of a JSON document, by its path.
fn set_nth(v: &mut serde_json::Value, n: &mut usize, to: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => m.values_mut().any(|x| set_nth(x, n, to)),
        serde_json::Value::Array(a) => a.iter_mut().any(|x| set_nth(x, n, to)),
        leaf => {
            if *n == 0 {
                *leaf = to.clone();
                true
            } else {
                *n -= 1;
                false
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let mut stream = EventStream::default();
    let mut attached = latlab::tui::attach::Attached::default();
    let app = {
        let mut a = latlab::tui::app::App::new(latlab::theme::Theme::dark());
        a.sync_labs(&latlab::labs::LabKind::ALL);
        a
    };
    for piece in input.pieces.iter().take(16) {
        let bytes: Vec<u8> = match piece {
            Piece::Raw(b) => b.clone(),
            Piece::Event { name, data } => {
                let name = ["frame", "end", "other"][*name as usize % 3];
                format!("event: {name}\ndata: {}\n\n", data.replace('\n', " ")).into_bytes()
            }
            Piece::Frame { field, value } => {
                let mut f = tour_frame();
                let to =
                    serde_json::from_str(value).unwrap_or(serde_json::Value::String(value.clone()));
                let mut n = *field as usize;
                set_nth(&mut f, &mut n, &to);
                format!("event: frame\ndata: {f}\n\n").into_bytes()
            }
        };
        if stream.push(&bytes).is_err() {
            return;
        }
        assert!(stream.held() <= (32 << 20) + bytes.len());
        while let Some((name, data)) = stream.next_event() {
            match name.as_str() {
                "frame" => {
                    if let Ok(f) = serde_json::from_str::<Received>(&data) {
                        attached.take(f);
                        if let Some(view) = attached.view(60) {
                            let _ = latlab::tui::fixture::screen(&app, &view, (120, 40));
                        }
                    }
                }
                "end" => {
                    let _ = serde_json::from_str::<Ended>(&data);
                }
                _ => {}
            }
        }
    }
});
