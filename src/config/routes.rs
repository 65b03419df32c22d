//! `[[route]]`: several agents behind one a2a-tap, each matched by a path
//! prefix and/or the caller's host, with its own name, upstream and
//! per-agent overrides; and the effective route table every start and
//! reload builds from it (the top-level `upstream` being the one route
//! when there is no `[[route]]`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{policy_of, Config, ConfigError, HumanDuration, ProxySection, UpstreamUrl};
use crate::findings::Policy;

/// One `[[route]]` table as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RouteSection {
    /// The route's label: `upstream` in metrics, audit records, spans.
    pub name: String,
    /// The agent, `http://` or `https://`, with its base path.
    pub upstream: Option<UpstreamUrl>,
    /// Requests whose path is this prefix, or under it (segment-aware).
    pub path_prefix: Option<String>,
    /// Requests whose `Host` (HTTP/2: `:authority`) is this host (any port
    /// unless one is given).
    pub host: Option<String>,
    /// Remove `path_prefix` before forwarding (default: true with a prefix).
    pub strip_prefix: Option<bool>,
    /// Overrides `proxy.tls_ca_file` for this route.
    pub tls_ca_file: Option<PathBuf>,
    /// Overrides `proxy.upstream_http2` for this route.
    pub upstream_http2: Option<bool>,
    /// Overrides `proxy.connect_timeout` for this route.
    pub connect_timeout: Option<HumanDuration>,
    /// Overrides `proxy.upstream_header_timeout` for this route.
    pub upstream_header_timeout: Option<HumanDuration>,
    /// Overrides `proxy.stream_idle_timeout` for this route.
    pub stream_idle_timeout: Option<HumanDuration>,
    /// Overrides `rewrite_agent_card`: cards rewritten to `public_url` + the prefix.
    pub rewrite_agent_card: Option<bool>,
    /// Overrides `public_url` for this route's cards (a route matched by
    /// host is reached at its own name).
    pub public_url: Option<UpstreamUrl>,
    /// `[route.severity]`: overrides of the top-level `[severity]`, for this route alone.
    pub severity: BTreeMap<String, super::SeverityChoice>,
}

/// One route of the effective table: what a start or a reload builds.
#[derive(Debug, Clone)]
pub struct RouteSpec {
    /// The label (`upstream` everywhere).
    pub name: String,
    pub upstream: UpstreamUrl,
    /// The path prefix without a trailing `/`; `""` matches every path.
    pub prefix: String,
    /// The host matched, lower case (with its port when one was given).
    pub host: Option<String>,
    /// Whether `prefix` is removed before forwarding.
    pub strip: bool,
    /// `[proxy]` with this route's overrides applied.
    pub proxy: ProxySection,
    pub rewrite_agent_card: bool,
    /// Where its cards send clients: its own `public_url`, else the top-level one.
    pub public_url: Option<UpstreamUrl>,
    /// The top-level `[severity]` with this route's over it.
    pub severity: BTreeMap<String, super::SeverityChoice>,
}

impl RouteSpec {
    /// This route's severity policy.
    pub fn policy(&self) -> Result<Policy, ConfigError> {
        policy_of(&self.severity, &format!("route `{}` severity", self.name))
    }

    /// How the route is matched, for logs and `config check`.
    pub fn describe_match(&self) -> String {
        let path = if self.prefix.is_empty() {
            "any path".to_string()
        } else {
            format!("path {}/…", self.prefix)
        };
        match &self.host {
            Some(host) => format!("host {host}, {path}"),
            None => path,
        }
    }
}

impl Config {
    /// The effective route table as `config check` prints it: one comment
    /// line per route, in matching order.
    pub fn route_table_lines(&self) -> Vec<String> {
        let mut specs = self.route_specs();
        specs.sort_by_key(|r| std::cmp::Reverse((r.prefix.len(), r.host.is_some())));
        let mut lines = vec![
            "# routes, in matching order (longest path prefix first; at equal prefixes, the one \
             naming the host):"
                .to_string(),
        ];
        for r in &specs {
            let strip = if r.strip { ", prefix stripped" } else { "" };
            let card = if r.rewrite_agent_card {
                ", cards rewritten"
            } else {
                ""
            };
            lines.push(format!(
                "#   {}: {}{strip} -> {}{card}",
                r.name,
                r.describe_match(),
                r.upstream.masked()
            ));
        }
        // A route of any path and any host takes every request.
        if !specs
            .iter()
            .any(|r| r.prefix.is_empty() && r.host.is_none())
        {
            lines.push(
                "#   any other request: 404, counted in a2a_requests_total{upstream=\"\"}"
                    .to_string(),
            );
        }
        lines
    }

