//! A doctor check (`latlab doctor`): its mark, its name, what was found, the fix, and the labs
//! it stops or limits. The doctor writes the endpoint's, the terminal's and the log's; each lab
//! writes its own (`Lab::doctor`: the stream or buckets given, the Redis pair).

use super::LabKind;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// A lab runs, with less than it could (a consumer kind, a colour depth).
    Warn,
    /// A lab cannot run.
    Fail,
}

impl Status {
    pub fn mark(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// What a check can stop or limit: a lab, or the live lab (the TUI itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Lab(LabKind),
    /// The live lab: the TUI itself, whatever labs its scenario runs.
    Live,
}

impl Part {
    /// Every part, in the order the verdicts list them: each lab, then the live lab.
    pub fn all() -> impl Iterator<Item = Part> {
        LabKind::ALL
            .into_iter()
            .map(Part::Lab)
            .chain(std::iter::once(Part::Live))
    }

    /// The labs measured through an AWS endpoint (the services the emulator serves): what an
    /// endpoint that does not answer stops.
    pub fn served() -> Vec<Part> {
        LabKind::ALL
            .into_iter()
            .filter(|l| l.service().emulated())
            .map(Part::Lab)
            .collect()
    }

    /// The lab that measures `service` (the live lab when none does).
    pub fn of(service: crate::services::Service) -> Part {
        LabKind::of_service(service).map_or(Part::Live, Part::Lab)
    }

    pub fn label(self) -> String {
        match self {
            Part::Lab(l) => format!("{} lab", l.key()),
            Part::Live => "live lab (TUI)".into(),
        }
    }
}

/// One check's line.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub status: Status,
    pub name: &'static str,
    /// What was found, in a few words (no closing full stop).
    pub found: String,
    /// For a warn or a FAIL: what to do about it.
    pub fix: Option<String>,
    /// The labs a FAIL stops, or a warn limits.
    pub labs: Vec<Part>,
}

impl Check {
    pub fn ok(name: &'static str, found: impl Into<String>) -> Check {
        Check {
            status: Status::Ok,
            name,
            found: found.into(),
            fix: None,
            labs: Vec::new(),
        }
    }

    pub fn warn(
        name: &'static str,
        found: impl Into<String>,
        fix: impl Into<String>,
        labs: &[Part],
    ) -> Check {
        Check::with_fix(Status::Warn, name, found.into(), fix.into(), labs)
    }

    pub fn fail(
        name: &'static str,
        found: impl Into<String>,
        fix: impl Into<String>,
        labs: &[Part],
    ) -> Check {
        Check::with_fix(Status::Fail, name, found.into(), fix.into(), labs)
    }

    fn with_fix(
        status: Status,
        name: &'static str,
        found: String,
        fix: String,
        labs: &[Part],
    ) -> Check {
        Check {
            status,
            name,
            found,
            fix: Some(fix),
            labs: labs.to_vec(),
        }
    }
}

/// What a lab's own checks may use: the target options and, when the endpoint answered, the
/// doctor's probing clients (one attempt each, a short timeout) and where they go.
pub struct DoctorContext<'a> {
    pub target: &'a crate::labs::TargetOptions,
    pub endpoint: Option<&'a Endpoint>,
}

/// The endpoint the doctor probed, with the clients it probed it with.
pub struct Endpoint {
    pub kinesis: aws_sdk_kinesis::Client,
    pub s3: aws_sdk_s3::Client,
    /// The clients' configuration (each call given up after the probe's timeout), for a lab
    /// that probes a service of its own.
    pub clients: crate::aws::Clients,
    /// Where it is, for the lines: `the embedded emulator on 127.0.0.1:PORT`, a URL, AWS.
    pub at: String,
    /// The embedded emulator (which creates what it is asked to), not another endpoint.
    pub embedded: bool,
}
