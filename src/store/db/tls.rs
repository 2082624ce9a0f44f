//! TLS for PostgreSQL connections (rustls, so that the binary needs no
//! libssl): `require` encrypts without checking the server's certificate (as
//! libpq does), `verify-ca` checks that a trusted authority signed it,
//! `verify-full` also that it names the host. The trusted authorities are
//! `sslrootcert=FILE`, else `~/.postgresql/root.crt` when it exists, else the
//! system's.

use super::url::SslMode;
use crate::error::UsageError;
use anyhow::Result;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector for `mode` (not [`SslMode::Disable`]).
pub fn connector(mode: SslMode, root_cert: Option<&Path>) -> Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let chain = match mode {
        SslMode::Require | SslMode::Disable => None,
        SslMode::VerifyCa | SslMode::VerifyFull => Some(
            WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(root_cert)?),
                provider.clone(),
            )
            .build()?,
        ),
    };
    let verifier = Arc::new(Verifier {
        provider,
        chain,
        name: mode == SslMode::VerifyFull,
    });
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// The authorities `verify-*` trusts.
fn roots(file: Option<&Path>) -> Result<RootCertStore> {
    let home_file = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
        .filter(|p| p.is_file());
    let mut roots = RootCertStore::empty();
    match file.map(Path::to_path_buf).or(home_file) {
        Some(f) => {
            let bad = |e: &dyn std::fmt::Display| {
                UsageError(format!(
                    "sslrootcert {}: {e}; give a PEM file of the authority that signed the server's certificate",
                    f.display()
                ))
            };
            for cert in CertificateDer::pem_file_iter(&f).map_err(|e| bad(&e))? {
                roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
        }
    }
    if roots.is_empty() {
        anyhow::bail!(UsageError(
            "no trusted certificate authority for sslmode=verify-*: give sslrootcert=FILE in the URL".into()
        ));
    }
    Ok(roots)
}

/// What a mode checks of the server's certificate: nothing (`require`), its
/// chain (`verify-ca`), its chain and name (`verify-full`). The handshake's
/// signatures are checked in every mode.
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
    name: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end: &CertificateDer<'_>,
        inter: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end, inter, name, ocsp, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
