//! JUnit XML (the Ant/Jenkins schema CI systems read): suites of test
//! cases, each passed, failed (message and text), errored or skipped.
//! Written by hand: a few elements and attribute escaping need no crate.

use std::fmt::Write as _;

/// How one test case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseOutcome {
    Passed,
    /// A `<failure>`: the thing tested is wrong.
    Failed {
        message: String,
        text: String,
    },
    /// An `<error>`: the test could not be run (e.g. a file unreadable).
    Errored {
        message: String,
    },
    /// A `<skipped>`: not applicable, with the reason.
    Skipped {
        message: String,
    },
}

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub name: String,
    pub classname: String,
    pub outcome: CaseOutcome,
    /// Written as `<system-out>` when not empty (e.g. warnings).
    pub out: String,
}

/// One `<testsuite>`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
    /// Seconds, written as the suite's `time`.
    pub seconds: f64,
}

/// The whole document: `<testsuites>` holding `suites`.
pub fn write(name: &str, suites: &[Suite]) -> String {
    let count = |f: fn(&CaseOutcome) -> bool| {
        suites
            .iter()
            .flat_map(|s| &s.cases)
            .filter(|c| f(&c.outcome))
            .count()
    };
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures = count(|o| matches!(o, CaseOutcome::Failed { .. }));
    let errors = count(|o| matches!(o, CaseOutcome::Errored { .. }));
    let skipped = count(|o| matches!(o, CaseOutcome::Skipped { .. }));
    let seconds: f64 = suites.iter().map(|s| s.seconds).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">",
        escape(name)
    );
    for suite in suites {
        write_suite(&mut out, suite);
    }
    out.push_str("</testsuites>\n");
    out
}

fn write_suite(out: &mut String, suite: &Suite) {
    let n = |f: fn(&CaseOutcome) -> bool| suite.cases.iter().filter(|c| f(&c.outcome)).count();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        escape(&suite.name),
        suite.cases.len(),
        n(|o| matches!(o, CaseOutcome::Failed { .. })),
        n(|o| matches!(o, CaseOutcome::Errored { .. })),
        n(|o| matches!(o, CaseOutcome::Skipped { .. })),
        suite.seconds,
    );
    for case in &suite.cases {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\"",
            escape(&case.name),
            escape(&case.classname)
        );
        if case.outcome == CaseOutcome::Passed && case.out.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        match &case.outcome {
            CaseOutcome::Passed => {}
            CaseOutcome::Failed { message, text } => {
                let _ = writeln!(
                    out,
                    "      <failure message=\"{}\" type=\"failure\">{}</failure>",
                    escape(message),
                    escape(text)
                );
            }
            CaseOutcome::Errored { message } => {
                let _ = writeln!(
                    out,
                    "      <error message=\"{}\" type=\"error\"/>",
                    escape(message)
                );
            }
            CaseOutcome::Skipped { message } => {
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", escape(message));
            }
        }
        if !case.out.is_empty() {
            let _ = writeln!(out, "      <system-out>{}</system-out>", escape(&case.out));
        }
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n");
}

/// Escapes text for XML attributes and content; characters XML 1.0 does
/// not allow (most controls) become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(
            escape("a<b>&\"c'\u{1}"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}"
        );
    }

    #[test]
    fn counts_and_outcomes() {
        let suite = Suite {
            name: "s".into(),
            seconds: 0.5,
            cases: vec![
                Case {
                    name: "ok".into(),
                    classname: "c".into(),
                    outcome: CaseOutcome::Passed,
                    out: String::new(),
                },
                Case {
                    name: "bad".into(),
                    classname: "c".into(),
                    outcome: CaseOutcome::Failed {
                        message: "m".into(),
                        text: "t".into(),
                    },
                    out: String::new(),
                },
                Case {
                    name: "na".into(),
                    classname: "c".into(),
                    outcome: CaseOutcome::Skipped {
                        message: "why".into(),
                    },
                    out: String::new(),
                },
            ],
        };
        let xml = write("all", &[suite]);
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("<failure message=\"m\" type=\"failure\">t</failure>"));
        assert!(xml.contains("<skipped message=\"why\"/>"));
    }
}
