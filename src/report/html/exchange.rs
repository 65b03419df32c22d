//! One recording (or the probe's run) on the page: each exchange's
//! request, its task's states as a lane, its events in order with each
//! finding marked on the event it rests on (`event_index`), and the
//! findings that rest on no drawn event.

use std::fmt::Write as _;

use super::{escape, Source};
use crate::report::audit::Record;
use crate::report::timeline::{Lane, Seen, What};

/// The element id of an exchange: its source's number and its label in
/// hex (a label is a file name or `#n`, any text).
pub(super) fn anchor(source: usize, label: &str) -> String {
    let mut id = format!("x{source}-");
    for b in label.bytes() {
        let _ = write!(id, "{b:02x}");
    }
    id
}

/// A recording: its exchanges, then the findings tied to none of them.
pub(super) fn source(out: &mut String, n: usize, source: &Source) {
    let _ = write!(
        out,
        "<section class=\"source\" id=\"s{n}\"><h2>{}</h2>",
        escape(&source.name)
    );
    if source.lanes.is_empty() && source.records.is_empty() {
        out.push_str("<p class=\"quiet\">no exchange judged</p>");
    }
    for lane in &source.lanes {
        let records: Vec<&Record> = source
            .records
            .iter()
            .filter(|r| r.request_id.as_deref() == Some(lane.label.as_str()))
            .collect();
        exchange(out, n, lane, &records);
    }
    let loose: Vec<&Record> = source
        .records
        .iter()
        .filter(|r| {
            !source
                .lanes
                .iter()
                .any(|l| r.request_id.as_deref() == Some(l.label.as_str()))
        })
        .collect();
    if !loose.is_empty() {
        out.push_str("<div class=\"loose\"><h3>Findings on tasks, not on one exchange</h3>");
        findings(out, &loose);
        out.push_str("</div>");
    }
    if !source.unrecorded.is_empty() {
        let _ = write!(
            out,
            "<p class=\"note\">{} answer(s) not judged: the recording did not keep their body ({})</p>",
            source.unrecorded.len(),
            escape(&source.unrecorded.join(", "))
        );
    }
    out.push_str("</section>\n");
}

/// One exchange: request, state lane, events, findings.
fn exchange(out: &mut String, source: usize, lane: &Lane, records: &[&Record]) {
    let class = if records.iter().any(|r| r.severity == "error") {
        " has-error"
    } else if records.is_empty() {
        ""
    } else {
        " has-warning"
    };
    let _ = write!(
        out,
        "<article class=\"exchange{}\" id=\"{}\" data-request-id=\"{}\">\
         <h3><span class=\"label\">{}</span> <code>{}</code> \
         <span class=\"status\">{} {}</span></h3>",
        class,
        anchor(source, &lane.label),
        escape(&lane.label),
        escape(&lane.label),
        escape(&lane.request),
        lane.status,
        escape(lane.content_type.as_deref().unwrap_or("(no content type)")),
    );
    states(out, lane);
    let drawn = |r: &&&Record| {
        r.event_index
            .is_some_and(|i| lane.timeline.events.iter().any(|e| e.index == Some(i)))
    };
    out.push_str("<ol class=\"timeline\">");
    for e in &lane.timeline.events {
        let on: Vec<&Record> = records
            .iter()
            .copied()
            .filter(|r| e.index.is_some() && r.event_index == e.index)
            .collect();
        event(out, e, &on);
    }
    out.push_str("</ol>");
    let t = &lane.timeline;
    if t.dropped > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{} more event(s) read, not drawn (over {} per exchange)</p>",
            t.dropped,
            crate::report::timeline::MAX_EVENTS
        );
    }
    if t.gaps > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">{} event(s) not read: over an [analysis] limit</p>",
            t.gaps
        );
    }
    let rest: Vec<&Record> = records.iter().filter(|r| !drawn(r)).copied().collect();
    if !rest.is_empty() {
        out.push_str("<div class=\"whole\"><h4>On the exchange as a whole</h4>");
        findings(out, &rest);
        out.push_str("</div>");
    }
    out.push_str("</article>\n");
}

