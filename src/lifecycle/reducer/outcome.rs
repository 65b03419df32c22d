//! How an exchange's response ended, and the outcome of a stream.

/// How a response body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    /// The upstream ended the body cleanly.
    Upstream,
    /// The caller hung up.
    ClientGone,
    /// The upstream connection failed mid-body.
    UpstreamError,
}

/// How a stream ended: the `outcome` label of `a2a_stream_duration_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The task reached a terminal state, the stream carried its one
    /// Message, or an error answer ended it.
    Terminal,
    /// The stream ended at input-required / auth-required, or after a 0.3
    /// `final:true` at an active state (the server expects a resubscribe).
    Interrupted,
    /// The upstream ended or broke the stream before any of the above.
    Truncated,
    /// The caller hung up first.
    ClientGone,
}

impl Outcome {
    /// Every outcome (for pre-registering metric label values).
    pub const ALL: &'static [Outcome] = &[
        Outcome::Terminal,
        Outcome::Interrupted,
        Outcome::Truncated,
        Outcome::ClientGone,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Terminal => "terminal",
            Outcome::Interrupted => "interrupted",
            Outcome::Truncated => "truncated",
            Outcome::ClientGone => "client_gone",
        }
    }
}
