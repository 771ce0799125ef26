//! The client's address behind a reverse proxy: read from `Forwarded` or `X-Forwarded-For`, and
//! only when the request comes from a proxy the operator trusts (`--trusted-proxy CIDR`).
//!
//! Login limits, lockouts and the security log key on the client address. Behind an Ingress or
//! a load balancer every request arrives from the proxy, so without this one address would
//! stand for the whole organization; taken from any peer, the headers would let a client choose
//! its own address. The address read is the right-most one not in a trusted range: each proxy
//! appends the address it received from, so the entries left of the nearest untrusted hop are
//! whatever the client wrote.

use std::net::{IpAddr, SocketAddr};

use axum::{
    extract::{ConnectInfo, Request, State},
    http::HeaderMap,
    middleware::Next,
    response::Response,
};
use ipnet::IpNet;

/// The peers whose forwarding headers are believed (`--trusted-proxy`, repeatable; none by
/// default).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// No proxy is trusted: the peer is the client.
    pub fn none() -> Self {
        Self::default()
    }

    /// Trusts the peers in `ranges`.
    pub fn new(ranges: Vec<IpNet>) -> Self {
        Self(ranges)
    }

    /// Whether `address` is in a trusted range (an IPv4-mapped IPv6 address as its IPv4).
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.0.iter().any(|range| range.contains(&address))
    }

    /// Whether any proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Parses one `--trusted-proxy` value: a CIDR range (`10.0.0.0/8`, `fd00::/8`) or a single
/// address.
pub fn parse_trusted_proxy(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| {
            format!(
                "{text:?} is not an address range: give a CIDR such as 10.0.0.0/8 or an address"
            )
        })
}

/// The client of a request that came from `peer` with `headers`: `peer` itself unless it is a
/// trusted proxy; then the right-most address of `Forwarded` (or, without one,
/// `X-Forwarded-For`) that is not a trusted proxy, or the left-most when all are. A header that
/// cannot be read leaves the peer.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    if !trusted.contains(peer) {
        return peer;
    }
    let chain = forwarded_for(headers)
        .or_else(|| x_forwarded_for(headers))
        .unwrap_or_default();
    chain
        .iter()
        .rev()
        .find(|address| !trusted.contains(**address))
        .or(chain.first())
        .copied()
        .map_or(peer, canonical)
}

/// The `for=` addresses of every `Forwarded` header (RFC 7239), in order; `None` without the
/// header, or when an element has no readable address (`for=unknown`, an obfuscated name), so
/// that a chain with a hole is not trusted part-way.
fn forwarded_for(headers: &HeaderMap) -> Option<Vec<IpAddr>> {
    let mut addresses = Vec::new();
    let mut present = false;
    for value in headers.get_all(axum::http::header::FORWARDED) {
        present = true;
        let value = value.to_str().ok()?;
        for element in value.split(',') {
            let node = element
                .split(';')
                .filter_map(|pair| pair.split_once('='))
                .find(|(key, _)| key.trim().eq_ignore_ascii_case("for"))
                .map(|(_, node)| node.trim().trim_matches('"'))?;
            addresses.push(parse_node(node)?);
        }
    }
    present.then_some(addresses)
}

/// An RFC 7239 node: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`, `[2001:db8::1]:4711`.
fn parse_node(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// The addresses of every `X-Forwarded-For` header, in order; `None` without one or when an
/// entry is not an address.
fn x_forwarded_for(headers: &HeaderMap) -> Option<Vec<IpAddr>> {
    let mut addresses = Vec::new();
    for value in headers.get_all("x-forwarded-for") {
        for entry in value.to_str().ok()?.split(',') {
            addresses.push(parse_node(entry.trim())?);
        }
    }
    (!addresses.is_empty()).then_some(addresses)
}

/// An IPv4-mapped IPv6 address as IPv4, others as they are.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

/// Middleware: a request from a trusted proxy carries its client's address as its
/// `ConnectInfo` from here on (the port is the proxy's), so the login limits, the lockouts and
/// the security log see the client, not the proxy.
pub async fn forwarded_client(
    State(trusted): State<TrustedProxies>,
    mut request: Request,
    next: Next,
) -> Response {
    if !trusted.is_empty() {
        if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
            let client = client_address(peer.ip(), request.headers(), &trusted);
            if client != peer.ip() {
                let port = peer.port();
                request
                    .extensions_mut()
                    .insert(ConnectInfo(SocketAddr::new(client, port)));
            }
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::{client_address, parse_trusted_proxy, TrustedProxies};
    use axum::http::HeaderMap;
    use std::net::IpAddr;

    fn trusted(ranges: &[&str]) -> TrustedProxies {
        TrustedProxies::new(
            ranges
                .iter()
                .map(|r| parse_trusted_proxy(r).unwrap())
                .collect(),
        )
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let forwarded = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(
            client_address(ip("198.51.100.7"), &forwarded, &TrustedProxies::none()),
            ip("198.51.100.7")
        );
        assert_eq!(
            client_address(ip("198.51.100.7"), &forwarded, &trusted(&["10.0.0.0/8"])),
            ip("198.51.100.7")
        );
    }

    #[test]
    fn the_right_most_untrusted_address_is_the_client() {
        let proxies = trusted(&["10.0.0.0/8", "fd00::/8"]);
        // The client wrote a fake first entry; the Ingress appended the real peer.
        let forwarded = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.2.3")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &forwarded, &proxies),
            ip("203.0.113.9")
        );
        // Two headers are one list.
        let split = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &split, &proxies),
            ip("203.0.113.9")
        );
        // Every hop trusted: the left-most.
        let inside = headers(&[("x-forwarded-for", "10.9.9.9, 10.1.1.1")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &inside, &proxies),
            ip("10.9.9.9")
        );
        // No header: the peer.
        assert_eq!(
            client_address(ip("10.0.0.5"), &HeaderMap::new(), &proxies),
            ip("10.0.0.5")
        );
    }

    #[test]
    fn forwarded_wins_over_x_forwarded_for_and_reads_every_node_form() {
        let proxies = trusted(&["10.0.0.0/8"]);
        let both = headers(&[
            (
                "forwarded",
                r#"for=192.0.2.60;proto=https, for="[2001:db8:cafe::17]:4711";by=10.0.0.1"#,
            ),
            ("x-forwarded-for", "198.51.100.1"),
        ]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &both, &proxies),
            ip("2001:db8:cafe::17")
        );
        let with_port = headers(&[("forwarded", "for=192.0.2.60:1234")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &with_port, &proxies),
            ip("192.0.2.60")
        );
        // A hole in the chain (for=unknown) is not trusted part-way: the peer stays.
        let unknown = headers(&[("forwarded", "for=192.0.2.60, for=unknown")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &unknown, &proxies),
            ip("10.0.0.5")
        );
        // Garbage in X-Forwarded-For: the peer.
        let garbage = headers(&[("x-forwarded-for", "not-an-address")]);
        assert_eq!(
            client_address(ip("10.0.0.5"), &garbage, &proxies),
            ip("10.0.0.5")
        );
    }

    #[test]
    fn ranges_parse_as_cidr_or_single_addresses_and_mapped_ipv4_matches() {
        let proxies = trusted(&["127.0.0.1", "10.0.0.0/8"]);
        assert!(proxies.contains(ip("127.0.0.1")));
        assert!(!proxies.contains(ip("127.0.0.2")));
        assert!(proxies.contains(ip("::ffff:10.3.4.5")));
        assert!(parse_trusted_proxy("10.0.0.0/33").is_err());
        assert!(parse_trusted_proxy("plots.example.org").is_err());
    }
}
