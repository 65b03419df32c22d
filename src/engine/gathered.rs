//! A request body gathered until its end, for the classifier. Most arrive
//! in one piece, which is kept as it came (shared, not copied); pieces
//! after it are copied together.

use bytes::{Bytes, BytesMut};

#[derive(Debug, Default)]
pub(crate) enum Gathered {
    #[default]
    Empty,
    One(Bytes),
    Many(BytesMut),
}

impl Gathered {
    pub(crate) fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Appends a piece; the first is kept without a copy.
    pub(crate) fn push(&mut self, data: &Bytes) {
        match self {
            Gathered::Empty => *self = Gathered::One(data.clone()),
            _ => self.push_slice(data),
        }
    }

    /// Appends a copy of `data`.
    fn push_slice(&mut self, data: &[u8]) {
        match std::mem::take(self) {
            Gathered::Empty => *self = Gathered::Many(BytesMut::from(data)),
            Gathered::One(first) => {
                let mut all = BytesMut::with_capacity(first.len() + data.len());
                all.extend_from_slice(&first);
                all.extend_from_slice(data);
                *self = Gathered::Many(all);
            }
            Gathered::Many(mut all) => {
                all.extend_from_slice(data);
                *self = Gathered::Many(all);
            }
        }
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Gathered::Empty => &[],
            Gathered::One(b) => b,
            Gathered::Many(b) => b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_come_out_in_order_however_they_were_pushed() {
        let mut g = Gathered::default();
        assert_eq!(g.as_slice(), b"");
        let first = Bytes::from_static(b"{\"a\":");
        g.push(&first);
        assert!(
            matches!(&g, Gathered::One(b) if b.as_ptr() == first.as_ptr()),
            "not copied"
        );
        g.push(&Bytes::from_static(b"1"));
        g.push_slice(b"}");
        assert_eq!(g.as_slice(), b"{\"a\":1}");
        assert_eq!(g.len(), 7);

        let mut copied = Gathered::default();
        copied.push_slice(b"ab");
        copied.push(&Bytes::from_static(b"c"));
        assert_eq!(copied.as_slice(), b"abc");
    }
}