    /// The effective route table: each `[[route]]`, or the top-level
    /// `upstream` as the one route (named by `name`, else its host:port,
    /// matching every request). Call after [`Config::validate`]; a route
    /// without an upstream is left out.
    pub fn route_specs(&self) -> Vec<RouteSpec> {
        if self.routes.is_empty() {
            return self
                .upstream
                .iter()
                .map(|upstream| RouteSpec {
                    name: self.upstream_name(),
                    upstream: upstream.clone(),
                    prefix: String::new(),
                    host: None,
                    strip: false,
                    proxy: self.proxy.clone(),
                    rewrite_agent_card: self.rewrite_agent_card,
                    public_url: self.public_url.clone(),
                    severity: self.severity.clone(),
                })
                .collect();
        }
        self.routes
            .iter()
            .filter_map(|r| {
                let prefix = normalize_prefix(r.path_prefix.as_deref().unwrap_or(""));
                let mut proxy = self.proxy.clone();
                if let Some(ca) = &r.tls_ca_file {
                    proxy.tls_ca_file = Some(ca.clone());
                }
                proxy.upstream_http2 = r.upstream_http2.unwrap_or(proxy.upstream_http2);
                proxy.connect_timeout = r.connect_timeout.unwrap_or(proxy.connect_timeout);
                proxy.upstream_header_timeout = r
                    .upstream_header_timeout
                    .unwrap_or(proxy.upstream_header_timeout);
                proxy.stream_idle_timeout =
                    r.stream_idle_timeout.unwrap_or(proxy.stream_idle_timeout);
                let mut severity = self.severity.clone();
                severity.extend(r.severity.iter().map(|(k, v)| (k.clone(), *v)));
                Some(RouteSpec {
                    name: r.name.clone(),
                    upstream: r.upstream.clone()?,
                    strip: r.strip_prefix.unwrap_or(!prefix.is_empty()),
                    prefix,
                    host: r.host.as_deref().map(str::to_ascii_lowercase),
                    proxy,
                    rewrite_agent_card: r.rewrite_agent_card.unwrap_or(self.rewrite_agent_card),
                    public_url: r.public_url.clone().or_else(|| self.public_url.clone()),
                    severity,
                })
            })
            .collect()
    }

    /// The `[[route]]` rules: each route complete and well formed, names
    /// unique, no two routes with the same match; and not mixed with the
    /// top-level `upstream` or `name`.
    pub(super) fn route_problems(&self) -> Vec<ConfigError> {
        let mut problems = Vec::new();
        if self.routes.is_empty() {
            return problems;
        }
        let invalid = |problems: &mut Vec<ConfigError>, key: String, why: String| {
            problems.push(ConfigError::Invalid { key, why });
        };
        if self.upstream.is_some() {
            invalid(
                &mut problems,
                "upstream".into(),
                "cannot be set together with [[route]] tables (from the file, --upstream or \
                 A2A_TAP_UPSTREAM): give that agent its own [[route]] (path_prefix = \"/\" \
                 catches every path no other route matches)"
                    .into(),
            );
        }
        if self.name.is_some() {
            invalid(
                &mut problems,
                "name".into(),
                "cannot be set together with [[route]] tables: each route has its own `name`"
                    .into(),
            );
        }
        let mut seen: Vec<(usize, &str, String, Option<String>)> = Vec::new();
        for (i, r) in self.routes.iter().enumerate() {
            let key = |k: &str| format!("route[{i}].{k}");
            if r.name.is_empty() {
                invalid(
                    &mut problems,
                    key("name"),
                    "is required and must not be empty".into(),
                );
            } else if r.name.chars().any(char::is_control) {
                invalid(
                    &mut problems,
                    key("name"),
                    "must not contain control characters".into(),
                );
            }
            if r.upstream.is_none() {
                invalid(
                    &mut problems,
                    key("upstream"),
                    "is required (the agent's URL)".into(),
                );
            }
            if r.path_prefix.is_none() && r.host.is_none() {
                invalid(
                    &mut problems,
                    key("path_prefix"),
                    "a route needs `path_prefix` or `host` (or both); \"/\" matches every path"
                        .into(),
                );
            }
            if let Some(prefix) = &r.path_prefix {
                if let Err(why) = check_prefix(prefix) {
                    invalid(&mut problems, key("path_prefix"), why);
                }
            }
            if let Some(host) = &r.host {
                if let Err(why) = check_host(host) {
                    invalid(&mut problems, key("host"), why);
                }
            }
            if r.strip_prefix == Some(true) && r.path_prefix.is_none() {
                invalid(
                    &mut problems,
                    key("strip_prefix"),
                    "is true but the route has no `path_prefix` to strip".into(),
                );
            }
            if let Some(ca) = &r.tls_ca_file {
                if let Err(why) = super::validate::readable_file(ca) {
                    invalid(&mut problems, key("tls_ca_file"), why);
                }
            }
            let timeouts = [
                ("connect_timeout", r.connect_timeout),
                ("upstream_header_timeout", r.upstream_header_timeout),
                ("stream_idle_timeout", r.stream_idle_timeout),
            ];
            for (k, t) in timeouts {
                if t.is_some_and(|t| t.0.is_zero()) {
                    invalid(&mut problems, key(k), "must be greater than zero".into());
                }
            }
            let rewrites = r.rewrite_agent_card.unwrap_or(self.rewrite_agent_card);
            if rewrites && r.public_url.is_none() && self.public_url.is_none() {
                invalid(
                    &mut problems,
                    key("public_url"),
                    format!(
                        "is required (here, or at the top level): route `{}` rewrites its agent \
                         cards (rewrite_agent_card = true) to the proxy's public URL",
                        r.name
                    ),
                );
            }
            if let Err(e) = policy_of(&r.severity, &format!("route[{i}].severity")) {
                problems.push(e);
            }
            let prefix = normalize_prefix(r.path_prefix.as_deref().unwrap_or(""));
            let host = r.host.as_deref().map(str::to_ascii_lowercase);
            for (j, name, p, h) in &seen {
                if *name == r.name && !name.is_empty() {
                    problems.push(ConfigError::Invalid {
                        key: key("name"),
                        why: format!("`{name}` is already the name of route[{j}]"),
                    });
                }
                if *p == prefix && *h == host {
                    problems.push(ConfigError::Invalid {
                        key: key("path_prefix"),
                        why: format!(
                            "route `{}` has the same match as route `{name}` (route[{j}]): \
                             it could never be chosen",
                            r.name
                        ),
                    });
                }
            }
            seen.push((i, &r.name, prefix, host));
        }
        problems
    }
}

