//! The effective configuration of `serve` and `config check`: the file,
//! then the environment and flags over it, validated, every problem named.

use super::ServeArgs;
use crate::config::{Config, ConfigError, Level};

/// The `A2A_TAP_*` variables set that no flag reads (a typo is otherwise
/// ignored silently).
pub fn environment_warnings() -> Vec<String> {
    let vars: Vec<_> = std::env::vars_os().collect();
    crate::cli::unknown_variables(&vars)
}

/// The config file, then the environment and flags over it, validated;
/// `RUST_LOG`, which overrides `[log] level`, is checked too.
pub fn load_config(args: &ServeArgs) -> Result<Config, ConfigError> {
    // Every type error of the file, and then what the keys that read give.
    let mut parsed = match &args.config {
        Some(path) => Config::from_file_all(path)?,
        None => crate::config::parse::Parsed {
            config: Some(Config::default()),
            problems: Vec::new(),
            set_aside: Vec::new(),
        },
    };
    let Some(mut config) = parsed.config.take() else {
        return Err(one_or_all(parsed.problems));
    };
    let mut problems = std::mem::take(&mut parsed.problems);
    args.apply(&mut config);
    let found = match config.validate() {
        Ok(()) => Vec::new(),
        Err(ConfigError::Problems(all)) => all,
        Err(e) => vec![e],
    };
    problems.extend(found.into_iter().filter(|p| !parsed.repeats(p)));
    if let Ok(filter) = std::env::var("RUST_LOG") {
        if let Err(why) = filter.parse::<Level>() {
            problems.push(ConfigError::Invalid {
                key: "RUST_LOG (environment)".to_string(),
                why: why.to_string(),
            });
        }
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(one_or_all(problems))
    }
}

/// One problem as itself, several as a list.
fn one_or_all(mut problems: Vec<ConfigError>) -> ConfigError {
    if problems.len() == 1 {
        problems.remove(0)
    } else {
        ConfigError::Problems(problems)
    }
}
