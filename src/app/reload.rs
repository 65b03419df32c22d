//! `SIGHUP`'s reload: the routes and severities of a config re-read, the
//! route table swapped whole, counted.

use super::{App, AppError};
use crate::config::Config;

impl App {
    /// Takes the routes and severities of `config` (re-read on SIGHUP):
    /// the new route table is swapped in whole, exchanges in flight keep
    /// the route they began on. Other keys are not re-read (a restart
    /// takes them). A config that does not validate, or whose routes
    /// cannot be built, leaves the table in use; either way counted in
    /// `a2a_config_reloads_total{result}`.
    pub fn reload(&self, config: &Config) -> Result<(), AppError> {
        let done = self.try_reload(config);
        let result = if done.is_ok() { "ok" } else { "error" };
        self.metrics().config_reloads_total.with(result).inc();
        done
    }

    fn try_reload(&self, config: &Config) -> Result<(), AppError> {
        config.validate()?;
        let tap = self.validation.as_ref().map(|v| v.tap.clone());
        let inspector_for =
            super::inspectors::inspector_for(config, self.metrics(), self.given.clone(), tap)?;
        let inspector_for = match &self.relay_wrap {
            Some(relay) => super::inspectors::with_relay(inspector_for, relay.clone()),
            None => inspector_for,
        };
        self.server.reload_routes(config, inspector_for)?;
        Ok(())
    }
}
