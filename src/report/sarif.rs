//! SARIF 2.1.0 logs: one run of the tool `a2a-tap` (with its version),
//! the rules the results refer to, and the results themselves. Built as
//! `serde_json` values: the shape is small and fixed.

use serde_json::{json, Map, Value};

/// The schema URI a SARIF 2.1.0 log names.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A rule results can refer to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule id: a check id or a catalogue kind.
    pub id: String,
    /// One sentence: what the rule asks.
    pub description: String,
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
            // A catalogue kind names the spec sections it rests on.
            if let Some(spec) = crate::findings::Kind::from_name(&r.id).and_then(|k| k.spec()) {
                v["properties"] = json!({ "spec": spec });
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
        assert_eq!(run["tool"]["driver"]["rules"][0]["id"], "terminal_exit");
        assert!(run["tool"]["driver"]["rules"][0]
            .get("properties")
            .is_none());
        assert_eq!(
            run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "a%20b.sse"
        );
    }

    #[test]
    fn a_kind_rule_names_its_spec_sections() {
        let rules = [Rule {
            id: "invalid_timestamp".into(),
            description: "d".into(),
        }];
        let log = log(&rules, &[]);
        let rule = &log["runs"][0]["tool"]["driver"]["rules"][0];
        assert_eq!(rule["properties"]["spec"], "1.0.1 §5.6.1");
    }
}
