//! Reading a config file so that one run names every mistake: a TOML
//! error of a value (a bare `"10"` duration, `"64MB!"`, a port out of
//! range, an unknown key) stops serde at the first, so the key-value it
//! points at is set aside and the rest read again, up to a bound.

use super::{Config, ConfigError};

/// Type errors reported from one file at most (each costs a parse).
const MAX_ERRORS: usize = 32;

/// What a file gave: the config of every key that read (`None` when the
/// text is not TOML at all, or an error could not be set aside), and
/// every error met.
pub struct Parsed {
    pub config: Option<Config>,
    pub problems: Vec<ConfigError>,
    /// The keys set aside (as written, e.g. `upstream`): a rule that
    /// finds them missing repeats an error already reported.
    pub set_aside: Vec<String>,
}

impl Parsed {
    /// Whether `problem` only repeats a type error: a required key found
    /// missing because its bad value was set aside.
    pub fn repeats(&self, problem: &ConfigError) -> bool {
        match problem {
            ConfigError::Missing { key, .. } => {
                let last = key.rsplit('.').next().unwrap_or(key);
                self.set_aside.iter().any(|k| k == last)
            }
            _ => false,
        }
    }
}

/// Parses `text`, setting aside each key-value a type error points at and
/// parsing the rest again, so that every such error is reported at once.
pub fn parse_all(text: &str) -> Parsed {
    let mut problems = Vec::new();
    let mut set_aside = Vec::new();
    // Text that is not TOML has no key-values to tell apart.
    if let Err(e) = text.parse::<toml::Table>() {
        problems.push(ConfigError::Parse(e.to_string()));
        return unrecoverable(problems, set_aside);
    }
    let mut lines: Vec<&str> = text.lines().collect();
    loop {
        let current = lines.join("\n");
        let err = match toml::from_str::<Config>(&current) {
            Ok(config) => {
                return Parsed {
                    config: Some(config),
                    problems,
                    set_aside,
                }
            }
            Err(e) => e,
        };
        problems.push(ConfigError::Parse(err.to_string()));
        let Some(span) = err.span() else {
            return unrecoverable(problems, set_aside);
        };
        let (first, last) = (line_of(&current, span.start), line_of(&current, span.end));
        // A table header (a missing key of a table, a syntax error) is not
        // one key-value: setting it aside would move its keys elsewhere.
        let header = lines
            .get(first)
            .is_none_or(|l| l.trim_start().starts_with('['));
        if header || problems.len() >= MAX_ERRORS || last >= lines.len() {
            return unrecoverable(problems, set_aside);
        }
        if let Some((key, _)) = lines[first].split_once('=') {
            set_aside.push(key.trim().trim_matches('"').to_owned());
        }
        // The lines stay (as blanks) so later errors keep their numbers.
        for l in &mut lines[first..=last] {
            *l = "";
        }
    }
}

fn unrecoverable(problems: Vec<ConfigError>, set_aside: Vec<String>) -> Parsed {
    Parsed {
        config: None,
        problems,
        set_aside,
    }
}

/// The 0-based line of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    let end = at.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_error_is_named_in_one_parse() {
        let text = "listen = \"127.0.0.1:1\"\nupstream = \"http://127.0.0.1:2\"\n\
                    [proxy]\ngrace_period = \"10\"\nthreads = \"x\"\n\
                    [analysis]\nmax_body_bytes = \"64MB!\"\nqueue_bytes = [\n  1,\n  2\n]\n\
                    [audit]\nevidence_bytes = \"ten\"\nnot_a_key = 1\n";
        let parsed = parse_all(text);
        let all: Vec<String> = parsed.problems.iter().map(ToString::to_string).collect();
        assert_eq!(all.len(), 6, "{all:#?}");
        for (n, needle) in [
            (0, "line 4"),
            (1, "line 5"),
            (2, "line 7"),
            (3, "line 8"),
            (4, "line 13"),
            (5, "not_a_key"),
        ] {
            assert!(all[n].contains(needle), "{needle} in {}", all[n]);
        }
        let config = parsed.config.expect("the rest read");
        assert_eq!(config.listen.map(|a| a.port()), Some(1));
    }

    #[test]
    fn text_that_is_not_toml_is_one_error() {
        let parsed = parse_all("listen = \n[[[");
        assert_eq!(parsed.problems.len(), 1);
        assert!(parsed.config.is_none());
    }
}
