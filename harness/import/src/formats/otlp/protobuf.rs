//! OTLP protobuf (`ExportTraceServiceRequest`, opentelemetry-proto
//! `collector/trace/v1` and `trace/v1`) read into the shape of its OTLP/JSON
//! encoding, so one reader maps both: ids as lowercase hex, 64-bit times
//! and integers as decimal strings, bytes as base64, enums as numbers.
//!
//! Hand-written rather than a dependency: the workspace has no protobuf
//! crate (`reloop export` writes OTLP/JSON), and the importer needs only
//! the decoding of ten messages, which is the wire format's four encodings
//! (varint, 64-bit, length-delimited, 32-bit) and a table of field numbers.
//! Unknown fields are skipped, as protobuf readers must; a malformed message
//! is an error naming the byte where it stopped.

use base64::Engine as _;
use serde_json::{Map, Value, json};

/// One field as the wire carries it.
enum Wire<'b> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'b [u8]),
    Fixed32,
}

/// The fields of one message, in order, each with its number; `base` is
/// the message's offset in the file, for errors.
fn fields(bytes: &[u8], base: usize) -> Result<Vec<(u64, Wire<'_>)>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let key = varint(bytes, &mut at, base)?;
        let field = key >> 3;
        let wire = match key & 7 {
            0 => Wire::Varint(varint(bytes, &mut at, base)?),
            1 => Wire::Fixed64(u64::from_le_bytes(take(bytes, &mut at, 8, base)?.try_into().expect("8 bytes"))),
            2 => {
                let len = usize::try_from(varint(bytes, &mut at, base)?).map_err(|_| format!("byte {}: length out of range", base + at))?;
                Wire::Bytes(take(bytes, &mut at, len, base)?)
            }
            5 => {
                take(bytes, &mut at, 4, base)?;
                Wire::Fixed32
            }
            other => return Err(format!("byte {}: wire type {other} of field {field} is not one OTLP uses", base + at)),
        };
        if field == 0 {
            return Err(format!("byte {}: field number 0", base + at));
        }
        out.push((field, wire));
    }
    Ok(out)
}

fn varint(bytes: &[u8], at: &mut usize, base: usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or_else(|| format!("byte {}: message ends inside a varint", base + *at))?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(format!("byte {}: varint longer than 10 bytes", base + *at))
}

fn take<'b>(bytes: &'b [u8], at: &mut usize, len: usize, base: usize) -> Result<&'b [u8], String> {
    let end = at.checked_add(len).filter(|&end| end <= bytes.len()).ok_or_else(|| format!("byte {}: field of {len} bytes runs past the end", base + *at))?;
    let slice = &bytes[*at..end];
    *at = end;
    Ok(slice)
}

/// The offset of `inner` within `outer` (a sub-slice of it), for errors.
fn offset(outer: &[u8], inner: &[u8]) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

/// A message field decoded by `decode`, with its offset in the file.
type Decode = fn(&[u8], usize) -> Result<Value, String>;

/// Decodes a message whose fields are named in `table` (number, JSON name,
/// how to read it); a repeated field (`[]` after its name) becomes a list.
fn message(bytes: &[u8], base: usize, table: &[(u64, &str, Kind)]) -> Result<Value, String> {
    let mut object = Map::new();
    for (number, wire) in fields(bytes, base)? {
        let Some((_, name, kind)) = table.iter().find(|(n, _, _)| *n == number) else { continue };
        let (name, repeated) = name.strip_suffix("[]").map_or((*name, false), |name| (name, true));
        let value = match (kind, wire) {
            (Kind::Message(decode), Wire::Bytes(inner)) => decode(inner, base + offset(bytes, inner))?,
            (Kind::Text, Wire::Bytes(inner)) => {
                Value::String(String::from_utf8(inner.to_vec()).map_err(|_| format!("byte {}: field `{name}` is not UTF-8", base + offset(bytes, inner)))?)
            }
            (Kind::Hex, Wire::Bytes(inner)) => Value::String(inner.iter().map(|b| format!("{b:02x}")).collect()),
            (Kind::Base64, Wire::Bytes(inner)) => Value::String(base64::engine::general_purpose::STANDARD.encode(inner)),
            (Kind::Uint, Wire::Varint(n)) => json!(n),
            // int64 as protobuf's JSON mapping writes it: a decimal string (two's complement read back).
            (Kind::Int, Wire::Varint(n)) => Value::String((n as i64).to_string()),
            (Kind::Bool, Wire::Varint(n)) => Value::Bool(n != 0),
            (Kind::Nanos, Wire::Fixed64(n)) => Value::String(n.to_string()),
            (Kind::Double, Wire::Fixed64(n)) => json!(f64::from_bits(n)),
            (Kind::Skip, _) => continue,
            _ => return Err(format!("field `{name}` (number {number}) has the wrong wire type")),
        };
        if repeated {
            object.entry(name).or_insert_with(|| Value::Array(Vec::new())).as_array_mut().expect("a list").push(value);
        } else {
            object.insert(name.to_owned(), value);
        }
    }
    Ok(Value::Object(object))
}

/// How a field's bytes are read.
#[derive(Clone, Copy)]
enum Kind {
    Message(Decode),
    Text,
    /// Trace and span ids: hex, as OTLP/JSON writes them.
    Hex,
    Base64,
    Uint,
    Int,
    Bool,
    Nanos,
    Double,
    /// A field the importer does not read (links, flags).
    Skip,
}

/// An `ExportTraceServiceRequest` as its OTLP/JSON document.
pub fn request(bytes: &[u8]) -> Result<Value, String> {
    message(bytes, 0, &[(1, "resourceSpans[]", Kind::Message(resource_spans))])
}

