//! The page's frame: doctype, a Content-Security-Policy that allows no
//! script and no load (only the inline style), the inline CSS, and the
//! closing tags. No fonts, no CDN: the file works opened from a CI
//! artifact, offline.

use super::escape;

/// Allows the inline `<style>` and nothing else: no script runs, no
/// image, font or frame loads, whatever reached the page.
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

const CSS: &str = r#"
:root { --err:#b3261e; --warn:#8a5a00; --ok:#1e6b2f; --mute:#666; --line:#ddd; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  max-width: 1100px; padding: 1em 1.5em 3em; color: #1b1b1b; background: #fafafa; }
h1 { font-size: 1.5em; margin: .3em 0 .6em; }
h2 { font-size: 1.2em; border-bottom: 1px solid var(--line); padding-bottom: .2em; margin-top: 1.6em; }
h3 { font-size: 1em; margin: 0 0 .4em; }
h4 { font-size: .9em; margin: .6em 0 .2em; color: var(--mute); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .92em; }
pre { white-space: pre-wrap; word-break: break-all; background: #f3f3f3; padding: .5em; margin: .3em 0; }
.note { background: #fff4d6; border-left: 4px solid var(--warn); padding: .4em .7em; }
.quiet { color: var(--mute); }
.totals { display: flex; flex-wrap: wrap; gap: .6em; list-style: none; padding: 0; }
.totals li { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4em .8em; }
.totals li.sev-error { border-color: var(--err); color: var(--err); }
.totals li.ok { border-color: var(--ok); color: var(--ok); }
table { border-collapse: collapse; background: #fff; margin: .5em 0; }
th, td { border: 1px solid var(--line); padding: .25em .6em; text-align: left; vertical-align: top; }
tr.check.fail td.verdict { color: var(--err); font-weight: bold; }
tr.check.pass td.verdict { color: var(--ok); }
tr.check.na { color: var(--mute); }
.exchange { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--ok);
  border-radius: 4px; padding: .7em 1em; margin: .8em 0; }
.exchange.has-warning { border-left-color: var(--warn); }
.exchange.has-error { border-left-color: var(--err); }
.exchange .status { color: var(--mute); font-weight: normal; }
.lane { display: flex; flex-wrap: wrap; align-items: center; gap: .3em; margin: .3em 0 .6em; }
.arrow { color: var(--mute); }
.state { display: inline-block; border-radius: 10px; padding: 0 .6em; background: #e4e9f2; }
.state.st-working, .state.st-submitted { background: #dfe9fb; }
.state.st-input_required, .state.st-auth_required { background: #fff0c2; }
.state.st-completed { background: #d5f0da; }
.state.st-failed, .state.st-rejected, .state.st-canceled { background: #f9d6d3; }
.state.terminal { font-weight: bold; outline: 2px solid #999; }
.timeline { list-style: none; padding: 0 0 0 1em; margin: 0; border-left: 2px solid var(--line); }
.event { position: relative; padding: .2em 0 .2em .6em; }
.event::before { content: ""; position: absolute; left: -1.45em; top: .65em; width: .7em; height: .7em;
  border-radius: 50%; background: #9ab; }
.event.terminal::before { background: #333; }
.event.marked::before { background: var(--err); }
.idx { color: var(--mute); font-family: ui-monospace, monospace; min-width: 3em; display: inline-block; }
.kind { font-weight: 600; }
.kind.bad { color: var(--err); }
.flag { font-size: .85em; border: 1px solid var(--line); border-radius: 3px; padding: 0 .3em; color: var(--mute); }
.flag.on { color: #1b1b1b; border-color: #888; }
.flag.end { color: #1b1b1b; border-color: #333; }
.findings { list-style: none; padding: 0; margin: .3em 0 .3em 0; }
.finding { border: 1px solid var(--line); border-left: 4px solid var(--warn); background: #fffaf0;
  padding: .3em .6em; margin: .3em 0; }
.finding.sev-error { border-left-color: var(--err); background: #fff3f2; }
.finding .sev { text-transform: uppercase; font-size: .8em; font-weight: bold; }
.finding.sev-error .sev { color: var(--err); }
.finding.sev-warning .sev { color: var(--warn); }
.finding .rule { color: var(--mute); font-size: .85em; }
.finding .detail { margin: .2em 0; }
footer { color: var(--mute); margin-top: 2em; font-size: .85em; }
"#;

/// Opens the page: head, style, title.
pub(super) fn head(out: &mut String, title: &str) {
    let title = escape(title);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    out.push_str(CSP);
    out.push_str("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>");
    out.push_str(&title);
    out.push_str("</title>\n<style>");
    out.push_str(CSS);
    out.push_str("</style></head>\n<body>\n<h1>");
    out.push_str(&title);
    out.push_str("</h1>\n");
}

/// Closes the page.
pub(super) fn foot(out: &mut String) {
    out.push_str("<footer>a2a-tap ");
    out.push_str(env!("CARGO_PKG_VERSION"));
    out.push_str(
        ": findings and their spec sections are described in the catalogue (docs/findings.md).</footer>\n</body></html>\n",
    );
}
