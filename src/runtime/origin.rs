//! Origins: where credentials may go (the configured origin only) and how one is logged.

/// Same scheme, host and port: the only place credentials may go.
pub(super) fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `scheme://host:port` only: a URL's path and query may carry what is not ours to log.
pub(super) fn origin_of(url: &reqwest::Url) -> String {
    url.origin().ascii_serialization()
}
