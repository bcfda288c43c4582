//! What a lab is given and says of several hosts' runs of one scenario taken together
//! ([`super::Report::fleet`], which `latlab merge` calls through the registry).

/// One host's run as a merge sees it: its name, its run's id, and one lab's part of its
/// report (None when its report has none, or it has no report).
pub struct HostPart<'a, S> {
    pub host: &'a str,
    pub run_id: &'a str,
    pub part: Option<&'a S>,
    /// It measured an embedded emulator of its own: no other host's records or requests reach
    /// what it measured, nor its own theirs.
    pub own_emulator: bool,
}

/// One line a merge prints of several hosts together; a warning is marked as one.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub text: String,
    pub warning: bool,
}

impl Line {
    pub fn info(text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            warning: false,
        }
    }

    pub fn warning(text: impl Into<String>) -> Line {
        Line {
            text: text.into(),
            warning: true,
        }
    }
}
