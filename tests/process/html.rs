//! `check --format html` and `probe --format html` in a real browser:
//! the page the binary wrote, loaded from a file in headless chromium
//! (Debian's, from scripts/setup-chromium.sh), logs nothing on its
//! console, marks each finding on the event it rests on, and shows a
//! hostile agent string as text (nothing it would inject exists; the
//! script in it did not run, or the title would have changed).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Chromium's path. The browser tests are `#[ignore]`d in plain `cargo
/// test` and run by scripts/test.sh (`--include-ignored`), which installs
/// chromium first: there, a missing chromium fails the test, never skips.
pub(super) fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("chromium"))
                .find(|p| p.is_file())
        })
        .expect("chromium is not on PATH: run scripts/setup-chromium.sh (scripts/test.sh does)")
}

/// A page as headless chromium saw it: the DOM after load, and the
/// console messages it logged (any level).
pub(super) struct Rendered {
    pub dom: String,
    pub console: Vec<String>,
}

/// Loads `page` in headless chromium (its own profile, no network
/// needed) and dumps the DOM; the whole run bounded to a minute.
pub(super) fn render(chromium: &Path, page: &Path) -> Rendered {
    let profile = tempfile::tempdir().expect("profile dir");
    let child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    // Waited on a thread, so that the wait is bounded: past the minute
    // chromium is killed by its pid and the test fails.
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("chromium's output"),
        Err(_) => {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            panic!("chromium did not finish within a minute");
        }
    };
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = String::from_utf8_lossy(&out.stderr);
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Rendered { dom, console }
}

/// The element (serialized as chromium dumps it) that opens at `start`:
/// up to its matching close tag.
fn element_at<'a>(dom: &'a str, start: usize, tag: &str) -> &'a str {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut depth = 0usize;
    let mut at = start;
    loop {
        let next_open = dom[at..].find(&open).map(|i| at + i);
        let next_close = dom[at..].find(&close).map(|i| at + i).expect("closed");
        match next_open {
            Some(o) if o < next_close => {
                depth += 1;
                at = o + open.len();
            }
            _ => {
                depth -= 1;
                at = next_close + close.len();
                if depth == 0 {
                    return &dom[start..at];
                }
            }
        }
    }
}

/// The event `<li>` of `index` in the exchange whose `data-request-id`
/// is `request` (the first exchange when `None`).
pub(super) fn event<'a>(dom: &'a str, request: Option<&str>, index: u64) -> &'a str {
    let from = request.map_or(0, |r| {
        dom.find(&format!("data-request-id=\"{r}\""))
            .unwrap_or_else(|| panic!("no exchange {r}"))
    });
    let needle = format!("data-event-index=\"{index}\"><span class=\"idx\">");
    let at = from
        + dom[from..]
            .find(&needle)
            .unwrap_or_else(|| panic!("no event {index}"));
    let start = dom[..at].rfind("<li").expect("event element");
    element_at(dom, start, "li")
}

/// The sample recording: a stream whose artifact id and last state are
/// agent markup that would change the page's title if it ran. Findings:
/// `append_to_unknown_artifact` on event 2 (appending to an artifact
/// never opened), `unknown_state` on event 5.
fn hostile_recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/hostile.jsonrpc.sse")
}

fn check(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_a2a-tap"))
        .arg("check")
        .args(args)
        .arg(file)
        .output()
        .expect("run a2a-tap check")
}

/// Asserts what a browser shows of a page with the sample's markup in it: no
/// console message, the title unchanged, no element the string would
/// have made, the string itself shown as text.
pub(super) fn assert_inert(page: &Rendered, title: &str) {
    assert!(page.console.is_empty(), "console: {:#?}", page.console);
    assert!(
        page.dom.contains(&format!("<title>{title}</title>")),
        "title changed: {}",
        &page.dom[..page.dom.len().min(600)]
    );
    for injected in ["<img", "<script"] {
        assert!(!page.dom.contains(injected), "{injected} in the DOM");
    }
    assert!(
        page.dom.contains("&lt;img src=x onerror="),
        "hostile text not shown"
    );
}

#[test]
#[ignore = "needs chromium: run scripts/test.sh"]
fn check_html_report_renders_in_chromium_with_findings_on_their_events() {
    let dir = tempfile::tempdir().expect("temp dir");
    let recording = hostile_recording();
    let text = check(&[], &recording);
    let out = check(&["--format", "html"], &recording);
    // Exit codes are the other formats': an error finding is 1.
    assert_eq!(text.status.code(), Some(1));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).expect("utf-8 page");
    // Self-contained: nothing is fetched from anywhere.
    for external in ["http://", "https://", "src=\"", "<link", "@import", "url("] {
        assert!(!html.contains(external), "{external} in the page");
    }
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).expect("write page");

    let chromium = chromium();
    // The console capture works: a page that logs is seen logging.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><title>c</title><script>console.error('seen')</script>",
    )
    .expect("write control");
    let seen = render(&chromium, &control);
    assert!(
        seen.console.iter().any(|l| l.contains("seen")),
        "console not captured"
    );

    let shown = render(&chromium, &page);
    assert_inert(&shown, "a2a-tap check");
    let label = recording.display().to_string();
    // Each finding sits inside the event it rests on, and no other.
    let two = event(&shown.dom, Some(&label), 2);
    assert!(
        two.contains("data-kind=\"append_to_unknown_artifact\""),
        "{two}"
    );
    assert!(
        two.contains("append=true") && two.contains("lastChunk=false"),
        "{two}"
    );
    let five = event(&shown.dom, Some(&label), 5);
    assert!(five.contains("data-kind=\"unknown_state\""), "{five}");
    assert!(!five.contains("append_to_unknown_artifact"), "{five}");
    for quiet in [0, 1, 3, 4] {
        let e = event(&shown.dom, Some(&label), quiet);
        assert!(!e.contains("class=\"finding"), "event {quiet}: {e}");
    }
    let three = event(&shown.dom, Some(&label), 3);
    assert!(three.contains("lastChunk=true"), "{three}");
    // The terminal event is marked; the lane shows the states in order.
    assert!(event(&shown.dom, Some(&label), 4).contains("class=\"event terminal"));
    let lane = shown.dom.find("class=\"lane\"").expect("state lane");
    let order: Vec<usize> = ["submitted", "working", "completed"]
        .iter()
        .map(|s| {
            lane + shown.dom[lane..]
                .find(&format!(">{s}<"))
                .expect("state in lane")
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
}
