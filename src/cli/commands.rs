//! The offline subcommands' bodies: `config check`, `check` and `probe`,
//! each returning the process's exit code.

use std::process::ExitCode;

use super::load::{environment_warnings, load_config};
use super::{CheckArgs, CheckFormat, ProbeArgs, ProbeFormat, ServeArgs};
use crate::config::Config;

/// `a2a-tap config check`: every problem on stderr and exit 2, or the
/// effective configuration on stdout and exit 0. Nothing is bound.
pub fn config_check(args: &ServeArgs) -> ExitCode {
    let config = match load_config(args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("a2a-tap config check: {e}");
            return ExitCode::from(2);
        }
    };
    let effective = match toml::to_string(&config) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("a2a-tap config check: cannot print the configuration: {e}");
            return ExitCode::from(3);
        }
    };
    for warning in config.warnings().into_iter().chain(environment_warnings()) {
        eprintln!("a2a-tap config check: warning: {warning}");
    }
    println!(
        "# a2a-tap {}: the effective configuration (defaults filled in)",
        env!("CARGO_PKG_VERSION")
    );
    print!("{effective}");
    for line in config.route_table_lines() {
        println!("{line}");
    }
    ExitCode::SUCCESS
}

/// `a2a-tap check`: validate recorded traffic offline.
pub fn check(args: CheckArgs) -> ExitCode {
    let format = match args.format {
        CheckFormat::Text => crate::check::Format::Text,
        CheckFormat::Json => crate::check::Format::Json,
        CheckFormat::Junit => crate::check::Format::Junit,
        CheckFormat::Sarif => crate::check::Format::Sarif,
        CheckFormat::Html => crate::check::Format::Html,
    };
    let settings = match offline_settings(args.config.as_deref(), "check") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let code = crate::check::run(format, &args.files, &settings);
    ExitCode::from(code as u8)
}

/// The `[severity]`, `[analysis]`, `[audit]`, `[registry]` and `[stall]` settings `check` and
/// `probe` judge by, from `--config` (else the defaults); a bad file is
/// exit 2, named under `command`.
fn offline_settings(
    config: Option<&std::path::Path>,
    command: &str,
) -> Result<crate::judge::Settings, ExitCode> {
    config
        .map(Config::from_file)
        .transpose()
        .and_then(|c| crate::judge::Settings::try_from(&c.unwrap_or_default()))
        .map_err(|e| {
            eprintln!("a2a-tap {command}: {e}");
            ExitCode::from(2)
        })
}

/// `a2a-tap probe`: the conformance checks against a live agent.
pub fn probe(args: ProbeArgs) -> ExitCode {
    use crate::probe::Format;
    let format = match args.format {
        ProbeFormat::Text => Format::Text,
        ProbeFormat::Json => Format::Json,
        ProbeFormat::Junit => Format::Junit,
        ProbeFormat::Sarif => Format::Sarif,
        ProbeFormat::Html => Format::Html,
    };
    let settings = match offline_settings(args.config.as_deref(), "probe") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = crate::probe::Options {
        url: args.url,
        message: args.message,
        format,
        settings,
    };
    ExitCode::from(crate::probe::run(&options) as u8)
}
