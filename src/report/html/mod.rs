//! `--format html`: one self-contained page (inline CSS, no script, no
//! network: a Content-Security-Policy forbids any load) with a summary,
//! then each exchange's timeline of events with its findings marked on
//! the event they rest on, and the probe's checks. Every agent string is
//! escaped (`escape`), so nothing an agent sent runs or renders as markup.

mod exchange;
mod page;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::audit::Record;
use super::timeline::Lane;

/// What the page shows.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// `a2a-tap check`, `a2a-tap probe URL`.
    pub title: String,
    /// A recording (check) or the probe's run: its exchanges and findings.
    pub sources: Vec<Source>,
    /// The probe's checks (none for check).
    pub checks: Vec<CheckRow>,
    /// Sentences shown above everything (a file not read, a probe in
    /// which no check ran).
    pub notes: Vec<String>,
}

/// One recording, or the probe's run.
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub name: String,
    pub lanes: Vec<Lane>,
    pub records: Vec<Record>,
    /// Exchanges not judged (the recording did not keep their answer).
    pub unrecorded: Vec<String>,
}

/// One probe check.
#[derive(Debug, Clone)]
pub struct CheckRow {
    /// The card, or the interface it ran on.
    pub scope: String,
    pub id: &'static str,
    /// `pass`, `fail` or `n/a`.
    pub verdict: &'static str,
    pub reason: String,
    /// The numbers (`#n`) of the exchanges it rests on.
    pub exchanges: Vec<usize>,
}

impl Page {
    /// The whole page.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(16 << 10);
        page::head(&mut out, &self.title);
        for note in &self.notes {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
        }
        self.summary(&mut out);
        if !self.checks.is_empty() {
            self.checks_table(&mut out);
        }
        for (n, source) in self.sources.iter().enumerate() {
            exchange::source(&mut out, n, source);
        }
        page::foot(&mut out);
        out
    }

    fn records(&self) -> impl Iterator<Item = &Record> {
        self.sources.iter().flat_map(|s| &s.records)
    }

    /// Exchanges, findings by kind and severity, checks by verdict.
    fn summary(&self, out: &mut String) {
        let exchanges: usize = self.sources.iter().map(|s| s.lanes.len()).sum();
        let errors = self.records().filter(|r| r.severity == "error").count();
        let findings = self.records().count();
        let _ = write!(
            out,
            "<section id=\"summary\"><h2>Summary</h2><ul class=\"totals\">\
             <li><b>{exchanges}</b> exchange(s) judged</li>\
             <li><b>{findings}</b> finding(s)</li>\
             <li class=\"{}\"><b>{errors}</b> at error severity</li>",
            if errors > 0 { "sev-error" } else { "ok" }
        );
        if !self.checks.is_empty() {
            let count = |v: &str| self.checks.iter().filter(|c| c.verdict == v).count();
            let _ = write!(
                out,
                "<li><b>{}</b> check(s) passed</li><li class=\"{}\"><b>{}</b> failed</li>\
                 <li><b>{}</b> not applicable</li>",
                count("pass"),
                if count("fail") > 0 { "sev-error" } else { "ok" },
                count("fail"),
                count("n/a"),
            );
        }
        out.push_str("</ul>");
        // kind → (errors, warnings)
        let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for r in self.records() {
            let e = by_kind.entry(r.kind).or_default();
            if r.severity == "error" {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
        }
        if !by_kind.is_empty() {
            out.push_str(
                "<table class=\"kinds\"><thead><tr><th>kind</th><th>error</th>\
                 <th>warning</th></tr></thead><tbody>",
            );
            for (kind, (e, w)) in by_kind {
                let _ = write!(
                    out,
                    "<tr><td><code>{}</code></td><td>{e}</td><td>{w}</td></tr>",
                    escape(kind)
                );
            }
            out.push_str("</tbody></table>");
        }
        out.push_str("</section>\n");
    }

    /// The probe's checks with their reasons.
    fn checks_table(&self, out: &mut String) {
        out.push_str(
            "<section id=\"checks\"><h2>Checks</h2><table class=\"checks\"><thead><tr>\
             <th>on</th><th>check</th><th>verdict</th><th>reason</th><th>exchanges</th>\
             </tr></thead><tbody>\n",
        );
        for c in &self.checks {
            let class = match c.verdict {
                "pass" => "pass",
                "fail" => "fail",
                _ => "na",
            };
            let links: Vec<String> = c
                .exchanges
                .iter()
                .map(|n| {
                    format!(
                        "<a href=\"#{}\">#{n}</a>",
                        exchange::anchor(0, &format!("#{n}"))
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr class=\"check {class}\" data-check=\"{}\"><td>{}</td><td><code>{}</code></td>\
                 <td class=\"verdict\">{}</td><td>{}</td><td>{}</td></tr>",
                escape(c.id),
                escape(&c.scope),
                escape(c.id),
                escape(c.verdict),
                escape(&c.reason),
                links.join(" ")
            );
        }
        out.push_str("</tbody></table></section>\n");
    }
}

/// `text` safe as HTML text or a double-quoted attribute value: the five
/// markup characters as references, control characters (other than tab
/// and line ends) as U+FFFD, which HTML does not allow raw.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_leaves_no_markup() {
        let hostile = "<img src=x onerror=\"document.title='pwned'\">&'\u{0}";
        let e = escape(hostile);
        assert!(!e.contains('<') && !e.contains('>') && !e.contains('"'));
        assert!(!e.contains('\''));
        assert!(!e.contains('\u{0}'));
        assert!(e.starts_with("&lt;img"));
    }

    #[test]
    fn an_empty_page_is_whole() {
        let html = Page::default().render();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.trim_end().ends_with("</html>"));
        assert!(html.contains("Content-Security-Policy"));
    }
}
