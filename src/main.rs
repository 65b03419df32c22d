//! The `a2a-tap` binary: parse the command line, start tracing, run serve or check.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

use a2a_tap::cli::{CheckArgs, Cli, Command, ServeArgs};
use a2a_tap::config::{Config, LogFormat};
use a2a_tap::server;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Serve(args)) => serve(&args),
        None => serve(&cli.serve),
    }
}

/// `a2a-tap check`: replaced by the offline checker when it lands.
fn check(_args: CheckArgs) -> ExitCode {
    eprintln!("a2a-tap check: not yet available");
    ExitCode::from(2)
}

fn serve(args: &ServeArgs) -> ExitCode {
    let config = match load_config(args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("a2a-tap: {e}");
            return ExitCode::from(2);
        }
    };
    init_tracing(&config);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("a2a-tap: cannot start the runtime: {e}");
            return ExitCode::from(3);
        }
    };
    runtime.block_on(async {
        let handle = match server::start(&config, None).await {
            Ok(handle) => handle,
            Err(e) => {
                eprintln!("a2a-tap: {e}");
                return ExitCode::from(e.exit_code() as u8);
            }
        };
        server::shutdown_signal().await;
        tracing::info!("shutdown requested");
        handle.shutdown();
        handle.wait().await;
        ExitCode::SUCCESS
    })
}

fn load_config(args: &ServeArgs) -> Result<Config, a2a_tap::config::ConfigError> {
    let mut config = match &args.config {
        Some(path) => Config::from_file(path)?,
        None => Config::default(),
    };
    args.apply(&mut config);
    config.validate()?;
    Ok(config)
}

fn init_tracing(config: &Config) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.log.level.0))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match config.log.format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}
