//! `hiops reproduce`: the source documents' items, each read against this
//! machine's figure. [`items`] lists what the documents claim.

pub mod items;
