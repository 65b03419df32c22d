//! The TLS client configuration every outgoing connection uses (the
//! upstream, the span exporter, `probe`): rustls with ring, verified against
//! the system roots plus an optional CA file. A leaf: it imports nothing of
//! the crate, so `config`, `trace` and `proxy` can all use it.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// Why a TLS client configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `proxy.tls_ca_file` could not be read or holds no certificate.
    #[error("`proxy.tls_ca_file` {path}: {why}")]
    CaFile { path: String, why: String },
    /// rustls refused the configuration.
    #[error("TLS setup: {0}")]
    Tls(#[from] rustls::Error),
}

/// Root store: system roots (only loaded for `https://` upstreams) plus the CA file.
pub fn tls_config(https: bool, ca_file: Option<&Path>) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    if https {
        let native = rustls_native_certs::load_native_certs();
        for err in &native.errors {
            tracing::warn!(error = %err, "could not load some system root certificates");
        }
        let (added, ignored) = roots.add_parsable_certificates(native.certs);
        tracing::debug!(added, ignored, "system root certificates loaded");
    }
    if let Some(path) = ca_file {
        let fail = |why: String| TlsError::CaFile {
            path: path.display().to_string(),
            why,
        };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .map_err(|e| fail(e.to_string()))?
            .collect::<Result<_, _>>()
            .map_err(|e| fail(e.to_string()))?;
        if certs.is_empty() {
            return Err(fail("no PEM certificate in it".to_string()));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| fail(e.to_string()))?;
        }
    }
    if https && roots.is_empty() {
        tracing::warn!("no root certificates: https upstream handshakes will fail");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
