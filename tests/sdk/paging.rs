//! `listMembers().stream()`: every item of every page, page by page.

use crate::common::*;
use futures_util::StreamExt as _;
use licensing_sdk::{Error, ErrorCode, member};
use serde_json::{Value, json};
use wiremock::{MockBuilder, MockServer, ResponseTemplate, matchers::query_param};

/// A mock for page `num` of `listMembers` of enterprise `EG-7f3a`.
fn page_mock(num: u32) -> MockBuilder {
    mock("listMembers", &["EG-7f3a"]).and(query_param("pageNum", num.to_string()))
}

/// One page of `listMembers`: the documented page with these employee ids.
fn page(num: u32, ids: &[&str], has_next: bool) -> Value {
    let template = schema_example("member", "MemberPage");
    let item = &template["list"][0];
    let list: Vec<Value> = ids
        .iter()
        .map(|id| {
            let mut item = item.clone();
            item["id"] = json!(id);
            item["globalId"] = json!(format!("MG-{id}"));
            item
        })
        .collect();
    let mut page = template.clone();
    page["pageNum"] = json!(num);
    page["size"] = json!(ids.len());
    page["list"] = json!(list);
    page["hasNextPage"] = json!(has_next);
    page["isLastPage"] = json!(!has_next);
    json!({"code": 0, "message": "success", "data": page})
}

async fn mount_page(server: &MockServer, num: u32, body: Value, expected_calls: u64) {
    page_mock(num)
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .expect(expected_calls)
        .mount(server)
        .await;
}

fn pages_requested(requests: &[wiremock::Request]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            r.url
                .query_pairs()
                .find(|(k, _)| k == "pageNum")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        })
        .collect()
}

fn ids(items: &[Result<member::types::MemberListItem, Error>]) -> Vec<String> {
    items
        .iter()
        .map(|i| i.as_ref().expect("an item").id.clone())
        .collect()
}

#[tokio::test]
async fn stream_yields_every_item_across_pages_and_stops_at_the_last() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1", "2"], true), 1).await;
    mount_page(&server, 2, page(2, &["3", "4"], true), 1).await;
    mount_page(&server, 3, page(3, &["5"], false), 1).await;
    // hasNextPage is false on page 3: page 4 is never asked for.
    mount_page(&server, 4, page(4, &["6"], false), 0).await;

    let items: Vec<_> = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .keyword("ali")
        .department_id(10)
        .page_size(2u32)
        .stream()
        .collect()
        .await;

    assert_eq!(ids(&items), ["1", "2", "3", "4", "5"]);
    let third = items[2].as_ref().unwrap();
    assert_eq!(third.global_id, "MG-3");
    let requests = received(&server).await;
    assert_eq!(pages_requested(&requests), ["1", "2", "3"]);
    for (i, request) in requests.iter().enumerate() {
        let page = (i + 1).to_string();
        // The filters and page size are carried to every page.
        assert_query(
            request,
            &[
                ("departmentId", "10"),
                ("keyword", "ali"),
                ("pageNum", page.as_str()),
                ("pageSize", "2"),
            ],
        );
        assert_member_auth(request);
    }
    assert_unique_nonces(&requests);
    server.verify().await;
}

#[tokio::test]
async fn stream_stops_on_a_page_without_a_next_page() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1", "2"], false), 1).await;
    mount_page(&server, 2, page(2, &["3"], false), 0).await;

    let items: Vec<_> = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(2u32)
        .stream()
        .collect()
        .await;

    assert_eq!(ids(&items), ["1", "2"]);
    server.verify().await;
}

#[tokio::test]
async fn stream_surfaces_a_failed_page_as_an_error_item_and_ends() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1", "2"], true), 1).await;
    page_mock(2)
        .respond_with(ResponseTemplate::new(299).set_body_json(error_example("listMembers")))
        .expect(1)
        .mount(&server)
        .await;
    mount_page(&server, 3, page(3, &["5"], false), 0).await;

    let client = member_client(&server.uri());
    let mut stream = client
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(2u32)
        .stream();

    assert_eq!(stream.next().await.unwrap().unwrap().id, "1");
    assert_eq!(stream.next().await.unwrap().unwrap().id, "2");
    match stream.next().await {
        Some(Err(Error::Api(e))) => {
            assert_eq!(e.operation, "listMembers");
            assert_eq!(e.code, ErrorCode::ParameterEmpty);
            assert_eq!(e.http_status, 299);
        }
        other => panic!("expected the page's error, got {other:?}"),
    }
    assert!(
        stream.next().await.is_none(),
        "the stream ends after an error"
    );
    server.verify().await;
}

