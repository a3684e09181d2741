//! Path routing for a small HTTP service: `/users/{id}/posts/{post}` style
//! patterns, matched segment by segment, with typed extraction of the
//! captured parameters.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// HTTP methods the router distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl FromStr for Method {
    type Err = RouteError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "GET" => Self::Get,
            "POST" => Self::Post,
            "PUT" => Self::Put,
            "PATCH" => Self::Patch,
            "DELETE" => Self::Delete,
            other => return Err(RouteError::UnknownMethod(other.to_owned())),
        })
    }
}

/// Why a request found no handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteError {
    UnknownMethod(String),
    NotFound { path: String },
    MethodNotAllowed { path: String, allowed: Vec<Method> },
    BadParam { name: String, value: String, reason: String },
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownMethod(m) => write!(f, "unknown method {m:?}"),
            Self::NotFound { path } => write!(f, "no route for {path}"),
            Self::MethodNotAllowed { path, allowed } => {
                write!(f, "{path} allows only ")?;
                for (i, method) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{method:?}")?;
                }
                Ok(())
            }
            Self::BadParam { name, value, reason } => write!(f, "parameter {name}={value:?}: {reason}"),
        }
    }
}

impl std::error::Error for RouteError {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
    Rest(String),
}

#[derive(Debug, Clone)]
struct Pattern {
    segments: Vec<Segment>,
}

impl Pattern {
    fn parse(pattern: &str) -> Self {
        let segments = pattern
            .trim_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) if name.starts_with('*') => Segment::Rest(name[1..].to_owned()),
                Some(name) => Segment::Param(name.to_owned()),
                None => Segment::Literal(s.to_owned()),
            })
            .collect();
        Self { segments }
    }

    fn matches(&self, path: &str) -> Option<Params> {
        let mut params = Params::default();
        let mut parts = path.trim_matches('/').split('/').filter(|s| !s.is_empty());
        for segment in &self.segments {
            match segment {
                Segment::Literal(lit) => {
                    if parts.next()? != lit {
                        return None;
                    }
                }
                Segment::Param(name) => {
                    params.values.insert(name.clone(), parts.next()?.to_owned());
                }
                Segment::Rest(name) => {
                    let rest: Vec<&str> = parts.by_ref().collect();
                    params.values.insert(name.clone(), rest.join("/"));
                    return Some(params);
                }
            }
        }
        parts.next().is_none().then_some(params)
    }
}

/// Captured path parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    /// The parameter `name`, parsed as `T`.
    pub fn get<T>(&self, name: &str) -> Result<T, RouteError>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        let value = self.values.get(name).ok_or_else(|| RouteError::BadParam {
            name: name.to_owned(),
            value: String::new(),
            reason: "missing".to_owned(),
        })?;
        value.parse().map_err(|e: T::Err| RouteError::BadParam {
            name: name.to_owned(),
            value: value.clone(),
            reason: e.to_string(),
        })
    }
}

type Handler<S> = fn(&S, &Params) -> Response;

/// What a handler returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    pub fn ok(body: impl Into<String>) -> Self {
        Self { status: 200, body: body.into() }
    }

    pub fn error(status: u16, error: &RouteError) -> Self {
        Self { status, body: format!("{{\"error\":\"{error}\"}}") }
    }
}

/// Routes in registration order; the first matching pattern wins.
pub struct Router<S> {
    routes: Vec<(Method, Pattern, Handler<S>)>,
}

impl<S> Default for Router<S> {
    fn default() -> Self {
        Self { routes: Vec::new() }
    }
}

impl<S> Router<S> {
    pub fn route(mut self, method: Method, pattern: &str, handler: Handler<S>) -> Self {
        self.routes.push((method, Pattern::parse(pattern), handler));
        self
    }

    pub fn dispatch(&self, state: &S, method: &str, path: &str) -> Response {
        match self.find(method, path) {
            Ok((handler, params)) => handler(state, &params),
            Err(error @ RouteError::NotFound { .. }) => Response::error(404, &error),
            Err(error @ RouteError::MethodNotAllowed { .. }) => Response::error(405, &error),
            Err(error) => Response::error(400, &error),
        }
    }

    fn find(&self, method: &str, path: &str) -> Result<(Handler<S>, Params), RouteError> {
        let method: Method = method.parse()?;
        let mut allowed = Vec::new();
        for (route_method, pattern, handler) in &self.routes {
            if let Some(params) = pattern.matches(path) {
                if *route_method == method {
                    return Ok((*handler, params));
                }
                allowed.push(*route_method);
            }
        }
        if allowed.is_empty() {
            Err(RouteError::NotFound { path: path.to_owned() })
        } else {
            allowed.sort();
            allowed.dedup();
            Err(RouteError::MethodNotAllowed { path: path.to_owned(), allowed })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Db {
        users: Vec<&'static str>,
    }

    fn user(db: &Db, params: &Params) -> Response {
        match params.get::<usize>("id") {
            Ok(id) => db.users.get(id).map_or_else(
                || Response::error(404, &RouteError::NotFound { path: format!("/users/{id}") }),
                |name| Response::ok(*name),
            ),
            Err(error) => Response::error(400, &error),
        }
    }

    fn file(_: &Db, params: &Params) -> Response {
        Response::ok(params.get::<String>("path").unwrap_or_default())
    }

    fn router() -> Router<Db> {
        Router::default().route(Method::Get, "/users/{id}", user).route(Method::Get, "/static/{*path}", file)
    }

    #[test]
    fn extracts_typed_params() {
        let db = Db { users: vec!["ada", "grace"] };
        assert_eq!(router().dispatch(&db, "GET", "/users/1"), Response::ok("grace"));
        assert_eq!(router().dispatch(&db, "GET", "/users/x").status, 400);
    }

    #[test]
    fn rest_segments_take_the_remainder() {
        let db = Db { users: vec![] };
        assert_eq!(router().dispatch(&db, "GET", "/static/css/site.css"), Response::ok("css/site.css"));
    }

    #[test]
    fn wrong_method_lists_the_allowed_ones() {
        let db = Db { users: vec![] };
        let response = router().dispatch(&db, "DELETE", "/users/0");
        assert_eq!(response.status, 405);
        assert!(response.body.contains("allows only Get"), "{}", response.body);
    }
}
