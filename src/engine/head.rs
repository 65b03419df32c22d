//! What the engine reads of a response head.

use super::inflate::Encoding;

/// What the engine reads of a response head: small enough to travel by
/// value, and read once where the head is (the forwarding thread), so the
/// analysis thread neither parses nor holds header bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub media: Media,
    pub encoding: Encoding,
}

impl Head {
    /// Reads the status and the `Content-Type` and `Content-Encoding`
    /// values.
    pub fn read(status: u16, content_type: Option<&str>, content_encoding: Option<&str>) -> Head {
        Head {
            status,
            media: content_type.map_or(Media::Other, Media::of),
            encoding: Encoding::of(content_encoding),
        }
    }
}

/// A response's media type, as far as judging goes (parameters and case
/// ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    /// `text/event-stream`.
    EventStream,
    /// `application/json` or any `+json` type.
    Json,
    /// `application/grpc` (or `+proto`): length-prefixed messages, gzip
    /// ones among them when the head says `grpc-encoding: gzip`.
    Grpc { gzip: bool },
    /// Anything else, or none.
    Other,
}

impl Media {
    /// Reads a `Content-Type` value.
    pub fn of(content_type: &str) -> Media {
        let m = media_type(content_type);
        if m.eq_ignore_ascii_case("text/event-stream") {
            Media::EventStream
        } else if is_json(m) {
            Media::Json
        } else if crate::a2a::grpc::is_grpc(m) {
            Media::Grpc { gzip: false }
        } else {
            Media::Other
        }
    }
}

fn media_type(content_type: &str) -> &str {
    let end = content_type.find(';').unwrap_or(content_type.len());
    content_type.get(..end).unwrap_or_default().trim()
}

/// Whether a media type (parameters cut off) is JSON: `application/json`
/// or any `+json` type.
fn is_json(media_type: &str) -> bool {
    let m = media_type.as_bytes();
    m.eq_ignore_ascii_case(b"application/json")
        || m.len()
            .checked_sub(5)
            .is_some_and(|at| m[at..].eq_ignore_ascii_case(b"+json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_read_without_case_or_parameters() {
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
            "application/problem+json",
            "application/vnd.a2a+JSON",
            "+json",
        ] {
            assert_eq!(Media::of(json), Media::Json, "{json:?}");
        }
        for other in [
            "",
            "json",
            "text/plain",
            "application/jsonx",
            "é",
            "application/json+é",
        ] {
            assert_eq!(Media::of(other), Media::Other, "{other:?}");
        }
        assert_eq!(
            Media::of("Text/Event-Stream; charset=utf-8"),
            Media::EventStream
        );
        assert_eq!(Media::of("text/event-streams"), Media::Other);
        assert_eq!(Media::of("application/grpc"), Media::Grpc { gzip: false });
        assert_eq!(
            Media::of("Application/GRPC+proto"),
            Media::Grpc { gzip: false }
        );
        assert_eq!(Media::of("application/grpc-web"), Media::Other);
        let head = |ct| Head::read(200, ct, None).media;
        assert_eq!(head(Some(" text/event-stream ;x")), Media::EventStream);
        assert_eq!(head(Some("application/a2a+json")), Media::Json);
        assert_eq!(head(Some("text/html")), Media::Other);
        assert_eq!(head(None), Media::Other);
        assert_eq!(media_type("a/b ; c"), "a/b");
        assert_eq!(media_type(";"), "");
    }
}
