//! The thread-per-connection model, the HIOPS paper's server: each
//! connection's thread blocks in the store's path for every device I/O.

use super::tls::{self, Blocking};
use crate::commands::Backend;
use crate::server_state::Shared;
use crate::session::serve;
use crate::store::{Store, StoreError};
use std::io;
use std::net::TcpStream;
use std::sync::Arc;

pub(super) fn spawn(shared: Arc<Shared>, conn: TcpStream, id: u64) -> io::Result<()> {
    std::thread::Builder::new()
        .name("hiops-kv-conn".into())
        .stack_size(256 << 10)
        .spawn(move || {
            let _ = conn.set_nodelay(true);
            let backend = BlockingStore(&shared.store);
            let _ = match &shared.tls {
                None => {
                    crate::block::run_blocking(serve(&shared, id, &mut Blocking(conn), &backend))
                }
                Some(tls) => tls::blocking(tls, conn).and_then(|stream| {
                    crate::block::run_blocking(serve(&shared, id, &mut Blocking(stream), &backend))
                }),
            };
            shared.disconnected();
        })?;
    Ok(())
}

/// The store's blocking calls, through its own I/O path.
struct BlockingStore<'a>(&'a Store);

impl Backend for BlockingStore<'_> {
    async fn get(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool, StoreError> {
        self.0.get_into(key, out)
    }

    async fn set(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.0.set(key, value)
    }

    async fn del(&self, keys: &[&[u8]]) -> Result<u64, StoreError> {
        self.0.del_keys(keys)
    }

    async fn mset(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), StoreError> {
        self.0.mset(pairs)
    }

    async fn flush_all(&self) -> Result<(), StoreError> {
        self.0.flush_all()
    }
}