/// The task's states in order, as a lane of chips; the terminal one
/// marked.
fn states(out: &mut String, lane: &Lane) {
    let states: Vec<(&str, bool)> = lane
        .timeline
        .events
        .iter()
        .filter_map(|e| match &e.what {
            What::State {
                state, terminal, ..
            } => Some((state.as_str(), *terminal)),
            _ => None,
        })
        .collect();
    if states.is_empty() {
        return;
    }
    out.push_str("<div class=\"lane\" title=\"the task's states, in order\">");
    for (i, (state, terminal)) in states.iter().enumerate() {
        if i > 0 {
            out.push_str("<span class=\"arrow\">→</span>");
        }
        let _ = write!(
            out,
            "<span class=\"state st-{}{}\">{}</span>",
            class_word(state),
            if *terminal { " terminal" } else { "" },
            escape(state)
        );
    }
    out.push_str("</div>");
}

/// One event, with the findings that rest on it.
fn event(out: &mut String, e: &Seen, on: &[&Record]) {
    let index = e.index.map_or_else(|| "body".to_owned(), |i| i.to_string());
    let _ = write!(
        out,
        "<li class=\"event{}{}\" data-event-index=\"{index}\"><span class=\"idx\">{}</span> ",
        if e.what.ends() { " terminal" } else { "" },
        if on.is_empty() { "" } else { " marked" },
        if e.index.is_some() {
            format!("#{index}")
        } else {
            "body".into()
        },
    );
    match &e.what {
        What::State {
            event,
            task,
            state,
            terminal,
            final_flag,
        } => {
            let _ = write!(
                out,
                "<span class=\"kind\">{event}</span> <span class=\"state st-{}\">{}</span> \
                 task <code>{}</code>",
                class_word(state),
                escape(state),
                escape(task)
            );
            if let Some(f) = final_flag {
                let _ = write!(out, " <span class=\"flag\">final={f}</span>");
            }
            if *terminal {
                out.push_str(" <span class=\"flag end\">terminal</span>");
            }
        }
        What::Artifact {
            task,
            artifact,
            append,
            last_chunk,
        } => {
            let _ = write!(
                out,
                "<span class=\"kind\">artifact_update</span> artifact <code>{}</code> \
                 task <code>{}</code> <span class=\"flag{}\">append={append}</span> \
                 <span class=\"flag{}\">lastChunk={last_chunk}</span>",
                escape(artifact),
                escape(task),
                if *append { " on" } else { "" },
                if *last_chunk { " on" } else { "" },
            );
        }
        What::Message { task } => {
            out.push_str("<span class=\"kind\">message</span>");
            if let Some(t) = task {
                let _ = write!(out, " task <code>{}</code>", escape(t));
            }
        }
        What::TaskList { tasks } => {
            let _ = write!(out, "<span class=\"kind\">task list</span> {tasks} task(s)");
        }
        What::Error { code } => {
            let _ = write!(
                out,
                "<span class=\"kind\">error</span> code <code>{code}</code> \
                 <span class=\"flag end\">ends the answer</span>"
            );
        }
        What::Malformed { why } => {
            let _ = write!(
                out,
                "<span class=\"kind bad\">malformed</span> {}",
                escape(why)
            );
        }
    }
    if !on.is_empty() {
        findings(out, on);
    }
    out.push_str("</li>");
}

/// Findings as marked boxes: severity, kind, task, detail, evidence.
fn findings(out: &mut String, records: &[&Record]) {
    out.push_str("<ul class=\"findings\">");
    for r in records {
        let _ = write!(
            out,
            "<li class=\"finding sev-{}\" data-kind=\"{}\" data-event-index=\"{}\">\
             <span class=\"sev\">{}</span> <code class=\"k\">{}</code>",
            class_word(r.severity),
            escape(r.kind),
            r.event_index.map(|i| i.to_string()).unwrap_or_default(),
            escape(r.severity),
            escape(r.kind),
        );
        if let Some(task) = &r.task_id {
            let _ = write!(out, " task <code>{}</code>", escape(task));
        }
        if r.occurrences > 1 {
            let _ = write!(out, " <span class=\"flag\">×{}</span>", r.occurrences);
        }
        if let Some(spec) = r.rule.spec {
            let _ = write!(out, " <span class=\"rule\">{}</span>", escape(spec));
        }
        let _ = write!(out, "<p class=\"detail\">{}</p>", escape(&r.detail));
        if let Some(ev) = &r.evidence {
            let _ = write!(
                out,
                "<details><summary>evidence</summary><pre>{}</pre></details>",
                escape(ev)
            );
        }
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}

/// A word safe in a class name: ASCII letters, digits and `_`, the rest
/// dropped (a state no version defines is agent text).
fn class_word(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(32)
        .collect()
}
