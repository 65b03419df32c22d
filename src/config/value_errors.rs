//! Why a config value was refused: the errors of the values' own parsers
//! (sizes, log filters, Redis URLs), shown after the key that holds them.

/// A size that is not one (`parse_size`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("invalid size `{text}` (a number of bytes, or one like \"64MiB\")")]
    NotANumber { text: String },
    #[error("invalid size `{text}`: unknown unit `{unit}` (B, KB, MB, GB, KiB, MiB or GiB)")]
    Unit { text: String, unit: String },
    #[error("invalid size `{text}`: too large")]
    TooLarge { text: String },
}

/// A log filter refused, and why.
#[derive(Debug, thiserror::Error)]
#[error("invalid log filter `{text}`: {why}")]
pub struct LevelError {
    pub text: String,
    pub why: LevelWhy,
}

/// What is wrong with a log filter.
#[derive(Debug, thiserror::Error)]
pub enum LevelWhy {
    #[error("empty (a level: error, warn, info, debug, trace or off)")]
    Empty,
    #[error("`{directive}` has no valid target before `=`")]
    NoTarget { directive: String },
    #[error("`{level}` is not a level (error, warn, info, debug, trace or off)")]
    NotALevel { level: String },
    #[error("{0}")]
    Filter(#[from] tracing_subscriber::filter::ParseError),
}

/// A Redis URL refused; it shows masked (no password).
#[derive(Debug, thiserror::Error)]
pub enum RedisUrlError {
    #[error("{masked}: the scheme must be redis:// or rediss://")]
    Scheme { masked: String },
    #[error("{masked}: {source}")]
    Invalid {
        masked: String,
        source: redis::RedisError,
    },
}
