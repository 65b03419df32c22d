use super::*;

fn policy(max_bytes: usize, redact_parts: bool) -> EvidencePolicy {
    EvidencePolicy {
        max_bytes,
        redact_parts,
    }
}

#[test]
fn cuts_at_a_char_boundary() {
    let p = policy(4, false);
    assert_eq!(p.prepare("abcdef".as_bytes()), "abcd…");
    assert_eq!(p.prepare("abé".as_bytes()), "abé");
    assert_eq!(p.prepare("abcé".as_bytes()), "abc…");
    assert_eq!(p.prepare(b"abc"), "abc");
}

#[test]
fn invalid_utf8_is_shown_replaced_and_cut_like_any_text() {
    let p = policy(8, false);
    assert_eq!(p.prepare(b"ab\xffcd"), "ab\u{fffd}cd");
    // The replacement character is 3 bytes: a cut inside it keeps none.
    let short = policy(4, false);
    assert_eq!(short.prepare(b"ab\xffcd"), "ab…");
    let redacting = policy(16, true);
    assert_eq!(
        redacting.prepare(b"\xff not json at all"),
        "[redacted: 19 by…"
    );
}

#[test]
fn redacts_parts_of_both_versions() {
    let p = policy(4096, true);
    let raw = br#"{"result":{"artifactUpdate":{"artifact":{"artifactId":"a","parts":[{"text":"secret"},{"data":{"k":1}},{"raw":"AAAA"},{"url":"https://x/y?sig=tok"},{"kind":"file","file":{"bytes":"QUJD","name":"n.pdf","mimeType":"application/pdf"}}]}}}}"#;
    let out = p.prepare(raw);
    for gone in ["secret", "\"k\"", "AAAA", "sig=tok", "QUJD", "n.pdf"] {
        assert!(!out.contains(gone), "{gone}: {out}");
    }
    assert!(out.contains("[redacted: 6 bytes]"), "{out}");
    assert!(out.contains("[redacted: 7 bytes]"), "{out}");
    for kept in [
        "\"artifactId\":\"a\"",
        "\"kind\":\"file\"",
        "application/pdf",
    ] {
        assert!(out.contains(kept), "{kept}: {out}");
    }
}

/// Allow-list, whatever the shape: parts as an object or a string,
/// part metadata and filenames, 0.3 proto-JSON `content`, a status
/// message, history, names; ids, states and roles stay.
#[test]
fn redacts_every_shape_of_content() {
    let p = policy(1 << 20, true);
    let raw = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
        "task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING",
            "message": {"messageId": "m-1", "role": "ROLE_AGENT", "parts": {"text": "S1"}}},
            "history": [{"messageId": "m-2", "role": "ROLE_USER", "parts": "S2",
                "metadata": {"S3": "S4"}}],
            "artifacts": [{"artifactId": "a-1", "name": "S5", "description": "S6",
                "parts": [{"text": "S7", "filename": "S8", "mediaType": "text/plain",
                    "metadata": {"k": "S9"}}]}],
            "metadata": {"kept": "outside content"}}}});
    let out = p.prepare(raw.to_string().as_bytes());
    for gone in ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9"] {
        assert!(!out.contains(gone), "{gone}: {out}");
    }
    for kept in [
        "t-1",
        "c-1",
        "TASK_STATE_WORKING",
        "m-1",
        "m-2",
        "a-1",
        "ROLE_AGENT",
        "text/plain",
        "outside content",
    ] {
        assert!(out.contains(kept), "{kept}: {out}");
    }
    // 0.3: a bare Message result and proto-JSON `content`.
    let v03 = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"S1"}]}}"#;
    let out = p.prepare(v03);
    assert!(
        !out.contains("S1") && out.contains("\"role\":\"agent\""),
        "{out}"
    );
    let proto = br#"{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_FAILED","message":{"messageId":"m","content":[{"text":"S1"}]}}}}"#;
    let out = p.prepare(proto);
    assert!(
        !out.contains("S1") && out.contains("TASK_STATE_FAILED"),
        "{out}"
    );
    // An error's message text is no Message: kept.
    let err = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#;
    assert!(p.prepare(err).contains("Task not found"));
}

#[test]
fn withholds_unparseable_data_when_redacting() {
    let p = policy(4096, true);
    assert_eq!(
        p.prepare(b"{\"parts\":[{\"text\":\"se"),
        "[redacted: 21 bytes, not JSON]"
    );
}
