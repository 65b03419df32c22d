//! Compression bombs, made in microseconds: a gzip member whose deflate
//! stream is one fixed-Huffman block holding `text` once as literals and
//! then back-references that repeat it, 258 bytes each (about 115:1 for
//! SSE events of ~100 bytes). Its CRC is left zero: a reader finds that
//! out only after inflating all of it.

/// Bits written least significant first, as deflate packs them.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code: its bits go most significant first.
    fn code(&mut self, code: u32, len: u32) {
        let rev = code.reverse_bits() >> (32 - len);
        self.put(u64::from(rev), len);
    }

    fn literal(&mut self, b: u8) {
        match b {
            0..=143 => self.code(0x30 + u32::from(b), 8),
            _ => self.code(0x190 + u32::from(b) - 144, 9),
        }
    }

    /// A back-reference of 258 bytes, `dist` back.
    fn repeat_258(&mut self, dist: u32) {
        self.code(0xc5, 8); // length code 285: 258, no extra bits
        let (code, base, extra) = distance_code(dist);
        self.code(code, 5);
        self.put(u64::from(dist - base), extra);
    }
}

/// Deflate's distance code, its base and its count of extra bits.
fn distance_code(dist: u32) -> (u32, u32, u32) {
    let mut base = 1;
    for code in 0..30u32 {
        let extra = if code < 4 { 0 } else { code / 2 - 1 };
        if dist < base + (1 << extra) {
            return (code, base, extra);
        }
        base += 1 << extra;
    }
    panic!("distance {dist} over 32 KiB");
}

/// A gzip body that inflates to `text` repeated to at least `plain_bytes`.
pub fn gzip(text: &[u8], plain_bytes: usize) -> Vec<u8> {
    assert!(!text.is_empty() && text.len() <= 32 * 1024);
    let mut b = Bits {
        out: vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff],
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // BFINAL
    b.put(1, 2); // fixed Huffman
    for &c in text {
        b.literal(c);
    }
    let repeats = plain_bytes.saturating_sub(text.len()).div_ceil(258);
    let dist = text.len() as u32;
    for _ in 0..repeats {
        b.repeat_258(dist);
    }
    b.code(0, 7); // end of block
    if b.n > 0 {
        b.out.push(b.acc as u8);
    }
    // CRC-32 and size left zero.
    b.out.extend_from_slice(&[0; 8]);
    b.out
}

#[cfg(test)]
mod tests {
    #[test]
    fn inflates_to_the_text_repeated() {
        use std::io::Read;
        let text = b"data: {\"x\":1}\n\n";
        let gz = super::gzip(text, 100_000);
        let mut plain = Vec::new();
        // The CRC is zero: the reader fails at the end, after the text.
        let _ = flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut plain);
        assert!(plain.len() >= 100_000, "{}", plain.len());
        assert!(plain.chunks(text.len()).all(|c| text.starts_with(c)));
        assert!(
            gz.len() * 50 < plain.len(),
            "{} -> {}",
            gz.len(),
            plain.len()
        );
    }
}
