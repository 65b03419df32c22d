//! What the types alone cannot check: required keys, ranges, cross-key
//! rules. Every problem is reported, each naming its key.

use super::{Config, ConfigError, HumanDuration, StallLimit};

/// `proxy.max_header_list_size`'s range: hyper's own default, below which
/// ordinary answers fail; and a ceiling that keeps a head's memory sane.
const MIN_HEADER_LIST: usize = 16 * 1024;
const MAX_HEADER_LIST: usize = 16 * 1024 * 1024;
/// Most analysis threads (`analysis.threads`).
const MAX_ANALYSIS_THREADS: usize = 64;

impl Config {
    /// Checks what the types alone cannot: required keys, ranges, cross-key
    /// rules. Every problem is reported, not only the first.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut problems = self.serving_problems();
        problems.extend(self.setting_problems());
        one_or_all(problems)
    }

    /// What serving needs beyond the settings: where to listen and what to
    /// forward to.
    fn serving_problems(&self) -> Vec<ConfigError> {
        let mut problems = Vec::new();
        if self.listen.is_none() {
            problems.push(ConfigError::Missing {
                key: "listen",
                why: "set it in the config file, pass --listen or set A2A_TAP_LISTEN",
            });
        }
        if self.upstream.is_none() && self.routes.is_empty() {
            problems.push(ConfigError::Missing {
                key: "upstream",
                why: "set it in the config file, pass --upstream or set A2A_TAP_UPSTREAM",
            });
        }
        problems
    }

    /// The checks of every setting, for `check` and `probe` too (which need
    /// no `listen` or `upstream`).
    pub fn validate_settings(&self) -> Result<(), ConfigError> {
        one_or_all(self.setting_problems())
    }

    fn setting_problems(&self) -> Vec<ConfigError> {
        let mut problems = Vec::new();
        let mut invalid = |key: &str, why: &str| {
            problems.push(ConfigError::Invalid {
                key: key.to_string(),
                why: why.to_string(),
            })
        };
        if self.rewrite_agent_card && self.public_url.is_none() && self.routes.is_empty() {
            invalid(
                "public_url",
                "is required: rewrite_agent_card = true needs the proxy's public URL",
            );
        }
        if self.name.as_deref() == Some("") {
            invalid("name", "must not be empty");
        }
        if self.audit_log.is_empty() {
            invalid("audit_log", "must be a path or `-` for stdout");
        } else if self.validate && self.audit_log != "-" {
            if let Err(why) = writable(std::path::Path::new(&self.audit_log)) {
                // Else the proxy would start and drop every record.
                let path = &self.audit_log;
                invalid("audit_log", &format!("cannot be written: {path}: {why}"));
            }
        }
        if self.log.access_log.is_empty() {
            invalid("log.access_log", "must be a path or `-` for stdout");
        }
        let positive: [(&str, u64); 17] = [
            ("proxy.max_request_body", self.proxy.max_request_body),
            (
                "proxy.max_card_rewrite_bytes",
                self.proxy.max_card_rewrite_bytes as u64,
            ),
            ("proxy.max_connections", self.proxy.max_connections as u64),
            (
                "proxy.max_upstream_connections",
                self.proxy.max_upstream_connections as u64,
            ),
            (
                "proxy.max_concurrent_streams",
                u64::from(self.proxy.max_concurrent_streams),
            ),
            ("audit.queue_capacity", self.audit.queue_capacity as u64),
            (
                "analysis.max_body_bytes",
                self.analysis.max_body_bytes as u64,
            ),
            (
                "analysis.max_request_bytes",
                self.analysis.max_request_bytes as u64,
            ),
            (
                "analysis.max_event_bytes",
                self.analysis.max_event_bytes as u64,
            ),
            ("analysis.queue_bytes", self.analysis.queue_bytes as u64),
            ("analysis.max_id_bytes", self.analysis.max_id_bytes as u64),
            (
                "analysis.max_inflated_bytes",
                self.analysis.max_inflated_bytes as u64,
            ),
            (
                "analysis.max_inflate_ratio",
                self.analysis.max_inflate_ratio,
            ),
            ("registry.max_tasks", self.registry.max_tasks as u64),
            (
                "proxy.upstream_header_timeout",
                nanos(&self.proxy.upstream_header_timeout),
            ),
            (
                "proxy.stream_idle_timeout",
                nanos(&self.proxy.stream_idle_timeout),
            ),
            ("proxy.connect_timeout", nanos(&self.proxy.connect_timeout)),
        ];
        for (key, value) in positive {
            if value == 0 {
                invalid(key, "must be greater than zero");
            }
        }
        if nanos(&self.analysis.close_wait) == 0 {
            invalid(
                "analysis.close_wait",
                "must be greater than zero (a stream cannot close in no time)",
            );
        }
        if self.analysis.threads > MAX_ANALYSIS_THREADS {
            invalid(
                "analysis.threads",
                &format!(
                    "at most {MAX_ANALYSIS_THREADS} (each judges whole routes; 0 chooses by the serving threads)"
                ),
            );
        }
        if nanos(&self.registry.ttl) == 0 {
            invalid("registry.ttl", "must be greater than zero");
        }

        let headers = self.proxy.max_header_list_size;
        if !(MIN_HEADER_LIST..=MAX_HEADER_LIST).contains(&headers) {
            invalid(
                "proxy.max_header_list_size",
                "must be between 16 KiB and 16 MiB (gRPC status details alone reach tens of KiB)",
            );
        }

        let stalls = [
            ("stall.submitted", self.stall.submitted),
            ("stall.working", self.stall.working),
            ("stall.input_required", self.stall.input_required),
            ("stall.auth_required", self.stall.auth_required),
        ];
        for (key, limit) in stalls {
            if limit == StallLimit::After(std::time::Duration::ZERO) {
                invalid(
                    key,
                    "0s would report every task in that state at once; write \"off\" for no limit",
                );
            }
        }
        if let Some(path) = &self.proxy.tls_ca_file {
            if let Err(why) = readable_file(path) {
                problems.push(ConfigError::Invalid {
                    key: "proxy.tls_ca_file".to_string(),
                    why,
                });
            }
        }
        problems.extend(self.route_problems());
        problems.extend(self.registry.problems());
        problems.extend(self.push.problems(self.validate));
        if let Err(e) = self.policy() {
            problems.push(e);
        }
        // The [tracing] keys are checked whether tracing is on or not: an
        // OTEL_EXPORTER_OTLP_ENDPOINT set later must not turn a silent
        // mistake into a failed restart.
        let tracing = self.tracing_key_problems();
        if tracing.is_empty() {
            if let Err(e) = self.trace_settings(|name| std::env::var(name).ok()) {
                problems.push(e);
            }
        }
        problems.extend(tracing);
        problems
    }
}

