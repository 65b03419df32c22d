//! The one metric matcher: a Prometheus text scrape read as whole series
//! (name, exact label set, value), never matched by substring, so
//! `a2a_requests_total` never answers for `a2a_requests_total_x` nor
//! `kind="exit"` for `other_kind="exit"`.

use std::collections::BTreeMap;

/// One sample line of a scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Every sample of a scrape (comments and unreadable lines left out).
pub fn series(text: &str) -> Vec<Series> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(parse_line)
        .collect()
}

/// The value of the series `name` whose label set is exactly `labels` (in
/// any order): `metric(&text, "a2a_streams_active", &[("upstream", NAME)])`.
pub fn metric(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want = label_set(labels);
    series(text)
        .into_iter()
        .find(|s| s.name == name && s.labels == want)
        .map(|s| s.value)
}

/// The sum over every series `name` whose labels include each of `labels`
/// (whole names, whole values), or `None` when none does: what a test
/// means by "how many, whatever the other labels".
pub fn total(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let matching: Vec<f64> = series(text)
        .into_iter()
        .filter(|s| {
            s.name == name
                && labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .collect();
    (!matching.is_empty()).then(|| matching.iter().sum())
}

fn label_set(labels: &[(&str, &str)]) -> BTreeMap<String, String> {
    labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `name{k="v",...} value [timestamp]`, label values with the text
/// format's escapes (`\\`, `\"`, `\n`).
fn parse_line(line: &str) -> Option<Series> {
    let line = line.trim();
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(inner) = rest.strip_prefix('{') {
        rest = inner;
        loop {
            rest = rest.trim_start_matches([',', ' ']);
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, after) = rest.split_once("=\"")?;
            let mut value = String::new();
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next()? {
                    (i, '"') => break i,
                    (_, '\\') => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        c => value.push(c),
                    },
                    (_, c) => value.push(c),
                }
            };
            labels.insert(key.trim().to_string(), value);
            rest = &after[end + 1..];
        }
    }
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some(Series {
        name: name.to_string(),
        labels,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# HELP a2a_violations_total x\n\
        a2a_violations_total{upstream=\"a\",kind=\"exit\",severity=\"error\"} 2\n\
        a2a_violations_total{upstream=\"a\",kind=\"other\",subkind=\"exit\",severity=\"error\"} 5\n\
        a2a_violations_total_extra{upstream=\"a\",kind=\"exit\",severity=\"error\"} 7\n\
        a2a_weird{upstream=\"a,\\\"b\\\"}\"} 3\n\
        a2a_plain 4 1700000000\n";

    #[test]
    fn a_series_is_its_name_and_its_whole_label_set() {
        let exit = [("upstream", "a"), ("kind", "exit"), ("severity", "error")];
        assert_eq!(metric(TEXT, "a2a_violations_total", &exit), Some(2.0));
        // A subset of the labels is not the series.
        assert_eq!(
            metric(TEXT, "a2a_violations_total", &[("kind", "exit")]),
            None
        );
        assert_eq!(
            metric(TEXT, "a2a_weird", &[("upstream", "a,\"b\"}")]),
            Some(3.0)
        );
        assert_eq!(metric(TEXT, "a2a_plain", &[]), Some(4.0));
        assert_eq!(metric(TEXT, "a2a_plain_x", &[]), None);
    }

    #[test]
    fn a_total_sums_whole_label_names_and_values_only() {
        // `subkind="exit"` is not `kind="exit"`.
        assert_eq!(
            total(TEXT, "a2a_violations_total", &[("kind", "exit")]),
            Some(2.0)
        );
        assert_eq!(
            total(TEXT, "a2a_violations_total", &[("upstream", "a")]),
            Some(7.0)
        );
        assert_eq!(
            total(TEXT, "a2a_violations_total", &[("kind", "xit")]),
            None
        );
    }
}
