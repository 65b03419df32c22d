//! Where a serve setting came from when it is wrong: a bad value read
//! from `A2A_TAP_<FLAG>` is reported under the variable's name (clap names
//! the flag), and an `A2A_TAP_*` variable that is no flag's (a typo such
//! as `A2A_TAP_UPSTRAEM`) is a warning, since it would be ignored silently.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

use super::Cli;

/// The prefix of the serve flags' environment variables.
const PREFIX: &str = "A2A_TAP_";

/// `A2A_TAP_*` names that are not flags but are a2a-tap's own:
/// `A2A_TAP_COMMIT` labels a build (build.rs, the Dockerfile);
/// `A2A_TAP_REGISTRY_SHARED_KEY` is a secret, never a flag.
const OTHER_KNOWN: &[&str] = &["A2A_TAP_COMMIT", crate::config::SHARED_KEY_ENV];

/// Every flag's variable, with the flag it stands for (`--threads`).
fn flag_variables() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![Cli::command()];
    while let Some(cmd) = stack.pop() {
        for arg in cmd.get_arguments() {
            if let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) {
                let pair = (env.to_string_lossy().into_owned(), format!("--{long}"));
                if !out.contains(&pair) {
                    out.push(pair);
                }
            }
        }
        stack.extend(cmd.get_subcommands().cloned());
    }
    out.sort();
    out
}

/// The message of a clap error on a value that came from the environment,
/// naming the variable rather than the flag; `None` when the value came
/// from the command line `argv` (or the error is not about a value).
pub fn value_error_source(
    err: &clap::Error,
    argv: &[OsString],
    vars: &[(OsString, OsString)],
) -> Option<String> {
    if !matches!(
        err.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return None;
    }
    let Some(ContextValue::String(shown)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    // `--threads <N>` → `--threads`; `--rewrite-agent-card[=<BOOL>]` → its name.
    let flag = shown.split([' ', '[', '=']).next()?;
    let on_line = argv.iter().skip(1).any(|a| {
        a.to_str()
            .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
    });
    if on_line {
        return None;
    }
    let (variable, _) = flag_variables().into_iter().find(|(_, f)| f == flag)?;
    vars.iter()
        .any(|(k, _)| k.to_str() == Some(&variable))
        .then(|| {
            err.to_string().replacen(
                &format!("'{shown}'"),
                &format!("{variable} (environment; the variable of {shown})"),
                1,
            )
        })
}

/// A warning for each `A2A_TAP_*` variable in `vars` that is no flag's,
/// with the closest known name when one is near.
pub fn unknown_variables(vars: &[(OsString, OsString)]) -> Vec<String> {
    let flags: Vec<String> = flag_variables().into_iter().map(|(v, _)| v).collect();
    let known: Vec<String> = flags
        .iter()
        .cloned()
        .chain(OTHER_KNOWN.iter().map(|s| s.to_string()))
        .collect();
    let mut warnings = Vec::new();
    for (name, _) in vars {
        let name = name.to_string_lossy();
        if !name.starts_with(PREFIX) || known.iter().any(|k| *k == name) {
            continue;
        }
        let closest = known
            .iter()
            .map(|k| (strsim::levenshtein(k, &name), k))
            .min()
            .filter(|(d, _)| *d <= 3)
            .map(|(_, k)| format!(" (did you mean {k}?)"))
            .unwrap_or_default();
        warnings.push(format!(
            "environment variable {name} is set but is not one a2a-tap reads, so it is ignored{closest}; \
             the variables are: {}",
            flags.join(", ")
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn a_typo_is_named_with_the_closest_variable() {
        let w = unknown_variables(&os(&[
            ("A2A_TAP_UPSTRAEM", "http://x"),
            ("A2A_TAP_UPSTREAM", "http://x"),
            ("A2A_TAP_COMMIT", "abc"),
            ("HOME", "/root"),
        ]));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("A2A_TAP_UPSTRAEM"), "{}", w[0]);
        assert!(w[0].contains("did you mean A2A_TAP_UPSTREAM?"), "{}", w[0]);
    }

    #[test]
    fn a_flag_on_the_line_is_named_as_the_flag() {
        let argv: Vec<OsString> = ["a2a-tap", "--threads", "abc"].map(OsString::from).into();
        let err = Cli::try_parse_from(&argv).expect_err("bad");
        let vars = os(&[("A2A_TAP_THREADS", "abc")]);
        assert_eq!(value_error_source(&err, &argv, &vars), None);
        // The same error with the flag absent from the line: the variable.
        let line: Vec<OsString> = vec!["a2a-tap".into()];
        let text = value_error_source(&err, &line, &vars).expect("from the environment");
        assert!(text.contains("A2A_TAP_THREADS"), "{text}");
    }
}
