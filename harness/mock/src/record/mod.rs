//! Recording real traffic: a loopback proxy ([`proxy`]) forwards each
//! request to an upstream provider and streams its answer back unchanged
//! while keeping a copy; [`capture`] turns what it saw into a v2 exchange
//! (neutral parts, raw bytes, the request), with the secrets [`redact`]
//! names stripped first (and the keys reloop sends, [`secrets`]); [`shown`] keeps secrets in URLs out of what is printed. `reloop record` and `reloop serve --capture` both
//! run on it.

pub mod capture;
pub mod proxy;
pub mod redact;
pub mod secrets;
pub mod shown;
pub mod upstream_base;

pub use capture::{exchange_of, redacted_exchange, session_of};
pub use proxy::{Observed, RecordProxy};
pub use redact::Redaction;
pub use secrets::InjectedSecrets;
pub use shown::{path_shown, url_shown};
pub use upstream_base::UpstreamBase;
