//! W3C Trace Context (`traceparent`, `tracestate`) as the proxy reads it,
//! the ids of its own spans, and the parent-based sampling decision.

/// A caller's `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub flags: u8,
}

impl TraceParent {
    /// Reads a `traceparent` value; `None` for anything the W3C format
    /// rejects (version `ff`, all-zero ids, upper-case hex, a version-00
    /// value with extra fields).
    pub fn parse(value: &str) -> Option<TraceParent> {
        let mut parts = value.split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let rest = parts.next();
        if version.len() != 2 || version == "ff" || (version == "00" && rest.is_some()) {
            return None;
        }
        hex::<1>(version)?;
        let parent = TraceParent {
            trace_id: hex(trace)?,
            span_id: hex(span)?,
            flags: hex::<1>(flags)?[0],
        };
        (parent.trace_id != [0; 16] && parent.span_id != [0; 8]).then_some(parent)
    }

    /// Whether the caller sampled the trace (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

/// `N` bytes from exactly `2N` lower-case hex digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// Lower-case hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The trace id of a `traceparent` value, as lower-case hex.
pub fn trace_id_of(value: &str) -> Option<String> {
    TraceParent::parse(value).map(|p| to_hex(&p.trace_id))
}

/// The proxy's span of an exchange, decided on the serving path when its
/// context goes upstream (`propagate`): its ids and whether it is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnSpan {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub sampled: bool,
}

impl OwnSpan {
    /// The span of a request with the caller's `parent` (if any): in its
    /// trace, sampled as it is; a root sampled at `ratio`. Ids from the
    /// serving thread's own generator.
    pub fn decide(parent: Option<&TraceParent>, ratio: f64) -> OwnSpan {
        let nonzero_u64 = || loop {
            let v = fastrand::u64(..);
            if v != 0 {
                return v;
            }
        };
        let (trace_id, sampled) = match parent {
            Some(p) => (p.trace_id, p.sampled()),
            None => {
                let hi = u128::from(nonzero_u64());
                let id = (hi << 64 | u128::from(fastrand::u64(..))).to_be_bytes();
                (id, ratio >= 1.0 || (ratio > 0.0 && fastrand::f64() < ratio))
            }
        };
        OwnSpan {
            trace_id,
            span_id: nonzero_u64().to_be_bytes(),
            sampled,
        }
    }

    /// The `traceparent` that makes this span the upstream request's parent.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{}",
            to_hex(&self.trace_id),
            to_hex(&self.span_id),
            if self.sampled { "01" } else { "00" }
        )
    }
}

/// Ids for the proxy's own spans and traces (random, never all zero) and
/// the sampling decision: parent-based (a caller's `sampled` flag is
/// followed either way), a root by `ratio`.
#[derive(Debug)]
pub struct Ids {
    rng: fastrand::Rng,
    ratio: f64,
}

impl Ids {
    pub fn new(ratio: f64) -> Ids {
        Ids {
            rng: fastrand::Rng::new(),
            ratio: ratio.clamp(0.0, 1.0),
        }
    }

    /// Whether an exchange with `parent` (if any) is traced.
    pub fn sample(&mut self, parent: Option<&TraceParent>) -> bool {
        match parent {
            Some(p) => p.sampled(),
            None => self.ratio >= 1.0 || (self.ratio > 0.0 && self.rng.f64() < self.ratio),
        }
    }

    pub fn trace_id(&mut self) -> [u8; 16] {
        loop {
            let id = self.rng.u128(..).to_be_bytes();
            if id != [0; 16] {
                return id;
            }
        }
    }

    pub fn span_id(&mut self) -> [u8; 8] {
        loop {
            let id = self.rng.u64(..).to_be_bytes();
            if id != [0; 8] {
                return id;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_valid_traceparents() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        let p = TraceParent::parse(&format!("00-{id}-00f067aa0ba902b7-01")).unwrap();
        assert_eq!(to_hex(&p.trace_id), id);
        assert_eq!(to_hex(&p.span_id), "00f067aa0ba902b7");
        assert!(p.sampled());
        assert!(!TraceParent::parse(&format!("00-{id}-00f067aa0ba902b7-00"))
            .unwrap()
            .sampled());
        // A later version may add fields.
        assert!(TraceParent::parse(&format!("01-{id}-00f067aa0ba902b7-01-extra")).is_some());
        for bad in [
            String::new(),
            format!("00-{id}-00f067aa0ba902b7-01-extra"),
            format!("ff-{id}-00f067aa0ba902b7-01"),
            format!("00-{}-00f067aa0ba902b7-01", "0".repeat(32)),
            format!("00-{id}-0000000000000000-01"),
            format!("00-{}-00f067aa0ba902b7-01", id.to_uppercase()),
            format!("00-{id}-00f067aa0ba902b7"),
            format!("00-{id}x-00f067aa0ba902b7-01"),
            "00-é€-00f067aa0ba902b7-01".to_string(),
        ] {
            assert_eq!(TraceParent::parse(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn sampling_follows_the_parent_and_the_ratio() {
        let parent = |flags| TraceParent {
            trace_id: [1; 16],
            span_id: [2; 8],
            flags,
        };
        let mut never = Ids::new(0.0);
        assert!(
            never.sample(Some(&parent(1))),
            "a sampled parent is followed"
        );
        assert!(!never.sample(None));
        let mut always = Ids::new(1.0);
        assert!(!always.sample(Some(&parent(0))), "an unsampled parent too");
        assert!(always.sample(None));
        let mut tenth = Ids::new(0.1);
        let n = (0..10_000).filter(|_| tenth.sample(None)).count();
        assert!((700..1300).contains(&n), "{n} of 10000 at 0.1");
        assert_ne!(tenth.trace_id(), tenth.trace_id());
    }

    #[test]
    fn an_own_span_continues_the_callers_trace_and_says_so_upstream() {
        let caller =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        let own = OwnSpan::decide(Some(&caller), 0.0);
        assert!(own.sampled, "parent-based");
        assert_eq!(own.trace_id, caller.trace_id);
        assert_ne!(own.span_id, caller.span_id);
        let sent = TraceParent::parse(&own.traceparent()).unwrap();
        assert_eq!(
            (sent.trace_id, sent.span_id, sent.sampled()),
            (own.trace_id, own.span_id, true)
        );
        let root = OwnSpan::decide(None, 0.0);
        assert!(!root.sampled && root.trace_id != [0; 16]);
        assert!(TraceParent::parse(&root.traceparent()).is_some_and(|p| !p.sampled()));
    }
}
