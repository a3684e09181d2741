//! The process's TLS crypto provider. reqwest is built with rustls but
//! without a provider of its own (its default, aws-lc, needs cmake to
//! build), and panics when it builds a client in a process where none is
//! installed. The loop only talks to loopback over http, but the client is
//! built with TLS support all the same, so this runs before every build.
//!
//! Building a client with the platform's roots reads and parses every
//! system certificate (about 19 M instructions, 9 % of a 50-step bench run,
//! one client per run), so a client for a plain-http endpoint trusts no
//! root at all: it never speaks TLS, and a redirect to https fails closed.

/// Installs ring as the process-wide rustls provider. A provider installed
/// already (by an earlier call, or by the program embedding the loop) stays.
pub fn ensure_crypto_provider() {
    // An Err only says a provider is installed already: nothing to do.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// `builder` with the TLS roots `base_url` needs: the platform's for https,
/// none for http (which never uses them; see the module doc).
pub(super) fn roots_for(builder: reqwest::ClientBuilder, base_url: &str) -> reqwest::ClientBuilder {
    if is_plain_http(base_url) { builder.tls_certs_only([]) } else { builder }
}

/// Whether `url` names a plain-http endpoint (the scheme is case-insensitive).
fn is_plain_http(url: &str) -> bool {
    url.get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_skips_the_platform_roots() {
        assert!(is_plain_http("http://127.0.0.1:4000/v1"));
        assert!(is_plain_http("HTTP://localhost/v1"));
        assert!(!is_plain_http("https://api.openai.com/v1"));
        assert!(!is_plain_http("http:/"));
    }
}