#[tokio::test]
async fn stream_surfaces_a_transport_failure() {
    let client = member_client(&refused_url());
    let items: Vec<_> = client
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(2u32)
        .stream()
        .collect()
        .await;
    assert_eq!(items.len(), 1);
    assert!(
        matches!(
            &items[0],
            Err(Error::Transport {
                operation: "listMembers",
                ..
            })
        ),
        "{items:?}"
    );
}

/// A page answering code 500 is retried like any call; the stream goes on.
#[tokio::test]
async fn stream_pages_are_retried() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1"], true), 1).await;
    page_mock(2)
        .respond_with(ResponseTemplate::new(299).set_body_json(json!({
            "code": "500", "message": "network exception, retry"
        })))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    mount_page(&server, 2, page(2, &["2"], false), 1).await;

    let items: Vec<_> = member_client_with(&server.uri(), fast_retry(3))
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(1u32)
        .stream()
        .collect()
        .await;

    assert_eq!(ids(&items), ["1", "2"]);
    server.verify().await;
}

/// Pages are fetched only as the stream reaches them.
#[tokio::test]
async fn stream_is_lazy() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1", "2"], true), 1).await;
    mount_page(&server, 2, page(2, &["3"], false), 0).await;

    let items: Vec<_> = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(2u32)
        .stream()
        .take(2)
        .collect()
        .await;

    assert_eq!(ids(&items), ["1", "2"]);
    server.verify().await;
}

/// The stream starts at the page number set on the builder.
#[tokio::test]
async fn stream_starts_at_the_builders_page() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1"], true), 0).await;
    mount_page(&server, 2, page(2, &["2"], true), 1).await;
    mount_page(&server, 3, page(3, &["3"], false), 1).await;

    let items: Vec<_> = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_num(2u32)
        .page_size(1u32)
        .stream()
        .collect()
        .await;

    assert_eq!(ids(&items), ["2", "3"]);
    server.verify().await;
}

/// An empty page ends the stream even if the server claims there is more.
#[tokio::test]
async fn stream_ends_on_an_empty_page() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1"], true), 1).await;
    mount_page(&server, 2, page(2, &[], true), 1).await;
    mount_page(&server, 3, page(3, &["3"], false), 0).await;

    let items: Vec<_> = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .page_size(1u32)
        .stream()
        .collect()
        .await;

    assert_eq!(ids(&items), ["1"]);
    server.verify().await;
}

/// Without `page_size`, `stream()` asks for `DEFAULT_PAGE_SIZE` items a page (the
/// documents give `pageSize` no maximum) and streams every employee across the pages.
#[tokio::test]
async fn stream_without_a_page_size_uses_the_default() {
    let server = MockServer::start().await;
    mount_page(&server, 1, page(1, &["1", "2"], true), 1).await;
    mount_page(&server, 2, page(2, &["3"], false), 1).await;

    let items: Vec<_> = member_client(&server.uri())
        .list_members()
        .enterprise_global_id("EG-7f3a")
        .stream()
        .collect()
        .await;

    assert_eq!(ids(&items), ["1", "2", "3"]);
    let requests = received(&server).await;
    assert_eq!(pages_requested(&requests), ["1", "2"]);
    let default = licensing_sdk::DEFAULT_PAGE_SIZE.to_string();
    for (i, request) in requests.iter().enumerate() {
        let page = (i + 1).to_string();
        assert_query(
            request,
            &[("pageNum", page.as_str()), ("pageSize", default.as_str())],
        );
    }
    server.verify().await;
}

/// Against the simulator: every employee of the demo enterprise, no page size given.
#[tokio::test]
async fn stream_without_a_page_size_lists_every_employee_of_the_simulator() {
    let demo = licensing_sim::admin::builtin_seed("demo").unwrap();
    let sim = licensing_sim::Simulator::builder()
        .seed(demo)
        .start()
        .await
        .unwrap();
    let members = member::Client::builder(&sim.url())
        .client_token(licensing_sim::DEFAULT_CLIENT_TOKEN)
        .user_token(licensing_sim::DEFAULT_USER_TOKEN)
        .build()
        .unwrap();
    let mut listed: Vec<String> = members
        .list_members()
        .enterprise_global_id("EG-000001")
        .stream()
        .map(|m| m.expect("an employee").global_id)
        .collect()
        .await;
    listed.sort();
    let state = sim.export_state();
    let mut expected: Vec<String> = state["state"]["members"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, m)| m["enterprise"] == "EG-000001")
        .map(|(global_id, _)| global_id.clone())
        .collect();
    expected.sort();
    assert!(expected.len() >= 3, "{expected:?}");
    assert_eq!(listed, expected);
    sim.shutdown().await.unwrap();
}
