//! The `a2a-tap` binary: parses the command line and hands each subcommand
//! to the library (`cli::serve`, `cli::commands`), whose exit code it
//! returns.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

use a2a_tap::cli::commands::{check, config_check, probe};
use a2a_tap::cli::serve::serve;
use a2a_tap::cli::{Cli, Command, ConfigCommand};

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => {
            // A bad value from A2A_TAP_<FLAG> is named as the variable.
            let vars: Vec<_> = std::env::vars_os().collect();
            if let Some(text) = a2a_tap::cli::value_error_source(&err, &argv, &vars) {
                eprint!("{text}");
                return ExitCode::from(2);
            }
            err.exit()
        }
    };
    match cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Probe(args)) => probe(args),
        Some(Command::Serve(args)) => serve(&args),
        Some(Command::Config(ConfigCommand::Check(args))) => config_check(&args),
        None => serve(&cli.serve),
    }
}
