//! File descriptors, planned: the process's `RLIMIT_NOFILE` is raised to
//! its hard limit, a reserve is kept for what must never lack one (the
//! admin listener's connections, the audit file and its reopening, the
//! listeners, the runtimes, the upstream probe), and the rest is shared
//! between caller connections and upstream connections. Configured limits
//! that would not fit are lowered, and said so, at start: a caller flood
//! then waits in the accept queue instead of taking the descriptors
//! `/healthz` needs.

/// Descriptors kept for the process itself, beyond the admin connections.
pub const RESERVE: u64 = 64;
/// Most admin connections served at once (their descriptors are reserved).
pub const ADMIN_CONNECTIONS: usize = 32;

/// What the proxy may open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Caller connections served at once.
    pub callers: usize,
    /// Upstream HTTP/1.1 connections in use at once, over every thread...
    pub upstream_leases: usize,
    /// ...and idle ones kept, over every thread.
    pub upstream_idle: usize,
    /// The descriptor limit the plan was made for (`None`: unlimited).
    pub nofile: Option<u64>,
    /// Whether the configured limits had to be lowered.
    pub lowered: bool,
    /// The descriptors the configured limits need (reserve included).
    pub need: u64,
    /// The configured caller connections (`proxy.max_connections`).
    pub configured_callers: usize,
}

impl Plan {
    /// Shares `nofile` descriptors: `callers` and `upstreams` as configured
    /// when they fit beside the reserve, else both lowered in proportion.
    /// A quarter of the upstream share is for idle (pooled) connections.
    pub fn new(callers: usize, upstreams: usize, nofile: Option<u64>) -> Plan {
        let callers = callers.max(1);
        let configured_callers = callers;
        let upstreams = upstreams.max(1);
        let reserve = RESERVE + ADMIN_CONNECTIONS as u64;
        let want = (callers + upstreams + upstreams / 4) as u64;
        let (callers, upstreams, lowered) = match nofile {
            Some(n) if n < reserve + want => {
                let room = n.saturating_sub(reserve).max(4);
                let c = (room * callers as u64 / want).max(1) as usize;
                let u = (room * upstreams as u64 / want).max(1) as usize;
                (c, u, true)
            }
            _ => (callers, upstreams, false),
        };
        Plan {
            callers,
            upstream_leases: upstreams,
            upstream_idle: (upstreams / 4).max(1),
            nofile,
            lowered,
            need: reserve + want,
            configured_callers,
        }
    }

    /// What the start says of a lowered plan, as one line: whether it is a
    /// warning, and the line. A warning only when fewer than half the
    /// configured caller connections can be served (the limit then truly
    /// bounds the proxy, as 1,024 does); a limit a little short of what
    /// the defaults want (10,000 callers and upstreams need 22,596: 20,000
    /// still serves 8,846 callers) is said at info level, not at every
    /// start as a warning.
    pub fn nofile_line(&self) -> Option<(bool, String)> {
        let nofile = self.nofile.filter(|_| self.lowered)?;
        let warn = self.callers.saturating_mul(2) < self.configured_callers;
        let line = format!(
            "RLIMIT_NOFILE is too low: {nofile} descriptors, {} wanted by proxy.max_connections \
             and proxy.max_upstream_connections; serving at most {} caller and {} upstream \
             connections. Set LimitNOFILE={} (systemd) or ulimit -n {}, or lower those keys",
            self.need, self.callers, self.upstream_leases, self.need, self.need
        );
        Some((warn, line))
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard one (as nginx's
/// `worker_rlimit_nofile` and Go's runtime do); the soft limit now, or
/// `None` when unlimited.
pub fn raise_nofile() -> Option<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            limit = raised;
        }
    }
    limit.current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_that_fit_stay_as_configured() {
        let p = Plan::new(10_000, 10_000, Some(1 << 20));
        assert_eq!(
            (p.callers, p.upstream_leases, p.upstream_idle),
            (10_000, 10_000, 2_500)
        );
        assert!(!p.lowered);
        assert!(!Plan::new(10, 10, None).lowered);
    }

    #[test]
    fn limits_that_do_not_fit_are_lowered_and_the_reserve_kept() {
        let p = Plan::new(10_000, 10_000, Some(1024));
        assert!(p.lowered);
        let used = (p.callers + p.upstream_leases + p.upstream_idle) as u64;
        assert!(used + RESERVE + ADMIN_CONNECTIONS as u64 <= 1024, "{p:?}");
        assert!(p.callers >= 300, "{p:?}");
        let tiny = Plan::new(100, 100, Some(10));
        assert!(tiny.callers >= 1 && tiny.upstream_leases >= 1);
    }

    #[test]
    fn a_limit_a_little_short_is_said_not_warned() {
        assert_eq!(Plan::new(10_000, 10_000, Some(1 << 20)).nofile_line(), None);
        let (warn, line) = Plan::new(10_000, 10_000, Some(20_000))
            .nofile_line()
            .expect("lowered");
        assert!(!warn, "{line}");
        let (warn, line) = Plan::new(10_000, 10_000, Some(1024))
            .nofile_line()
            .expect("lowered");
        assert!(warn);
        assert!(line.contains("1024 descriptors") && line.contains("LimitNOFILE=22596"));
        assert!(!line.contains('\n'));
    }
}
