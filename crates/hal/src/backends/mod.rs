//! The low-level drivers.

mod dispatch;
pub mod e4defrag;
pub mod libaio;
pub mod mem;
pub mod mmap;
pub mod net;
pub mod null;
mod os;
mod pipe;
pub mod posixaio;
mod ready;
pub mod splice;
mod sq_words;
pub mod sync;
mod trim;
pub mod uring;

pub(crate) use dispatch::Backend;
