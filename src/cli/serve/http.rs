//! What `rtlab serve` reads of a request and how it answers: hyper's request
//! checked (one GET or HEAD with no body, an origin-form target within
//! [`MAX_LINE`]) and turned into the [`Request`] the pages read; a
//! [`Response`] turned into hyper's, with the headers every answer carries.
//! Connections, bounds and timeouts: `server.rs`.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE};
use hyper::StatusCode;

/// Longest request line (method, target, version): longer is 414.
pub const MAX_LINE: usize = 8 * 1024;
/// Largest request head (the line and every header): larger is 431.
pub const MAX_HEAD: usize = 32 * 1024;

/// A request as the pages see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET` or `HEAD`.
    pub method: String,
    /// The path, percent-decoded.
    pub path: String,
    /// The query's pairs, decoded, in order.
    pub query: Vec<(String, String)>,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of the query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A response, written whole.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// More headers (`Allow`, `WWW-Authenticate`, `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
}

pub const HTML: &str = "text/html; charset=utf-8";
pub const TEXT: &str = "text/plain; charset=utf-8";
/// The Prometheus text exposition format.
pub const METRICS: &str = "text/plain; version=0.0.4; charset=utf-8";

impl Response {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A short plain-text answer.
    pub fn text(status: u16, text: &str) -> Response {
        Response::new(status, TEXT, format!("{text}\n"))
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    /// The response as hyper sends it: `Content-Length` is the body's,
    /// `Connection: close` hyper's (one request per connection), and HEAD
    /// answers go without their body.
    pub fn into_hyper(self) -> hyper::Response<Full<Bytes>> {
        let mut b = hyper::Response::builder()
            .status(self.status)
            .header(CONTENT_TYPE, self.content_type)
            .header(CACHE_CONTROL, "no-store")
            .header("X-Content-Type-Options", "nosniff")
            .header(
                CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'",
            );
        for (name, value) in self.headers {
            b = b.header(name, value);
        }
        b.body(Full::new(Bytes::from(self.body)))
            .unwrap_or_else(|_| {
                let mut r = hyper::Response::new(Full::default());
                *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                r.headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static(TEXT));
                r
            })
    }
}

/// `%XX` and `+` decoded (in a query, `+` is a space); invalid escapes kept.
pub fn decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Checks the request hyper read and makes it the pages' [`Request`]. An
/// error is the response to give (414, 400, 405, 413), in that order.
pub fn request<B>(req: &hyper::Request<B>) -> Result<Request, Response> {
    let method = req.method().as_str();
    let uri = req.uri();
    let target = uri.path_and_query().map_or("", |t| t.as_str());
    if method.len() + target.len() + " HTTP/1.1".len() + 1 > MAX_LINE {
        return Err(Response::text(414, "request line too long"));
    }
    if uri.scheme().is_some() || !target.starts_with('/') {
        return Err(Response::text(
            400,
            "bad request line: HTTP/1.x and an absolute path only",
        ));
    }
    if method != "GET" && method != "HEAD" {
        return Err(
            Response::text(405, "only GET and HEAD: the store is read-only here")
                .with("Allow", "GET, HEAD"),
        );
    }
    let mut headers = Vec::new();
    for (name, value) in req.headers() {
        let value = std::str::from_utf8(value.as_bytes())
            .map_err(|_| Response::text(400, "the request head is not UTF-8"))?;
        headers.push((name.as_str().to_string(), value.to_string()));
    }
    let req = Request {
        method: method.to_string(),
        path: decode(uri.path(), false),
        query: uri
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k, true), decode(v, true))
            })
            .collect(),
        headers,
    };
    let length = req.header("content-length").unwrap_or("0");
    if req.header("transfer-encoding").is_some() || length.trim() != "0" {
        return Err(Response::text(
            413,
            "a request body is refused: GET and HEAD only",
        ));
    }
    Ok(req)
}

/// Whether `given` equals `token`, in a time that depends only on their
/// lengths, not on where they first differ.
pub fn same_token(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    let mut diff = u8::from(a.len() != b.len());
    for (i, &t) in b.iter().enumerate() {
        diff |= a.get(i).copied().unwrap_or(0) ^ t;
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hyper's request of `method`, `target` and `headers`, checked.
    fn checked(method: &str, target: &str, headers: &[(&str, &[u8])]) -> Result<Request, Response> {
        let mut b = hyper::Request::builder().method(method).uri(target);
        for (name, value) in headers {
            b = b.header(*name, HeaderValue::from_bytes(value).unwrap());
        }
        request(&b.body(()).unwrap())
    }

    #[test]
    fn requests_are_checked_and_decoded() {
        let r = checked(
            "GET",
            "/host/a%20b?run=1&run=2&tag=x+y&token=t",
            &[("Host", b"x"), ("Authorization", b"Bearer T")],
        )
        .unwrap();
        assert_eq!(r.path, "/host/a b");
        assert_eq!(r.param("tag"), Some("x y"));
        let runs: Vec<&str> = r
            .query
            .iter()
            .filter(|(k, _)| k == "run")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(runs, ["1", "2"]);
        assert_eq!(r.header("authorization"), Some("Bearer T"));
    }

    #[test]
    fn bodies_other_methods_long_lines_and_other_targets_are_refused() {
        let status = |m, t, h: &[(&str, &[u8])]| checked(m, t, h).unwrap_err().status;
        assert_eq!(status("POST", "/", &[("Content-Length", b"3")]), 405);
        assert_eq!(status("GET", "/", &[("Content-Length", b"3")]), 413);
        assert_eq!(
            status("GET", "/", &[("Transfer-Encoding", b"chunked")]),
            413
        );
        assert_eq!(status("GET", "http://x/", &[]), 400);
        assert_eq!(status("OPTIONS", "*", &[]), 400);
        assert_eq!(status("GET", "/", &[("X-Name", b"caf\xc3")]), 400);
        let long = format!("/runs?tag={}", "x".repeat(MAX_LINE));
        assert_eq!(status("GET", &long, &[]), 414);
        assert!(checked("HEAD", "/", &[("Content-Length", b"0")]).is_ok());
    }

    #[test]
    fn decoding_keeps_broken_escapes_and_tokens_compare_whole() {
        assert_eq!(decode("a%2", true), "a%2");
        assert_eq!(decode("%41%zz+", false), "A%zz+");
        assert!(same_token("secret", "secret"));
        assert!(!same_token("secreT", "secret"));
        assert!(!same_token("secret2", "secret"));
        assert!(!same_token("", "secret"));
    }

    #[test]
    fn responses_carry_the_headers_every_answer_has() {
        let r = Response::text(405, "no")
            .with("Allow", "GET, HEAD")
            .into_hyper();
        assert_eq!(r.status(), 405);
        let h = r.headers();
        assert_eq!(h["allow"], "GET, HEAD");
        assert_eq!(h["content-type"], TEXT);
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert!(h["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'none'"));
    }
}
