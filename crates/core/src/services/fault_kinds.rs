//! What a kind of fault is, as a service declares it: its name, what it does (its [`Effect`]),
//! how long it lasts and what it can hit. Each service lists its own kinds (`kinesis::faults`,
//! ...) with `declare!`; `crate::faults` is how a fault of a kind is set, fired and logged.

use std::fmt;
use std::time::Duration;

use super::Service;

/// What a fault does to what it hits, whichever service declares it: the emulator acts on the
/// effect, never on a particular service's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The connection is reset before the request is served: nothing happened.
    ResetBefore,
    /// The request is served and the connection reset instead of the answer.
    ResetAfter,
    /// The service's 500.
    InternalError,
    /// The service's 503 (ServiceUnavailable, SlowDown).
    Unavailable,
    /// The answer is held back for the fault's duration.
    Stall,
    /// The answer's first byte is held back for the fault's duration.
    FirstByteStall,
    /// The connection is reset halfway through a body.
    BodyReset,
    /// Every request waits the fault's delay more, for its duration.
    Spike,
    /// The service's own state changes at once (the emulator hands the fault to the service).
    Change,
    /// An event stream is cut in the middle of a frame.
    StreamCut,
    /// An event stream ends early, cleanly.
    StreamEnd,
    /// Injected by the service's lab on its own servers, not by the emulator.
    OnServers,
}

impl Effect {
    /// Hits one request (or `count` of them) each time it fires.
    fn per_request(self) -> bool {
        !matches!(
            self,
            Effect::Spike
                | Effect::Change
                | Effect::StreamCut
                | Effect::StreamEnd
                | Effect::OnServers
        )
    }
}

/// A kind of fault as its service declares it (`services::kinesis::faults`, ...).
#[derive(Debug)]
pub struct KindInfo {
    /// `SERVICE.NAME`, as `--fault` and `[[faults]]` write it.
    pub name: &'static str,
    /// What it does, in a few words, for the menu and `--help`.
    pub does: &'static str,
    pub effect: Effect,
    /// Lasts a while, this long unless its `for` says otherwise; None: it acts at once.
    pub lasts: Option<Duration>,
    /// Requests hit each time it fires, unless its `count` says otherwise.
    pub count: u32,
    /// The only operations it can hit (none: it takes no operation); None: any of its service's.
    pub only: Option<&'static [&'static str]>,
}

impl KindInfo {
    /// A kind that acts at once.
    pub const fn hits(name: &'static str, does: &'static str, effect: Effect) -> KindInfo {
        KindInfo {
            name,
            does,
            effect,
            lasts: None,
            count: 1,
            only: None,
        }
    }

    /// A kind that lasts, `lasts` by default.
    pub const fn lasting(
        name: &'static str,
        does: &'static str,
        effect: Effect,
        lasts: Duration,
    ) -> KindInfo {
        KindInfo {
            lasts: Some(lasts),
            ..KindInfo::hits(name, does, effect)
        }
    }

    /// That hits these operations only (none: it takes no operation).
    pub const fn only(self, operations: &'static [&'static str]) -> KindInfo {
        KindInfo {
            only: Some(operations),
            ..self
        }
    }

    /// That hits `count` requests each time it fires, by default.
    pub const fn count(self, count: u32) -> KindInfo {
        KindInfo { count, ..self }
    }
}

/// Declares a service's fault kinds: a [`Kind`] constant for each, and `FAULTS`, the table of
/// what each is, in the order the menu lists them.
macro_rules! declare {
    ($service:expr; $($(#[$meta:meta])* $id:ident = $info:expr;)+) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        enum Index {
            $($id),+
        }

        $(
            $(#[$meta])*
            pub const $id: $crate::services::fault_kinds::Kind =
                $crate::services::fault_kinds::Kind::declared($service, Index::$id as u8);
        )+

        /// Every fault kind of the service, in the order they are listed.
        pub const FAULTS: &[$crate::services::fault_kinds::KindInfo] = &[$($info),+];
    };
}
pub(crate) use declare;

/// A kind of fault: one of a service's (`services::kinesis::faults::STALL`). Kinds are ordered
/// by service, then as their service lists them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kind {
    service: Service,
    index: u8,
}

impl Kind {
    /// The `index`th of `service`'s kinds (the `fault_kinds!` declaration's).
    pub const fn declared(service: Service, index: u8) -> Kind {
        Kind { service, index }
    }

    /// Every kind of every service, in order.
    pub fn all() -> impl Iterator<Item = Kind> {
        Service::ALL.into_iter().flat_map(|service| {
            (0..service.faults().len()).map(move |i| Kind::declared(service, i as u8))
        })
    }

    /// What its service declared of it.
    pub fn info(self) -> &'static KindInfo {
        &self.service.faults()[usize::from(self.index)]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// What it does, in a few words, for the menu and `--help`.
    pub fn describe(self) -> &'static str {
        self.info().does
    }

    pub fn service(self) -> Service {
        self.service
    }

    pub fn effect(self) -> Effect {
        self.info().effect
    }

    /// The only operations it can hit (none: it takes no operation); None: any of its service's.
    pub fn only(self) -> Option<&'static [&'static str]> {
        self.info().only
    }

    /// Lasts a while (its `for`), rather than hitting requests one at a time.
    pub fn has_duration(self) -> bool {
        self.info().lasts.is_some()
    }

    /// Hits one request (or `count` of them) each time it fires.
    pub fn per_request(self) -> bool {
        self.effect().per_request()
    }

    /// How long it lasts unless its `for` says otherwise (zero: it acts at once).
    pub fn default_duration(self) -> Duration {
        self.info().lasts.unwrap_or(Duration::ZERO)
    }

    pub fn parse(text: &str) -> Result<Kind, String> {
        Kind::all()
            .find(|k| k.name() == text.trim())
            .ok_or_else(|| {
                format!(
                    "'{text}' is not a fault kind; valid: {}",
                    Kind::all().map(Kind::name).collect::<Vec<_>>().join(", ")
                )
            })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_kind_is_its_services_and_hits_only_its_operations() {
        let all: Vec<Kind> = Kind::all().collect();
        assert_eq!(all.len(), 24);
        let mut names: Vec<&str> = all.iter().map(|k| k.name()).collect();
        names.dedup();
        assert_eq!(names.len(), all.len(), "two kinds share a name: {names:?}");
        for (i, k) in all.iter().enumerate() {
            assert!(
                k.name().starts_with(&format!("{}.", k.service().key())),
                "{k}"
            );
            assert_eq!(Kind::parse(k.name()), Ok(*k));
            assert!(i == 0 || all[i - 1] < *k, "listed out of order: {k}");
            assert_eq!(k.has_duration(), !k.default_duration().is_zero(), "{k}");
            for op in k.only().unwrap_or_default() {
                assert!(
                    k.service().operations().contains(op),
                    "{k} hits {op}, not an operation of {}",
                    k.service().label()
                );
            }
        }
        let mut body: Vec<&str> = crate::services::s3::Op::ALL
            .iter()
            .filter(|o| o.carries_object_body())
            .map(|o| o.name())
            .collect();
        let mut declared = crate::services::s3::BODY_OPERATIONS.to_vec();
        body.sort();
        declared.sort();
        assert_eq!(body, declared);
    }
}
