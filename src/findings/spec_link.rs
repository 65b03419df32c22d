//! Links to the sections of the A2A specification a rule rests on: the
//! public site's spec page for the version cited, at the anchor its
//! generator (MkDocs' `toc`, default slugs) gives the section's heading,
//! e.g. `https://a2a-protocol.org/v1.0.1/specification/#312-send-streaming-message`.
//! The spec links its own sections the same way (`#332-error-handling`).

/// The spec page of the version every `rule.spec` cites.
pub const SPEC_PAGE: &str = "https://a2a-protocol.org/v1.0.1/specification/";

/// The headings (as the spec 1.0.1 writes them) of the sections a kind or
/// a probe check cites.
const HEADINGS: &[&str] = &[
    "3.1.1. Send Message",
    "3.1.2. Send Streaming Message",
    "3.1.3. Get Task",
    "3.1.5. Cancel Task",
    "3.1.6. Subscribe to Task",
    "3.1.10. Delete Push Notification Config",
    "3.2.2. SendMessageConfiguration",
    "3.2.3. Stream Response",
    "3.3.4. Capability Validation",
    "3.4.3. Multi-Turn Conversation Patterns",
    "3.5.2. Streaming Event Delivery",
    "3.6.2 Server Responsibilities",
    "4.1.3. TaskState",
    "4.2.2. TaskArtifactUpdateEvent",
    "4.3.3. Push Notification Payload",
    "4.4.1. AgentCard",
    "4.4.3. AgentCapabilities",
    "4.4.6. AgentInterface",
    "5.4. Error Code Mappings",
    "5.5. JSON Field Naming Convention",
    "5.6.1. Timestamps",
    "9.1. Protocol Requirements",
    "9.4.2. `SendStreamingMessage`",
    "9.5. Error Handling",
    "10.6. Error Handling",
    "11.6. Error Handling",
    "11.7. Streaming",
];

/// The anchor of `section` ("3.1.2") on the spec page, `None` for a
/// section not in the table.
pub fn anchor(section: &str) -> Option<String> {
    HEADINGS
        .iter()
        .find(|h| {
            h.strip_prefix(section)
                .is_some_and(|rest| rest.starts_with(". ") || rest.starts_with(' '))
        })
        .map(|h| slug(h))
}

/// The URL of the first section a `rule.spec` names ("1.0.1 §3.1.2,
/// §11.7" → the page at `#312-send-streaming-message`); `None` when it
/// names none the table knows.
pub fn help_uri(spec: &str) -> Option<String> {
    let first = spec.split('§').nth(1)?;
    let section = first
        .split(|c: char| c == ',' || c.is_whitespace())
        .next()?;
    anchor(section).map(|a| format!("{SPEC_PAGE}#{a}"))
}

/// Python-Markdown's default `toc` slug: characters other than word
/// characters, spaces and hyphens dropped, lower case, runs of spaces and
/// hyphens made one hyphen (the headings are ASCII).
fn slug(heading: &str) -> String {
    let kept: String = heading
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || c.is_whitespace())
        .collect::<String>()
        .trim()
        .to_lowercase();
    let mut out = String::with_capacity(kept.len());
    let mut in_run = false;
    for c in kept.chars() {
        if c == '-' || c.is_whitespace() {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_the_ones_the_spec_links_to() {
        // Anchors as spec 1.0.1 itself links them (`[...](#322-...)`), and
        // as the conformance kit's `spec_url`s name them.
        for (section, anchor_seen) in [
            ("3.2.2", "322-sendmessageconfiguration"),
            ("4.1.3", "413-taskstate"),
            ("4.4.1", "441-agentcard"),
            ("5.4", "54-error-code-mappings"),
            ("3.5.2", "352-streaming-event-delivery"),
            ("3.1.6", "316-subscribe-to-task"),
            ("3.6.2", "362-server-responsibilities"),
            ("9.4.2", "942-sendstreamingmessage"),
            ("5.6.1", "561-timestamps"),
            ("11.6", "116-error-handling"),
        ] {
            assert_eq!(anchor(section).as_deref(), Some(anchor_seen), "{section}");
        }
        assert_eq!(anchor("3.1"), None, "a prefix of a section is not it");
        assert_eq!(anchor("7.1"), None);
    }

    #[test]
    fn help_uri_is_the_first_section_on_the_versioned_page() {
        assert_eq!(
            help_uri("1.0.1 §3.1.2, §11.7").as_deref(),
            Some("https://a2a-protocol.org/v1.0.1/specification/#312-send-streaming-message")
        );
        assert_eq!(
            help_uri("1.0.1 §5.6.1").as_deref(),
            Some("https://a2a-protocol.org/v1.0.1/specification/#561-timestamps")
        );
        assert_eq!(help_uri("1.0.1"), None);
        assert_eq!(help_uri("1.0.1 §99.9"), None);
    }
}
