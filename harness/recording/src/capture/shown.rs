//! URLs and paths as they may be printed: a query may carry a key
//! (`?key=…`) and a URL may carry `user:pass@`, so log lines, banners and
//! error bodies show neither.

/// `path` without its query (`/v1/models?key=…` → `/v1/models`).
pub fn path_shown(path: &str) -> &str {
    path.split_once('?').map_or(path, |(path, _)| path)
}

/// `url` without the `user:pass@` of its authority, and without its query.
pub fn url_shown(url: &str) -> String {
    let url = path_shown(url);
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(scheme, rest)| (scheme, rest));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if scheme.is_empty() { format!("{host}{tail}") } else { format!("{scheme}://{host}{tail}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_not_shown() {
        assert_eq!(path_shown("/v1beta/models?key=AIzaSecret"), "/v1beta/models");
        assert_eq!(path_shown("/v1/messages"), "/v1/messages");
    }

    #[test]
    fn userinfo_and_query_are_not_shown() {
        assert_eq!(url_shown("https://user:pa%40ss@api.example.com:8443/v1/chat?key=k"), "https://api.example.com:8443/v1/chat");
        assert_eq!(url_shown("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
        assert_eq!(url_shown("http://token@host"), "http://host");
        assert_eq!(url_shown("http://host/a@b"), "http://host/a@b");
    }
}
