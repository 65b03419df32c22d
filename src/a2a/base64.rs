//! Standard base64 decoding, for what A2A traffic and its recordings carry
//! encoded: gRPC `-bin` metadata (sent unpadded) and HAR response texts.

/// Standard base64 (RFC 4648 §4), padded or not, ASCII whitespace
/// ignored; `None` on any other byte or a length no encoding makes.
pub(crate) fn decode(text: &[u8]) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let clean: Vec<u8> = text
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let clean = clean
        .strip_suffix(b"==")
        .or_else(|| clean.strip_suffix(b"="))
        .unwrap_or(&clean);
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= val(*c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn padded_or_not() {
        assert_eq!(decode(b"aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode(b"aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(decode(b"aGk=").unwrap(), b"hi");
        assert_eq!(decode(b"aGk").unwrap(), b"hi");
        assert_eq!(decode(b"aGVsbG8gd29ybGQ").unwrap(), b"hello world");
        assert_eq!(decode(b" aGVs\r\nbG8= ").unwrap(), b"hello");
        assert_eq!(decode(b"").unwrap(), b"");
    }

    #[test]
    fn anything_else_is_none() {
        assert!(decode(b"a").is_none());
        assert!(decode(b"aGVsb").is_none());
        assert!(decode(b"a*==").is_none());
        assert!(decode(b"a*b").is_none());
        assert!(decode(b"aG=k").is_none());
    }
}
