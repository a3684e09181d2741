//! The HTTP layer: the routes of the four provider APIs over the replay
//! layer ([`crate::replay`]), the responses and their SSE streams, the
//! connection limits, live forwarding to an upstream and the record proxy.
//! Every error the server raises itself is in the API's JSON shape
//! ([`api_errors`]).

mod answer;
mod api_errors;
mod body_timeout;
mod call;
pub mod connections;
mod count;
mod dot_segments;
mod factories;
pub mod json_log;
pub mod live;
mod mock_server;
mod raw_reply;
pub mod record;
mod registry;
mod respond;
mod routes;

pub use factories::{recording_factory, scenario_factory};
pub use mock_server::MockServer;
pub use registry::{Registry, SessionFactory, SessionLimits, SessionRefusal, WentLive};
