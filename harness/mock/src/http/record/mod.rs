//! Recording real traffic: a loopback proxy ([`proxy`]) forwards each
//! request to an upstream provider ([`upstream_base`]) and streams its
//! answer back unchanged while keeping a copy, which
//! `reloop_recording::capture` turns into a redacted v2 exchange.
//! `reloop record` and `reloop serve --capture` both run on it.

pub(crate) mod proxy;
mod upstream_base;

pub use proxy::RecordProxy;
pub use upstream_base::UpstreamBase;
