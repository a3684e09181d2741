//! reloop's own files, in one crate that every reader and writer of them
//! depends on: the scenario types, which read and write scenarios and give
//! their JSON Schema ([`scenario`]; the recording model is `reloop_recording`'s),
//! the YAML loader whose errors name file, line and field ([`yaml`]), the
//! checks every input file passes before it is read ([`input_file`]), the
//! range checks run once a file parses ([`validate_settings`]), telling a
//! scenario from a recording by its `format:` tag ([`kind`]), the atomic
//! writer ([`atomic_file`]), the v2 recording writer ([`recording_file`]),
//! and the agent presets: each known agent's launch ([`agent_presets`]) and
//! tool declarations ([`presets`]).
//!
//! A crate of its own rather than a module of `eval`: `import` writes these
//! files and `eval` reads them, and neither depends on the other. It sits
//! above `agent` and `mock`, whose settings and recording model the files
//! hold, and below `eval` and `import`.

pub mod agent_presets;
pub mod atomic_file;
pub mod input_error;
pub mod input_file;
pub mod kind;
pub mod presets;
pub mod recording_file;
pub mod regular_file;
pub mod scenario;
pub mod validate_settings;
pub mod yaml;
pub mod yaml_locate;

pub use input_error::{InputError, RangeError};
