//! The Coverage page: what the traffic in the proxy's recording exercised against the
//! documents (`licensing-coverage`), read at every request; or, with nothing recorded,
//! how to start a recording.

use licensing_coverage::{Catalogue, Exchange, Report};
use licensing_sandbox_client::types::RecordingStatus;
use maud::{Markup, PreEscaped, html};

/// What the page reads: the recording's exchanges and its state. (The recording lives
/// in the forwarding layer, which hands itself to the console as this.)
pub(crate) trait Recorded: Send + Sync {
    /// The exchanges recorded so far (or by the last recording), in order, each named
    /// by its index in the recording's HAR (`recording#3`).
    fn exchanges(&self) -> Vec<Exchange>;
    fn status(&self) -> RecordingStatus;
}

/// What the page shows for `recorded`, on a proxy reached at `origin`.
pub(crate) fn render(
    catalogue: Result<&Catalogue, &str>,
    recorded: &dyn Recorded,
    origin: &str,
) -> Markup {
    let status = recorded.status();
    let start = html! {
        pre { "curl -X POST " (origin) "/__sandbox/v1/recording" }
    };
    let exchanges = recorded.exchanges();
    if exchanges.is_empty() {
        return html! {
            p #recording-status {
                @if status.recording { "The proxy is recording; nothing has been recorded yet." }
                @else { "The proxy is not recording: this page reports on its recording." }
            }
            @if !status.recording {
                p { "Start one when the proxy starts (" code { "--record session.har" } ", written when it stops), or now:" }
                (start)
            }
            p { "Then send traffic through the proxy and come back: every operation, documented code, enum value and optional field it exercised, and the requests applied twice." }
        };
    }
    let catalogue = match catalogue {
        Ok(catalogue) => catalogue,
        Err(e) => return html! { p.error role="alert" { "The documents could not be read: " (e) } },
    };
    let report = Report::new(catalogue, &exchanges);
    html! {
        p #recording-status {
            @if status.recording { "Recording: " } @else { "The last recording (stopped): " }
            (status.entries) " exchanges kept"
            @if status.dropped > 0 { ", " (status.dropped) " dropped (at most " (status.max_entries) " kept)" }
            @if !status.operations.is_empty() { ", only of " (status.operations.join(", ")) }
            ". Sources name exchanges by their index in the recording's HAR ("
            code { "GET /__sandbox/v1/recording/har" } "); "
            code { "licensing-proxy coverage session.har" } " writes the same report as markdown, JSON or JUnit XML."
        }
        (PreEscaped(licensing_coverage::html::html(&report, &|_| None)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Fake(bool, Vec<Exchange>);

    impl Recorded for Fake {
        fn exchanges(&self) -> Vec<Exchange> {
            self.1.clone()
        }
        fn status(&self) -> RecordingStatus {
            RecordingStatus {
                recording: self.0,
                entries: self.1.len() as i64,
                dropped: 0,
                max_entries: 10,
                operations: Vec::new(),
                outcomes: Vec::new(),
            }
        }
    }

    #[test]
    fn without_a_recording_it_says_how_to_start_one() {
        let catalogue = Catalogue::documents().unwrap();
        let page = render(
            Ok(&catalogue),
            &Fake(false, Vec::new()),
            "http://127.0.0.1:8081",
        )
        .into_string();
        assert!(page.contains("not recording"), "{page}");
        assert!(
            page.contains("curl -X POST http://127.0.0.1:8081/__sandbox/v1/recording"),
            "{page}"
        );
        let page = render(Ok(&catalogue), &Fake(true, Vec::new()), "http://x").into_string();
        assert!(
            page.contains("nothing has been recorded yet") && !page.contains("curl"),
            "{page}"
        );
    }

    #[test]
    fn a_recording_is_reported_with_its_doubles() {
        let entry = |id: &str| {
            json!({
                "request": {"method": "POST", "url": "http://up/order/api/order/v1/batch",
                    "postData": {"text": format!("{{\"channelOrderId\":\"{id}\",\"orderList\":[]}}")}},
                "response": {"status": 200, "content": {"text": "{\"code\":0}"}},
                "_operationId": "batchOrder"
            })
        };
        let exchanges = [entry("CO-9"), entry("CO-9")]
            .iter()
            .enumerate()
            .map(|(i, e)| licensing_coverage::exchange::from_har(&format!("recording#{i}"), e))
            .collect();
        let catalogue = Catalogue::documents().unwrap();
        let page = render(Ok(&catalogue), &Fake(true, exchanges), "http://x").into_string();
        assert!(page.contains("Recording: 2 exchanges kept"), "{page}");
        assert!(page.contains("channelOrderId CO-9"), "{page}");
        assert!(
            page.contains("recording#0") && page.contains("recording#1"),
            "{page}"
        );
        assert!(page.contains("Suspected double submissions (1)"), "{page}");
    }
}
