//! A lab's keys, as data: each row is the keys as the help shows them, what they do, the
//! characters `latlab screenshot --press` may give for them, where the footer shows them, and
//! the lab's command each key sends. The TUI's key table (`tui/keys/`) is built from every
//! lab's rows and its own (tabs, help, quit, the replay's cursor); no second table binds a lab's
//! key.

/// Where one of a lab's keys shows in the footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyFooter {
    /// Not in the footer (the help lists it).
    Hidden,
    /// On its lab's tab, `tab`; on the overview, `overview` (when the run has the lab).
    Shown {
        tab: &'static [(&'static str, &'static str)],
        overview: &'static [(&'static str, &'static str)],
    },
}

/// One row of a lab's keys. Rows of several labs with the same keys and words are one row of
/// the help (`[ / ]`, the payload of the tab shown): a key they share goes to the lab of the tab
/// shown, or to the first of them the run has.
#[derive(Clone, Copy, Debug)]
pub struct LabKey<C: 'static> {
    /// As the help shows them: `+ / -`.
    pub keys: &'static str,
    pub what: &'static str,
    /// The characters `--press` may give for them.
    pub press: &'static str,
    pub footer: KeyFooter,
    /// Its commands go to the lab whichever tab is shown; otherwise (false) the lab's tab is
    /// shown first, unless the overview is.
    pub send: bool,
    /// Each character bound and the command it sends.
    pub bindings: &'static [(char, C)],
}

/// The words of a row several labs bind, written once so that their rows are one row of the
/// help; each lab gives its own commands with [`SharedKey::with`].
#[derive(Clone, Copy, Debug)]
pub struct SharedKey {
    pub keys: &'static str,
    pub what: &'static str,
    pub press: &'static str,
    pub footer: KeyFooter,
    pub send: bool,
}

impl SharedKey {
    /// The row, with the lab's commands for its keys.
    pub const fn with<C>(&self, bindings: &'static [(char, C)]) -> LabKey<C> {
        LabKey {
            keys: self.keys,
            what: self.what,
            press: self.press,
            footer: self.footer,
            send: self.send,
            bindings,
        }
    }
}

/// The payload size of the tab shown, down and up (the Kinesis producer's, the S3 objects').
pub const PAYLOAD: SharedKey = SharedKey {
    keys: "[ / ]",
    what: "payload size down / up (of the tab shown)",
    press: "[]",
    footer: KeyFooter::Shown {
        tab: &[("[/]", "payload")],
        overview: &[],
    },
    send: true,
};

/// The producer's rate of the tab shown, down and up (the Kinesis producer's records, the SQS
/// producer's messages, each a second; on the overview, the first of them the run has).
pub const RATE: SharedKey = SharedKey {
    keys: "< / >",
    what: "producer rate down / up (of the tab shown): 1, 2, 5, 10, 20, 50, ... a second",
    press: "<>",
    footer: KeyFooter::Shown {
        tab: &[("</>", "rate")],
        overview: &[],
    },
    send: false,
};
