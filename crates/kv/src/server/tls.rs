//! TLS (rustls, with the ring provider): the certificate and key files
//! loaded once at start, and the blocking transport of the
//! thread-per-connection model (the tasks model reads a TLS stream as it
//! reads TCP: `AsyncStream` in tasks.rs). With TLS on, every connection on
//! the port is TLS (as Redis' `--port 0 --tls-port P`).

use crate::server_state::TlsFiles;
use crate::session::{Transport, READ_CHUNK};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

fn bad_file(what: &str, path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} {}: {e}; give a PEM file", path.display()),
    )
}

/// The rustls configuration for `files`, or a line saying what is wrong.
pub(crate) fn load(files: &TlsFiles) -> io::Result<Arc<rustls::ServerConfig>> {
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| bad_file("--tls-cert-file", &files.cert, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad_file("--tls-cert-file", &files.cert, e))?;
    if certs.is_empty() {
        return Err(bad_file(
            "--tls-cert-file",
            &files.cert,
            "no certificate in it",
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| bad_file("--tls-key-file", &files.key, e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the TLS certificate and key do not make a configuration: {e}"),
            )
        })?;
    Ok(Arc::new(config))
}

/// A TLS connection of the thread-per-connection model.
pub(super) type BlockingTls = rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>;

/// Starts the server side of TLS over a blocking socket; the handshake
/// runs on the first read.
pub(super) fn blocking(
    config: &Arc<rustls::ServerConfig>,
    conn: std::net::TcpStream,
) -> io::Result<BlockingTls> {
    let session = rustls::ServerConnection::new(config.clone()).map_err(io::Error::other)?;
    Ok(rustls::StreamOwned::new(session, conn))
}

/// Blocking reads and writes through anything that reads and writes.
pub(super) struct Blocking<S>(pub S);

impl<S: Read + Write> Transport for Blocking<S> {
    async fn read_with(
        &mut self,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<usize> {
        let mut chunk = [0u8; READ_CHUNK];
        let n = self.0.read(&mut chunk)?;
        sink(&chunk[..n])?;
        Ok(n)
    }

    async fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)?;
        self.0.flush()
    }
}
