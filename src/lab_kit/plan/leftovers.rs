//! `latlab cleanup`: what latlab runs left on a target, found by latlab's tags and prefixes
//! (each lab finds its own, `labs/X/cleanup.rs`, through `Cleanup::leftovers`), filtered by run and
//! age, listed, and deleted only when asked. A resource without latlab's tag or prefix is never
//! touched: one merely named like latlab's is listed as left alone.

use std::time::{Duration, SystemTime};

/// What a lab's search is given: the target and its clients.
pub struct CleanupContext<'a> {
    pub target: &'a super::Target,
    /// The SDK's clients (None: no AWS lab is looked for).
    pub clients: Option<&'a crate::aws::Clients>,
}

/// One resource a run left.
#[derive(Clone, Debug, PartialEq)]
pub struct Leftover {
    /// The lab that made it, as screens name it ("Kinesis").
    pub lab: &'static str,
    /// `stream`, `enhanced fan-out consumer`, `objects`, `Redis keys`.
    pub kind: String,
    /// As the user would name it: the stream's name, `BUCKET/latlab/RUN_ID/`, `latlab:RUN_ID:*`.
    pub name: String,
    /// What the lab deletes it by (an ARN, a bucket and prefix).
    pub handle: String,
    /// The run that made it.
    pub run_id: String,
    /// When that run made it, when the resource says (its tag, its oldest object, its marker).
    pub created: Option<SystemTime>,
    /// What it holds, in a few words: `2 consumers`, `16 objects, 2.0 KB`.
    pub detail: String,
}

/// A resource named like latlab's that latlab did not make (no tag): listed, never touched.
#[derive(Clone, Debug, PartialEq)]
pub struct LeftAlone {
    pub lab: &'static str,
    pub kind: String,
    pub name: String,
    pub why: String,
}

/// What a lab found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    pub items: Vec<Leftover>,
    pub alone: Vec<LeftAlone>,
    /// What it could not look at, and why (a bucket not named, an endpoint not answering).
    pub notes: Vec<String>,
    /// Whether its search failed part-way (what it lists may not be all there is).
    pub incomplete: bool,
}

/// Which leftovers a cleanup is about: `--run ID`, `--older-than D`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub run: Option<String>,
    pub older_than: Option<Duration>,
}

impl Filter {
    /// Whether `item` is one to delete now. An item of unknown age is not older than anything.
    pub fn keeps(&self, item: &Leftover, now: SystemTime) -> bool {
        if let Some(run) = &self.run
            && &item.run_id != run
        {
            return false;
        }
        match (self.older_than, item.created) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(d), Some(at)) => now.duration_since(at).is_ok_and(|age| age >= d),
        }
    }
}

/// A run id as latlab makes them (8 lowercase hex digits); None for anything else.
pub fn run_id_of(text: &str) -> Option<&str> {
    (text.len() == 8
        && text
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()))
    .then_some(text)
}

/// The run id a name made with `NAME-latlab-RUN_ID` carries.
pub fn run_id_in_name(name: &str) -> Option<&str> {
    name.rsplit_once("-latlab-")
        .and_then(|(_, id)| run_id_of(id))
}

/// `5m ago`, for a listing.
pub fn age(created: Option<SystemTime>, now: SystemTime) -> String {
    match created.and_then(|c| now.duration_since(c).ok()) {
        Some(d) => format!(
            "{} ago",
            latlab_core::units::format_duration(Duration::from_secs(d.as_secs()))
        ),
        None => "age unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_read_only_from_latlabs_own_forms() {
        assert_eq!(
            run_id_in_name("latlab-demo-latlab-0a1b2c3d"),
            Some("0a1b2c3d")
        );
        assert_eq!(
            run_id_in_name("SDK_subscribe-latlab-0a1b2c3d"),
            Some("0a1b2c3d")
        );
        assert_eq!(run_id_in_name("latlab-demo"), None);
        assert_eq!(run_id_in_name("x-latlab-0A1B2C3D"), None);
        assert_eq!(run_id_in_name("x-latlab-0a1b2c3"), None);
        assert_eq!(run_id_of("*"), None);
    }

    #[test]
    fn the_filter_keeps_a_run_and_an_age() {
        let now = SystemTime::now();
        let item = |run: &str, secs: Option<u64>| Leftover {
            lab: "Kinesis",
            kind: "stream".into(),
            name: "s".into(),
            handle: "s".into(),
            run_id: run.into(),
            created: secs.map(|s| now - Duration::from_secs(s)),
            detail: String::new(),
        };
        let all = Filter::default();
        assert!(all.keeps(&item("0a1b2c3d", None), now));
        let run = Filter {
            run: Some("0a1b2c3d".into()),
            older_than: None,
        };
        assert!(run.keeps(&item("0a1b2c3d", Some(5)), now));
        assert!(!run.keeps(&item("ffffffff", Some(5)), now));
        let old = Filter {
            run: None,
            older_than: Some(Duration::from_secs(3600)),
        };
        assert!(old.keeps(&item("0a1b2c3d", Some(7200)), now));
        assert!(!old.keeps(&item("0a1b2c3d", Some(60)), now));
        // Of unknown age: not older than anything, so left for `--run` to name.
        assert!(!old.keeps(&item("0a1b2c3d", None), now));
    }
}
