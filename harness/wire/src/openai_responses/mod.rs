//! The OpenAI Responses API (`POST /v1/responses`): the request and its items, the typed
//! streaming events, and the `response` object of non-streamed answers.

pub mod read_reply;
pub mod reply;
pub mod request;
pub mod response;
pub mod stream;

#[cfg(test)]
mod fixtures;

pub use request::{FunctionCallItem, FunctionCallOutputItem, InputItem, MessageItem, ResponsesRequest, ResponsesTool, Role};
pub use response::{IncompleteDetails, InputTokensDetails, Response, ResponseMeta, ResponsesError, ResponsesUsage};
pub use stream::{
    ArgumentsDeltaEvent, ArgumentsDoneEvent, ContentPartEvent, ErrorEvent, OutputItemEvent, ResponseEvent, ResponsesEvent, ResponsesStreamDecoder,
    TextDeltaEvent, TextDoneEvent,
};
