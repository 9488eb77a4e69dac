//! The admin console over HTTP, without a browser, as the simulator's and the proxy's
//! console tests ask for it (both serve the console of `licensing-host`): a request with
//! its headers and body, redirects not followed, the answer read whole; signing in; the
//! anti-forgery token a signed-in page carries.

use std::{
    net::{IpAddr, Ipv4Addr},
    sync::atomic::{AtomicU32, Ordering},
};

use reqwest::{Client, Method, StatusCode, header};

/// An answer, read whole.
pub struct Answer {
    pub status: StatusCode,
    pub headers: header::HeaderMap,
    pub body: String,
}

impl Answer {
    /// The value of the header `name` as text (empty when it is absent or not text).
    pub fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

/// The header of a sign-in form's body.
pub const FORM: (&str, &str) = ("content-type", "application/x-www-form-urlencoded");

/// Credentials that are not the admin token: none, a wrong bearer token, and a session
/// cookie no sign-in made.
pub fn not_the_token() -> [Vec<(&'static str, &'static str)>; 3] {
    [
        vec![],
        vec![("authorization", "Bearer wrong")],
        vec![(
            "cookie",
            "licensing_sim_session=0123456789abcdef0123456789abcdef",
        )],
    ]
}

/// A client that does not follow redirects: a sign-in's `303` and where it points are
/// what a test checks.
pub fn client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A client sending from a loopback address no other request of this process used.
fn from_a_new_address() -> Client {
    static NEXT: AtomicU32 = AtomicU32::new(2);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let ip = Ipv4Addr::new(127, 1, (n >> 8) as u8, n as u8);
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(IpAddr::V4(ip))
        .build()
        .unwrap()
}

/// `method` `base``path` with `headers` and `body`.
///
/// A wrong token is answered more slowly each time from one address: a request with a
/// token in its `authorization` header is sent from an address of its own (127.0.0.0/8 is
/// all loopback), so that a test of what is refused does not wait for the slow-down,
/// which is tested apart.
pub async fn send(
    base: &str,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    let client = if headers.iter().any(|(name, _)| *name == "authorization") {
        from_a_new_address()
    } else {
        client()
    };
    let mut request = client.request(method, format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.body(body.to_string());
    }
    let response = request.send().await.expect("the console answers");
    Answer {
        status: response.status(),
        headers: response.headers().clone(),
        body: response.text().await.unwrap(),
    }
}

/// A page, `GET` with `headers`.
pub async fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
    send(base, Method::GET, path, headers, None).await
}

/// The sign-in form sent with `token` and `headers` besides the form's own.
pub async fn sign_in_with(base: &str, token: &str, headers: &[(&str, &str)]) -> Answer {
    let headers: Vec<(&str, &str)> = [FORM].into_iter().chain(headers.iter().copied()).collect();
    let body = format!("token={token}");
    let path = "/__sandbox/sign-in";
    send(base, Method::POST, path, &headers, Some(&body)).await
}

/// Signs in with `token`, after a wrong one is refused (back to the form, no cookie): the
/// session cookie's `name=value`, checked to be `HttpOnly`, `SameSite=Strict`, for the
/// console's paths only (those under `base`'s path, a simulator tenant's `/t/{id}`), and
/// not the token.
pub async fn sign_in(base: &str, token: &str) -> String {
    let prefix = reqwest::Url::parse(base)
        .expect("a base URL")
        .path()
        .trim_end_matches('/')
        .to_string();
    let wrong = sign_in_with(base, "not-it", &[]).await;
    assert_eq!(wrong.status, StatusCode::SEE_OTHER);
    assert_eq!(
        wrong.headers[header::LOCATION],
        format!("{prefix}/__sandbox/?signin=failed").as_str()
    );
    assert!(!wrong.headers.contains_key(header::SET_COOKIE));
    let right = sign_in_with(base, token, &[]).await;
    assert_eq!(right.status, StatusCode::SEE_OTHER);
    assert_eq!(
        right.headers[header::LOCATION],
        format!("{prefix}/__sandbox/").as_str()
    );
    let cookie = right.header(header::SET_COOKIE).to_string();
    let path = format!("Path={prefix}/__sandbox;");
    for attribute in ["HttpOnly", "SameSite=Strict", path.as_str()] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(!cookie.contains(token), "the cookie is not the token");
    cookie.split(';').next().unwrap().to_string()
}

/// The session's anti-forgery token, from the `<meta>` a signed-in page carries.
#[track_caller]
pub fn csrf_of(page: &str) -> String {
    page.split(r#"<meta name="sandbox-csrf" content=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page carries the session's anti-forgery token")
        .to_string()
}

/// Signs out the session `cookie` with its anti-forgery token `csrf` (none: a forged
/// request, which is refused).
pub async fn sign_out(base: &str, cookie: &str, csrf: Option<&str>) -> Answer {
    let mut headers = vec![("cookie", cookie)];
    headers.extend(csrf.map(|csrf| ("x-sandbox-csrf", csrf)));
    let path = "/__sandbox/sign-out";
    send(base, Method::POST, path, &headers, None).await
}