fn resource_spans(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "resource", Kind::Message(resource)), (2, "scopeSpans[]", Kind::Message(scope_spans)), (3, "schemaUrl", Kind::Text)])
}

fn resource(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "attributes[]", Kind::Message(key_value)), (2, "droppedAttributesCount", Kind::Uint)])
}

fn scope_spans(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "scope", Kind::Message(scope)), (2, "spans[]", Kind::Message(span)), (3, "schemaUrl", Kind::Text)])
}

fn scope(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "name", Kind::Text), (2, "version", Kind::Text), (3, "attributes[]", Kind::Message(key_value))])
}

fn span(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(
        bytes,
        base,
        &[
            (1, "traceId", Kind::Hex),
            (2, "spanId", Kind::Hex),
            (3, "traceState", Kind::Text),
            (4, "parentSpanId", Kind::Hex),
            (5, "name", Kind::Text),
            (6, "kind", Kind::Uint),
            (7, "startTimeUnixNano", Kind::Nanos),
            (8, "endTimeUnixNano", Kind::Nanos),
            (9, "attributes[]", Kind::Message(key_value)),
            (11, "events[]", Kind::Message(event)),
            (13, "links[]", Kind::Skip),
            (15, "status", Kind::Message(status)),
        ],
    )
}

fn event(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "timeUnixNano", Kind::Nanos), (2, "name", Kind::Text), (3, "attributes[]", Kind::Message(key_value))])
}

fn status(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(2, "message", Kind::Text), (3, "code", Kind::Uint)])
}

fn key_value(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "key", Kind::Text), (2, "value", Kind::Message(any_value))])
}

fn any_value(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(
        bytes,
        base,
        &[
            (1, "stringValue", Kind::Text),
            (2, "boolValue", Kind::Bool),
            (3, "intValue", Kind::Int),
            (4, "doubleValue", Kind::Double),
            (5, "arrayValue", Kind::Message(array_value)),
            (6, "kvlistValue", Kind::Message(kvlist_value)),
            (7, "bytesValue", Kind::Base64),
        ],
    )
}

fn array_value(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "values[]", Kind::Message(any_value))])
}

fn kvlist_value(bytes: &[u8], base: usize) -> Result<Value, String> {
    message(bytes, base, &[(1, "values[]", Kind::Message(key_value))])
}

/// Whether `bytes` are an `ExportTraceServiceRequest` holding a span (for
/// `--format auto`): its first field is `resource_spans` (tag `0x0a`, which
/// no JSON or text file starts with) and the whole decodes.
pub fn is_request(bytes: &[u8]) -> bool {
    bytes.first() == Some(&0x0a) && request(bytes).is_ok_and(|document| document.pointer("/resourceSpans/0/scopeSpans/0/spans/0").is_some())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Protobuf encoding for the tests, field by field.
    pub(crate) fn tag(field: u64, wire: u64) -> Vec<u8> {
        encode_varint((field << 3) | wire)
    }

    pub(crate) fn encode_varint(mut n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    pub(crate) fn bytes_field(field: u64, bytes: &[u8]) -> Vec<u8> {
        [tag(field, 2), encode_varint(bytes.len() as u64), bytes.to_vec()].concat()
    }

    fn string_attribute(key: &str, value: &str) -> Vec<u8> {
        bytes_field(9, &[bytes_field(1, key.as_bytes()), bytes_field(2, &bytes_field(1, value.as_bytes()))].concat())
    }

    fn int_attribute(key: &str, value: i64) -> Vec<u8> {
        bytes_field(9, &[bytes_field(1, key.as_bytes()), bytes_field(2, &[tag(3, 0), encode_varint(value as u64)].concat())].concat())
    }

    #[test]
    fn a_request_decodes_into_its_json_encoding() {
        let span = [
            bytes_field(1, &[0xab; 16]),
            bytes_field(2, &[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]),
            bytes_field(5, b"chat gpt-4o"),
            [tag(6, 0), encode_varint(3)].concat(),
            [tag(7, 1), 1_700_000_000_000_000_000u64.to_le_bytes().to_vec()].concat(),
            string_attribute("gen_ai.operation.name", "chat"),
            int_attribute("gen_ai.usage.input_tokens", 42),
            int_attribute("negative", -1),
            // An unknown field (flags, fixed32) is skipped.
            [tag(16, 5), vec![1, 0, 0, 0]].concat(),
        ]
        .concat();
        let request = bytes_field(1, &bytes_field(2, &bytes_field(2, &span)));
        assert!(is_request(&request));
        let document = request_of(&request);
        let span = &document["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(span["traceId"], "ab".repeat(16));
        assert_eq!(span["spanId"], "0102030405060708");
        assert_eq!(span["name"], "chat gpt-4o");
        assert_eq!(span["kind"], 3);
        assert_eq!(span["startTimeUnixNano"], "1700000000000000000");
        assert_eq!(span["attributes"][0], json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}));
        assert_eq!(span["attributes"][1]["value"]["intValue"], "42");
        assert_eq!(span["attributes"][2]["value"]["intValue"], "-1");
    }

    fn request_of(bytes: &[u8]) -> Value {
        request(bytes).unwrap()
    }

    #[test]
    fn a_truncated_message_names_the_byte_where_it_stopped_and_json_is_no_request() {
        let request = bytes_field(1, &bytes_field(2, &bytes_field(2, &bytes_field(5, b"chat"))));
        let error = super::request(&request[..request.len() - 2]).unwrap_err();
        assert!(error.contains("runs past the end"), "{error}");
        assert!(!is_request(&request[..request.len() - 2]));
        assert!(!is_request(b"{\"resourceSpans\":[]}"));
        assert!(!is_request(&bytes_field(1, &[])), "a request without spans is not told as OTLP");
    }
}
