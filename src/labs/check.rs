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
            .filter(|l| l.service().is_some_and(|s| s.emulated()))
            .map(Part::Lab)
            .collect()
    }

    /// The lab that measures `service` (the live lab when none does).
    pub fn of(service: latlab_core::services::Service) -> Part {
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

/// The endpoint the doctor probes, with the configuration of the clients it probes it with.
pub struct Endpoint {
    /// The clients' configuration (each call given up after [`CALL_TIMEOUT`]), from which each
    /// lab builds its service's client ([`Endpoint::once`]).
    pub clients: crate::aws::Clients,
    /// Where it is, for the lines: `the embedded emulator on 127.0.0.1:PORT`, a URL, AWS.
    pub at: String,
    /// The embedded emulator (which creates what it is asked to), not another endpoint.
    pub embedded: bool,
    /// A name that exists nowhere, fresh for each run of the doctor
    /// (`latlab-doctor-probe-<random hex>`): what the probes call on, so nothing is touched.
    pub probe_name: String,
    pub region: String,
    /// The credentials' account (000000000000 where it cannot be told).
    pub account: String,
}

impl Endpoint {
    /// The retry settings of a probe: one attempt, no retry.
    pub fn once() -> crate::aws::RetrySettings {
        crate::aws::RetrySettings {
            max_attempts: 1,
            ..crate::aws::RetrySettings::default()
        }
    }

    /// The partition of an ARN in the endpoint's region.
    pub fn partition(&self) -> &'static str {
        if self.region.starts_with("cn-") {
            "aws-cn"
        } else if self.region.starts_with("us-gov-") {
            "aws-us-gov"
        } else {
            "aws"
        }
    }
}

/// How long one probe call may take, connecting included.
pub const CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// What one call came back with.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// An AWS answer: success, or an error with a code (the code).
    Answered(String),
    /// An answer that is not the operation's: what came back.
    Lacking(String),
    /// No answer at all: the transport's error, or a timeout.
    Silent(String),
}

/// Reads a call's result the way the labs read it: an endpoint that implements an operation
/// answers the probe's call with an AWS error (ResourceNotFoundException, NoSuchBucket, a
/// validation or access error: any error with a code); one that lacks it answers something
/// else (an HTML page, an unknown-operation code), as `crate::aws::unsupported` reads it.
pub fn judge<T, E>(
    r: Result<
        T,
        aws_smithy_runtime_api::client::result::SdkError<E, aws_smithy_runtime_api::http::Response>,
    >,
) -> Outcome
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_smithy_runtime_api::client::result::SdkError;
    let e = match r {
        Ok(_) => return Outcome::Answered("OK".into()),
        Err(e) => e,
    };
    if let Some(answered) = crate::aws::unsupported(&e) {
        return Outcome::Lacking(answered);
    }
    match &e {
        SdkError::ServiceError(s) if s.err().code().is_some() => {
            Outcome::Answered(s.err().code().unwrap_or_default().to_string())
        }
        SdkError::TimeoutError(_) => {
            Outcome::Silent(format!("no answer within {} s", CALL_TIMEOUT.as_secs()))
        }
        SdkError::DispatchFailure(_) => Outcome::Silent(crate::aws::error_line(&e)),
        _ => Outcome::Lacking(crate::aws::error_line(&e)),
    }
}

/// What part of a lab needs an operation: what is lost without it, and whether the lab still
/// runs; on the embedded emulator, when that differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    pub lost: &'static str,
    pub runs: bool,
    pub embedded: Option<(&'static str, bool)>,
}

impl Need {
    pub const fn new(lost: &'static str, runs: bool) -> Need {
        Need {
            lost,
            runs,
            embedded: None,
        }
    }

    /// What is lost without it, and whether the lab can still run.
    pub fn effect(self, embedded: bool) -> (&'static str, bool) {
        match (embedded, self.embedded) {
            (true, Some(e)) => e,
            _ => (self.lost, self.runs),
        }
    }
}

/// One operation's probe: what it needs the operation for, what came back, and the IAM action
/// its call asks for (the permissions line names a denied one).
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    pub op: &'static str,
    pub need: Need,
    pub outcome: Outcome,
    pub action: Option<String>,
}

/// One probe's call, before it is made: its operation, need, IAM action and the call.
pub type Call<'a> = (
    &'static str,
    Need,
    Option<String>,
    futures_util::future::BoxFuture<'a, Outcome>,
);

/// Runs the calls at once and pairs each outcome with its operation.
pub async fn run_probes(list: Vec<Call<'_>>) -> Vec<Probe> {
    let (heads, calls): (Vec<_>, Vec<_>) = list
        .into_iter()
        .map(|(op, need, action, call)| ((op, need, action), call))
        .unzip();
    futures_util::future::join_all(calls)
        .await
        .into_iter()
        .zip(heads)
        .map(|(outcome, (op, need, action))| Probe {
            op,
            need,
            outcome,
            action,
        })
        .collect()
}

/// One line for a service's operations: how many answer, and for those that do not, what they
/// answered and what that costs the lab. FAIL when the lab cannot run without them: a need it
/// cannot run without, or every need of one of `together` (each with what is then lost: "no
/// producer can write").
pub fn ops_check(
    name: &'static str,
    lab: Part,
    probes: &[Probe],
    embedded: bool,
    note: &str,
    together: &[(&[Need], &str)],
) -> Check {
    let answering = probes
        .iter()
        .filter(|p| matches!(p.outcome, Outcome::Answered(_)))
        .count();
    let counted = format!("{answering} of {} answer", probes.len());
    let missing: Vec<&Probe> = probes
        .iter()
        .filter(|p| !matches!(p.outcome, Outcome::Answered(_)))
        .collect();
    if missing.is_empty() {
        return Check::ok(name, format!("{counted}{note}"));
    }
    // Operations that cost the same, named together.
    let mut groups: Vec<(Need, Vec<&Probe>)> = Vec::new();
    for p in &missing {
        match groups.iter_mut().find(|(n, _)| *n == p.need) {
            Some((_, list)) => list.push(p),
            None => groups.push((p.need, vec![p])),
        }
    }
    let lacks = |n: &Need| groups.iter().any(|(g, _)| g == n);
    let mut runs = groups.iter().all(|(n, _)| n.effect(embedded).1);
    let mut parts: Vec<String> = groups
        .iter()
        .map(|(need, list)| {
            let ops: Vec<&str> = list.iter().map(|p| p.op).collect();
            let verb = if ops.len() == 1 { "does" } else { "do" };
            let answered = match &list[0].outcome {
                Outcome::Lacking(a) | Outcome::Silent(a) | Outcome::Answered(a) => a,
            };
            format!(
                "{} {verb} not answer ({answered}): {}",
                ops.join(" and "),
                need.effect(embedded).0
            )
        })
        .collect();
    for (needs, lost) in together {
        if needs.iter().all(lacks) {
            runs = false;
            parts.push(lost.to_string());
        }
    }
    let found = format!("{counted}; {}", parts.join("; "));
    let fix = if embedded {
        "leave out --lacking (it makes the embedded emulator answer as an endpoint without them)"
    } else {
        "an endpoint that implements them (`latlab emulate` does), or a scenario without what needs them"
    };
    if runs {
        Check::warn(name, found, fix, &[lab])
    } else {
        Check::fail(name, found, fix, &[lab])
    }
}
