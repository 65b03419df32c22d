//! The HTTP+JSON ("REST") binding's routes, matched on the path's tail so
//! tenant (`/acme/tasks/t1`) and mount (`/rest/message:send`) prefixes pass.

use http::Method;

use super::model::Operation;

/// A matched REST route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub operation: Operation,
    /// The path's task `{id}`, percent-decoded.
    pub task_id: Option<String>,
    /// The route sits directly under a `/v1` segment (the 0.3 layout).
    pub under_v1: bool,
}

/// Matches `path` (without query) for `method`; `None` when no A2A route.
pub(crate) fn route(method: &Method, path: &str) -> Option<Route> {
    use Operation::*;
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let n = segs.len();
    let at = |back: usize| n.checked_sub(back).and_then(|i| segs.get(i).copied());
    let last = at(1)?;
    let get = method == Method::GET;
    let post = method == Method::POST;
    // (operation, task id segment, how many tail segments the route has)
    let (operation, id, len) = match last {
        "message:send" if post => (SendMessage, None, 1),
        "message:stream" if post => (SendStreamingMessage, None, 1),
        "agent-card.json" | "agent.json" if get && at(2) == Some(".well-known") => {
            (GetAgentCard, None, 2)
        }
        "extendedAgentCard" if get => (GetExtendedAgentCard, None, 1),
        "card" if get && at(2) == Some("v1") => (GetExtendedAgentCard, None, 1),
        "tasks" if get => (ListTasks, None, 1),
        "pushNotificationConfigs" if at(3) == Some("tasks") => {
            let op = match method {
                m if m == Method::POST => CreateTaskPushNotificationConfig,
                m if m == Method::GET => ListTaskPushNotificationConfigs,
                _ => return None,
            };
            (op, at(2), 3)
        }
        _ if at(2) == Some("pushNotificationConfigs") && at(4) == Some("tasks") => {
            let op = match method {
                m if m == Method::GET => GetTaskPushNotificationConfig,
                m if m == Method::DELETE => DeleteTaskPushNotificationConfig,
                _ => return None,
            };
            (op, at(3), 4)
        }
        _ if at(2) == Some("tasks") => {
            if let Some(id) = last.strip_suffix(":cancel") {
                if !post {
                    return None;
                }
                (CancelTask, Some(id), 2)
            } else if let Some(id) = last.strip_suffix(":subscribe") {
                if !(get || post) {
                    return None;
                }
                (SubscribeToTask, Some(id), 2)
            } else if get {
                (GetTask, Some(last), 2)
            } else {
                return None;
            }
        }
        _ => return None,
    };
    if id == Some("") {
        return None;
    }
    Some(Route {
        operation,
        task_id: id.map(percent_decode),
        under_v1: at(len + 1) == Some("v1"),
    })
}

/// `%XX` → byte; the raw text when the result is not UTF-8 or an escape is
/// broken.
pub(crate) fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(v) => {
                    out.push(v);
                    i += 3;
                    continue;
                }
                None => return s.to_owned(),
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%3Ab"), "a:b");
        assert_eq!(percent_decode("plain"), "plain");
        assert_eq!(percent_decode("bad%zz"), "bad%zz");
        assert_eq!(percent_decode("cut%4"), "cut%4");
        assert_eq!(percent_decode("%ff"), "%ff");
    }

    #[test]
    fn empty_and_odd_paths() {
        for p in ["", "/", "//", "/tasks/:cancel", "/tasks/"] {
            assert_eq!(route(&Method::POST, p), None, "{p}");
        }
        assert!(route(&Method::PUT, "/tasks/t1").is_none());
        assert!(route(&Method::POST, "/.well-known/agent-card.json").is_none());
        assert!(route(&Method::GET, "/agent-card.json").is_none());
        let card = route(&Method::GET, "/t/.well-known/agent.json").unwrap();
        assert_eq!(card.operation, Operation::GetAgentCard);
    }
}
