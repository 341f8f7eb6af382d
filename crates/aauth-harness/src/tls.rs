//! https for the three servers: the certificate in `fixtures/tls` (`server.pem` for IP
//! 127.0.0.1, issued by the test CA `ca.pem`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls")
}

/// The PEM file of the test CA that issued the https servers' certificate, for
/// `AAuthClientBuilder::ca_file`.
pub fn ca_file() -> PathBuf {
    fixtures().join("ca.pem")
}

pub(crate) fn acceptor() -> tokio_rustls::TlsAcceptor {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certificates = vec![CertificateDer::from_pem_file(fixtures().join("server.pem")).unwrap()];
    let key = PrivateKeyDer::from_pem_file(fixtures().join("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certificates, key)
        .unwrap();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

/// TCP plus a TLS handshake; connections whose handshake fails (a client that does not
/// trust the certificate) are dropped.
pub(crate) struct TlsListener {
    pub(crate) tcp: tokio::net::TcpListener,
    pub(crate) acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, address)) = self.tcp.accept().await else { continue };
            if let Ok(stream) = self.acceptor.accept(stream).await {
                return (stream, address);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
