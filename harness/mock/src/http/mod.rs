//! The HTTP layer: the routes of the four provider APIs over the replay
//! layer ([`crate::replay`]), the responses and their SSE streams, the
//! connection limits, live forwarding to an upstream and the record proxy.

pub(crate) mod api_errors;
pub(crate) mod body_timeout;
pub mod connections;
pub(crate) mod dot_segments;
pub mod json_log;
pub mod live;
pub(crate) mod raw_reply;
pub mod record;
pub(crate) mod server;
