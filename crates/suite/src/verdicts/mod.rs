//! How a figure is read against a paper: the papers' items ([`items`]) and
//! the hardware each needs ([`hardware`]), the rules that judge an effect
//! against its spread over rounds ([`rules`]), and the claim rows they give
//! ([`claims`]).

pub mod claims;
pub mod hardware;
pub mod items;
pub mod rules;
