//! SARIF 2.1.0 logs: one run of the tool `a2a-tap` (with its version),
//! the rules the results refer to, and the results themselves. Built as
//! `serde_json` values: the shape is small and fixed.

use serde_json::{json, Map, Value};

use super::audit;
use crate::findings::spec_link;

/// The schema URI a SARIF 2.1.0 log names.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A rule results can refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule id: a check id or a catalogue kind.
    pub id: String,
    /// One sentence: what the rule asks.
    pub description: String,
    /// The spec sections and conformance-kit requirements it rests on
    /// (`helpUri` and `properties.spec`/`tck`).
    pub sources: audit::Rule,
}

/// The level of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One result: a failed check or a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule_id: String,
    pub level: Level,
    pub message: String,
    /// Where: a file path or a URL (the artifact's URI).
    pub uri: String,
    /// Extra facts (evidence, task id, exchange), as `properties`.
    pub properties: Map<String, Value>,
}

/// The log: one run, its rules (each once, in first-use order, unless
/// given) and results.
pub fn log(rules: &[Rule], results: &[Finding]) -> Value {
    let mut all: Vec<Rule> = rules.to_vec();
    for r in results {
        if !all.iter().any(|known| known.id == r.rule_id) {
            all.push(Rule {
                id: r.rule_id.clone(),
                description: r.rule_id.clone(),
                sources: audit::Rule::of_name(&r.rule_id),
            });
        }
    }
    let rules_json: Vec<Value> = all
        .iter()
        .map(|r| {
            let mut v = json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": { "text": r.description },
            });
            // What the rule rests on: the spec section to read, and the
            // spec sections and conformance-kit ids as properties.
            if let Some(uri) = r.sources.spec.and_then(spec_link::help_uri) {
                v["helpUri"] = uri.into();
            }
            if r.sources.label().is_some() {
                v["properties"] = json!(r.sources);
            }
            v
        })
        .collect();
    let results_json: Vec<Value> = results
        .iter()
        .map(|r| {
            let index = all.iter().position(|k| k.id == r.rule_id).unwrap_or(0);
            let mut v = json!({
                "ruleId": r.rule_id,
                "ruleIndex": index,
                "level": r.level.as_str(),
                "message": { "text": r.message },
                "locations": [{
                    "physicalLocation": { "artifactLocation": { "uri": r.uri } }
                }],
            });
            if !r.properties.is_empty() {
                v["properties"] = Value::Object(r.properties.clone());
            }
            v
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "a2a-tap",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://a2a-protocol.org/",
                    "rules": rules_json,
                }
            },
            "results": results_json,
        }]
    })
}

/// A URI reference for a file path (spaces and the like percent-encoded,
/// so that the `uri` format holds).
pub fn path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_come_from_results_too() {
        let log = log(
            &[],
            &[Finding {
                rule_id: "terminal_exit".into(),
                level: Level::Error,
                message: "m".into(),
                uri: path_uri("a b.sse"),
                properties: Map::new(),
            }],
        );
        let run = &log["runs"][0];
        let rule = &run["tool"]["driver"]["rules"][0];
        assert_eq!(rule["id"], "terminal_exit");
        assert_eq!(rule["properties"], json!({"spec": "1.0.1 §4.1.3"}));
        assert_eq!(
            rule["helpUri"],
            "https://a2a-protocol.org/v1.0.1/specification/#413-taskstate"
        );
        assert_eq!(
            run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "a%20b.sse"
        );
    }

    #[test]
    fn a_rule_resting_on_nothing_known_has_no_help_or_properties() {
        let rules = [Rule {
            id: "stalled_task".into(),
            description: "d".into(),
            sources: audit::Rule::of_name("stalled_task"),
        }];
        let log = log(&rules, &[]);
        let rule = &log["runs"][0]["tool"]["driver"]["rules"][0];
        assert!(rule.get("helpUri").is_none(), "{rule}");
        assert!(rule.get("properties").is_none(), "{rule}");
    }

    #[test]
    fn a_kind_rule_names_its_spec_sections() {
        let rules = [Rule {
            id: "invalid_timestamp".into(),
            description: "d".into(),
            sources: audit::Rule::of_name("invalid_timestamp"),
        }];
        let log = log(&rules, &[]);
        let rule = &log["runs"][0]["tool"]["driver"]["rules"][0];
        assert_eq!(rule["properties"]["spec"], "1.0.1 §5.6.1");
        assert_eq!(rule["properties"]["tck"], json!(["DM-SERIAL-003"]));
        assert_eq!(
            rule["helpUri"],
            "https://a2a-protocol.org/v1.0.1/specification/#561-timestamps"
        );
    }
}