/// A prefix without its trailing `/` (`"/"` becomes `""`: every path).
pub fn normalize_prefix(prefix: &str) -> String {
    prefix.trim_end_matches('/').to_owned()
}

/// A path prefix: absolute, plain segments only (no `.`/`..`, no empty
/// segment, no query or fragment, no percent-encoded `/`, `\` or `.`).
fn check_prefix(prefix: &str) -> Result<(), String> {
    if !prefix.starts_with('/') {
        return Err(format!("`{prefix}` must start with `/`"));
    }
    if prefix.contains(['?', '#']) || prefix.chars().any(|c| c.is_control() || c == ' ') {
        return Err(format!(
            "`{prefix}` must be a path only (no query, fragment, space or control character)"
        ));
    }
    let trimmed = normalize_prefix(prefix);
    if unsafe_path(&trimmed) {
        return Err(format!(
            "`{prefix}` must have plain segments: no empty segment (`//`), no `.` or `..`, no \
             `\\` and no percent-encoded `/`, `\\` or `.`"
        ));
    }
    Ok(())
}

/// Whether `path` has what a server might resolve differently from the
/// proxy's segment-aware matching: an empty segment (`//`), a `.` or `..`
/// segment (`%2e` counting as `.`), a `\`, or a percent-encoded `/` or
/// `\`. The rule for prefixes here, and for request paths while routes
/// match by prefix (`proxy::route`). A trailing `/` is allowed.
pub fn unsafe_path(path: &str) -> bool {
    let bytes = path.as_bytes();
    let encoded_slash = bytes
        .windows(3)
        .any(|w| w[0] == b'%' && matches!((w[1], w[2] | 0x20), (b'2', b'f') | (b'5', b'c')));
    if encoded_slash || bytes.contains(&b'\\') || path.contains("//") {
        return true;
    }
    path.split('/').any(dot_segment)
}

/// `.` or `..`, each dot written as itself or `%2e`.
fn dot_segment(segment: &str) -> bool {
    let mut rest = segment.as_bytes();
    let mut dots = 0;
    while !rest.is_empty() {
        match rest {
            [b'.', tail @ ..] => rest = tail,
            [b'%', b'2', e, tail @ ..] if *e | 0x20 == b'e' => rest = tail,
            _ => return false,
        }
        dots += 1;
    }
    dots == 1 || dots == 2
}

/// A host to match: a name or address, with an optional port.
fn check_host(host: &str) -> Result<(), String> {
    let parsed: Result<http::uri::Authority, _> = host.parse();
    match parsed {
        Ok(a) if !a.host().is_empty() && !host.contains('@') => Ok(()),
        _ => Err(format!(
            "`{host}` must be a host name or address, with an optional port (no scheme or path)"
        )),
    }
}

#[cfg(test)]
mod tests;