/// Whether `path` is a file that can be read (a CA file), else why not.
pub(super) fn readable_file(path: &std::path::Path) -> Result<(), String> {
    std::fs::metadata(path)
        .and_then(|m| {
            if m.is_file() {
                Ok(())
            } else {
                Err(std::io::Error::other("not a file"))
            }
        })
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Whether the audit log at `path` can be appended to (as the writer
/// opens it: created when absent), without changing it or its path: an
/// existing file is opened for appending and closed; for an absent one, a
/// uniquely named file is created beside it and removed. SIGHUP's re-read
/// runs this just after it asks the writer to reopen the log (logrotate
/// renamed it): when the probe created and removed the log's own path, a
/// writer opening the path in between kept writing into the removed file,
/// and every record after the rotation was lost.
fn writable(path: &std::path::Path) -> std::io::Result<()> {
    if path.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop);
    }
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".a2a-tap-probe-");
    let dir = path.parent().unwrap_or(std::path::Path::new(""));
    tempfile::Builder::new()
        .prefix(&prefix)
        .tempfile_in(dir)?
        .close()
}

fn nanos(d: &HumanDuration) -> u64 {
    u64::try_from(d.0.as_nanos()).unwrap_or(u64::MAX)
}

/// No problem, the one problem, or all of them.
fn one_or_all(mut problems: Vec<ConfigError>) -> Result<(), ConfigError> {
    match problems.len() {
        0 => Ok(()),
        1 => Err(problems.remove(0)),
        _ => Err(ConfigError::Problems(problems)),
    }
}

#[cfg(test)]
mod tests {
    use super::writable;

    /// An absent log is probed beside its path, and nothing is left
    /// behind, even beside a leftover probe; a directory that is not there
    /// fails the check.
    #[test]
    fn an_absent_log_is_probed_without_touching_its_path() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("audit.jsonl");
        writable(&path).expect("writable");
        let left = std::fs::read_dir(dir.path()).expect("read dir").count();
        assert_eq!(left, 0, "nothing left behind");
        // A leftover probe file of the same name does not fail the check.
        let leftover = dir.path().join(".audit.jsonl.a2a-tap-probe-left");
        std::fs::write(&leftover, b"").expect("leftover");
        writable(&path).expect("writable beside a leftover probe");
        // Where nothing can be created, the check fails.
        assert!(writable(&dir.path().join("missing/audit.jsonl")).is_err());
    }

    /// The probe never creates the log's own path: a watcher that sees the
    /// path appear while the check runs fails the test.
    #[test]
    fn the_check_never_creates_the_logs_path() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("audit.jsonl");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = false;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    seen |= path.exists();
                }
                seen
            })
        };
        for _ in 0..2000 {
            writable(&path).expect("writable");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(!watcher.join().expect("watcher"), "the path appeared");
    }
}
