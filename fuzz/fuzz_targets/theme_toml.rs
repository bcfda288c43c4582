//! Theme files (`latlab::theme::Theme::parse`), over the dark theme and alone: any text
//! parses or names what is wrong.
#![no_main]

use latlab::theme::Theme;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = Theme::parse(text, Some(&Theme::dark()));
    let _ = Theme::parse(text, None);
});
