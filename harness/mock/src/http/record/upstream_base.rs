//! An upstream's base URL, as users write it: `OPENAI_BASE_URL` and the
//! SDKs' `base_url` end in the API version (`https://api.openai.com/v1`,
//! `…/v1beta` for Gemini), while the paths reloop forwards start with it
//! (`/v1/chat/completions`). Joining the two must not say the version
//! twice (`/v1/v1/…`, a 404), a base without the version must work as
//! well (`https://api.openai.com`), and a base that names a version is
//! asking for that one (Gemini serves `/v1` and `/v1beta`: a client's
//! `/v1/models/…` sent to a `…/v1beta` base goes to `/v1beta/models/…`).

use reloop_recording::capture::url_shown;

/// An `http://` or `https://` base URL, without a trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamBase(String);

impl UpstreamBase {
    /// `url` as a base; `Err` says why it is not one (the URL shown
    /// without its credentials).
    pub fn parse(url: &str) -> Result<Self, String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("--upstream `{}`: expected an http:// or https:// URL", url_shown(url)));
        }
        Ok(Self(url.trim_end_matches('/').to_owned()))
    }

    /// The plain-HTTP base of a server at `addr` (a proxy in front of
    /// reloop's own mock).
    pub fn http(addr: std::net::SocketAddr) -> Self {
        Self(format!("http://{addr}"))
    }

    /// The URL for the API path `path` (`/v1/…`, with any query): the base
    /// then the path, with one version: the base's when it ends with one
    /// and the path starts with one.
    pub fn join(&self, path: &str) -> String {
        let base = self.0.as_str();
        let path_version = path.strip_prefix('/').and_then(|rest| rest.split(['/', '?']).next()).filter(|segment| is_version(segment));
        match path_version {
            Some(version) if self.ends_with_version() => format!("{base}{}", &path[1 + version.len()..]),
            _ => format!("{base}{path}"),
        }
    }

    /// Whether the base's path (not its host) ends with a version segment.
    fn ends_with_version(&self) -> bool {
        let after_scheme = self.0.split_once("://").map_or(self.0.as_str(), |(_, rest)| rest);
        let Some((_, base_path)) = after_scheme.split_once('/') else { return false };
        base_path.rsplit('/').next().is_some_and(is_version)
    }
}

/// An API version segment: `v1`, `v2`, `v1beta`, `v1alpha`.
fn is_version(segment: &str) -> bool {
    segment.strip_prefix('v').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()) && rest.chars().all(|c| c.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(base: &str, path: &str) -> String {
        UpstreamBase::parse(base).unwrap().join(path)
    }

    #[test]
    fn a_base_with_or_without_the_version_says_it_once() {
        for base in ["https://api.openai.com", "https://api.openai.com/", "https://api.openai.com/v1", "https://api.openai.com/v1/"] {
            assert_eq!(joined(base, "/v1/chat/completions"), "https://api.openai.com/v1/chat/completions", "{base}");
        }
        for base in ["https://generativelanguage.googleapis.com", "https://generativelanguage.googleapis.com/v1beta"] {
            assert_eq!(
                joined(base, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
                "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                "{base}"
            );
        }
        assert_eq!(joined("http://127.0.0.1:9/v1", "/v1/messages"), "http://127.0.0.1:9/v1/messages");
    }

    #[test]
    fn a_path_prefix_stays_and_the_bases_version_is_the_one_sent() {
        assert_eq!(joined("https://gateway.example/openai/v1", "/v1/responses"), "https://gateway.example/openai/v1/responses");
        assert_eq!(joined("https://gateway.example/openai", "/v1/responses"), "https://gateway.example/openai/v1/responses");
        // The base names the version it asks for.
        assert_eq!(joined("https://host/v1beta", "/v1/models/g:generateContent"), "https://host/v1beta/models/g:generateContent");
        assert_eq!(joined("https://host/v1", "/v1beta/models/g:generateContent"), "https://host/v1/models/g:generateContent");
        // A host named like a version is a host.
        assert_eq!(joined("http://v1", "/v1/messages"), "http://v1/v1/messages");
        // A path that does not start with a version is joined as is.
        assert_eq!(joined("https://host/v1", "/healthz"), "https://host/v1/healthz");
    }

    #[test]
    fn what_is_not_an_http_url_is_refused_without_its_credentials() {
        let error = UpstreamBase::parse("ftp://user:secret@host/v1").unwrap_err();
        assert!(error.contains("expected an http:// or https:// URL") && !error.contains("secret"), "{error}");
    }
}
