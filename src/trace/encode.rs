//! OTLP protobuf written straight from the span's own fields: no message
//! tree, no string copied into one, no allocation but the output's growth.
//! Field numbers are trace.proto's (see `otlp`, whose prost messages read
//! what is written here back in the tests).

use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};

/// Protobuf fields appended to a buffer.
pub struct Out<'a>(pub &'a mut Vec<u8>);

impl Out<'_> {
    pub fn bytes(&mut self, field: u32, value: &[u8]) {
        encode_key(field, WireType::LengthDelimited, self.0);
        encode_varint(value.len() as u64, self.0);
        self.0.extend_from_slice(value);
    }

    /// A string field; proto3 leaves an empty one out.
    pub fn string(&mut self, field: u32, value: &str) {
        if !value.is_empty() {
            self.bytes(field, value.as_bytes());
        }
    }

    pub fn varint(&mut self, field: u32, value: u64) {
        if value != 0 {
            encode_key(field, WireType::Varint, self.0);
            encode_varint(value, self.0);
        }
    }

    pub fn fixed64(&mut self, field: u32, value: u64) {
        encode_key(field, WireType::SixtyFourBit, self.0);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    pub fn fixed32(&mut self, field: u32, value: u32) {
        encode_key(field, WireType::ThirtyTwoBit, self.0);
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    /// A nested message whose length is `len`, written by `body`.
    pub fn nested(&mut self, field: u32, len: usize, body: impl FnOnce(&mut Out<'_>)) {
        encode_key(field, WireType::LengthDelimited, self.0);
        encode_varint(len as u64, self.0);
        let before = self.0.len();
        body(self);
        debug_assert_eq!(self.0.len() - before, len, "field {field}");
    }

    /// A `KeyValue` (`field`: where it sits) with a string value.
    pub fn attr_str(&mut self, field: u32, key: &str, value: &str) {
        // AnyValue { string_value = 1 }
        let any = len_delimited(value.len());
        self.attr(field, key, any, |o| o.bytes(1, value.as_bytes()));
    }

    /// A `KeyValue` with an int value (`int_value = 3`).
    pub fn attr_int(&mut self, field: u32, key: &str, value: i64) {
        #[allow(clippy::cast_sign_loss)] // protobuf int64: two's complement
        let v = value as u64;
        let any = 1 + encoded_len_varint(v);
        self.attr(field, key, any, |o| {
            encode_key(3, WireType::Varint, o.0);
            encode_varint(v, o.0);
        });
    }

    /// A `KeyValue` with a double value (`double_value = 4`).
    pub fn attr_double(&mut self, field: u32, key: &str, value: f64) {
        self.attr(field, key, 9, |o| {
            encode_key(4, WireType::SixtyFourBit, o.0);
            o.0.extend_from_slice(&value.to_le_bytes());
        });
    }

    /// `KeyValue { key = 1; value = 2 (AnyValue of length any) }`.
    fn attr(&mut self, field: u32, key: &str, any: usize, value: impl FnOnce(&mut Out<'_>)) {
        let len = len_delimited(key.len()) + len_delimited(any);
        self.nested(field, len, |o| {
            o.bytes(1, key.as_bytes());
            o.nested(2, any, value);
        });
    }
}

/// The encoded length of a length-delimited field (tag below 16) of `len` bytes.
pub fn len_delimited(len: usize) -> usize {
    1 + encoded_len_varint(len as u64) + len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::otlp::{KeyValue, Resource, Value};
    use prost::Message;

    #[test]
    fn attributes_read_back_with_the_reference_messages() {
        let mut buf = Vec::new();
        let mut o = Out(&mut buf);
        o.attr_str(1, "a2a.task.id", "t-1");
        o.attr_int(1, "http.response.status_code", 200);
        o.attr_int(1, "negative", -5);
        o.attr_double(1, "ms", 1.5);
        o.attr_str(1, "long", &"x".repeat(300));
        let r = Resource::decode(buf.as_slice()).unwrap();
        let want = vec![
            KeyValue::new("a2a.task.id", Value::String("t-1".into())),
            KeyValue::new("http.response.status_code", Value::Int(200)),
            KeyValue::new("negative", Value::Int(-5)),
            KeyValue::new("ms", Value::Double(1.5)),
            KeyValue::new("long", Value::String("x".repeat(300))),
        ];
        assert_eq!(r.attributes, want);
    }
}
