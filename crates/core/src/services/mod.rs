//! The services' own vocabulary, below both the emulator and the labs: what Kinesis, S3, SQS and
//! DynamoDB call their operations, each service's fault kinds (`X::faults`), S3's storage classes and its
//! directory-bucket naming rule, Kinesis's name rule. The labs also run against real AWS, where no emulator exists, so none of this belongs to
//! the emulator; it imports nothing of latlab's.

pub mod dynamodb;
pub mod fault_kinds;
pub mod kinesis;
pub mod redis;
pub mod s3;
pub mod sqs;

/// The services latlab measures: those the embedded emulator serves, and Redis, which runs as
/// real servers. Faults name the service they are injected into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Service {
    Kinesis,
    S3,
    Redis,
    Sqs,
    Dynamodb,
}

impl Service {
    pub const ALL: [Service; 5] = [
        Service::Kinesis,
        Service::S3,
        Service::Redis,
        Service::Sqs,
        Service::Dynamodb,
    ];

    /// As people write it: `Kinesis`, `S3`, `Redis`, `SQS`.
    pub fn label(self) -> &'static str {
        match self {
            Service::Kinesis => "Kinesis",
            Service::S3 => "S3",
            Service::Redis => "Redis",
            Service::Sqs => "SQS",
            Service::Dynamodb => "DynamoDB",
        }
    }

    /// As files and flags write it: `kinesis`, `s3`, `redis`, `sqs` (a limits or profile table, the
    /// prefix of its fault kinds).
    pub fn key(self) -> &'static str {
        match self {
            Service::Kinesis => "kinesis",
            Service::S3 => "s3",
            Service::Redis => "redis",
            Service::Sqs => "sqs",
            Service::Dynamodb => "dynamodb",
        }
    }

    /// The operations latlab makes of it, by API name (none for Redis, whose commands are not
    /// named by faults).
    pub fn operations(self) -> &'static [&'static str] {
        match self {
            Service::Kinesis => kinesis::Op::NAMES,
            Service::S3 => s3::Op::NAMES,
            Service::Redis => &[],
            Service::Sqs => sqs::Op::NAMES,
            Service::Dynamodb => dynamodb::Op::NAMES,
        }
    }

    /// Its fault kinds, as it declares them (`kinesis::faults`, ...).
    pub fn faults(self) -> &'static [fault_kinds::KindInfo] {
        match self {
            Service::Kinesis => kinesis::faults::FAULTS,
            Service::S3 => s3::faults::FAULTS,
            Service::Redis => redis::faults::FAULTS,
            Service::Sqs => sqs::faults::FAULTS,
            Service::Dynamodb => dynamodb::faults::FAULTS,
        }
    }

    /// The services the embedded emulator serves, as a phrase: `Kinesis, S3, SQS and DynamoDB`.
    pub fn emulated_list() -> String {
        Service::phrase(true)
    }

    /// The services it does not serve (latlab's own servers stand in): `Redis`.
    pub fn not_emulated_list() -> String {
        Service::phrase(false)
    }

    fn phrase(emulated: bool) -> String {
        let names: Vec<&str> = Service::ALL
            .into_iter()
            .filter(|s| s.emulated() == emulated)
            .map(Service::label)
            .collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }

    /// Whether the embedded emulator serves it (and so injects its faults).
    pub fn emulated(self) -> bool {
        match self {
            Service::Kinesis | Service::S3 | Service::Sqs | Service::Dynamodb => true,
            Service::Redis => false,
        }
    }
}

/// Declares a service's operations as an enum with their API names: `ALL`, `NAMES`, `name` and
/// `parse`, so the emulator can dispatch on them exhaustively and `--lacking`, faults and doctor
/// read the same list.
macro_rules! operations {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$op_meta:meta])* $op:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $name {
            $($(#[$op_meta])* $op),+
        }

        impl $name {
            /// Every operation, in the order declared.
            pub const ALL: &'static [$name] = &[$($name::$op),+];
            /// Every operation's API name, in the order of [`Self::ALL`].
            pub const NAMES: &'static [&'static str] = &[$(stringify!($op)),+];

            /// The operation's name in the service's API.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$op => stringify!($op)),+
                }
            }

            /// The operation an API name names, exactly as the API spells it.
            pub fn parse(name: &str) -> Option<$name> {
                match name {
                    $(stringify!($op) => Some($name::$op),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use operations;

#[cfg(test)]
mod tests {
    use super::{kinesis, s3, sqs};

    #[test]
    fn every_operation_parses_back_from_its_name() {
        for op in kinesis::Op::ALL {
            assert_eq!(kinesis::Op::parse(op.name()), Some(*op));
        }
        for op in s3::Op::ALL {
            assert_eq!(s3::Op::parse(op.name()), Some(*op));
        }
        assert_eq!(kinesis::Op::NAMES.len(), kinesis::Op::ALL.len());
        assert_eq!(s3::Op::NAMES.len(), s3::Op::ALL.len());
        for op in sqs::Op::ALL {
            assert_eq!(sqs::Op::parse(op.name()), Some(*op));
        }
        assert_eq!(kinesis::Op::parse("putrecord"), None, "names are exact");
        assert_eq!(s3::Op::parse(""), None);
    }
}
