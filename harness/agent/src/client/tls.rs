//! The process's TLS crypto provider. reqwest is built with rustls but
//! without a provider of its own (its default, aws-lc, needs cmake to
//! build), and panics when it builds a client in a process where none is
//! installed. The loop only talks to loopback over http, but the client is
//! built with TLS support all the same, so this runs before every build.

/// Installs ring as the process-wide rustls provider. A provider installed
/// already (by an earlier call, or by the program embedding the loop) stays.
pub fn ensure_crypto_provider() {
    // An Err only says a provider is installed already: nothing to do.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
