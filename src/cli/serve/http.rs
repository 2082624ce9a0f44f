//! The HTTP side of `rtlab serve`, on a plain TCP stream: one GET or HEAD
//! request per connection (`Connection: close`), its head read within bounds
//! of size and time, the response written whole. Everything else a client may
//! send is answered with the status that names it and the connection closed.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

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

    /// Writes the response (without its body for HEAD) and flushes it.
    pub fn write(&self, stream: &mut impl Write, head_only: bool) -> std::io::Result<()> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
             Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        if !head_only {
            stream.write_all(&self.body)?;
        }
        stream.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
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

/// Parses a request head (without the blank line that ends it). An error is
/// the response to give.
pub fn parse(head: &str) -> Result<Request, Response> {
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Response::text(400, "bad request line"));
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(Response::text(
            400,
            "bad request line: HTTP/1.x and an absolute path only",
        ));
    }
    let mut headers = Vec::new();
    for h in lines {
        let Some((name, value)) = h.split_once(':') else {
            return Err(Response::text(400, "bad header line"));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k, true), decode(v, true))
        })
        .collect();
    let req = Request {
        method: method.to_string(),
        path: decode(path, false),
        query,
        headers,
    };
    if req.method != "GET" && req.method != "HEAD" {
        return Err(
            Response::text(405, "only GET and HEAD: the store is read-only here")
                .with("Allow", "GET, HEAD"),
        );
    }
    let length = req.header("content-length").unwrap_or("0");
    if req.header("transfer-encoding").is_some() || length.trim() != "0" {
        return Err(Response::text(
            413,
            "a request body is refused: GET and HEAD only",
        ));
    }
    Ok(req)
}

/// Reads a request head from `stream` before `deadline` (each read waits at
/// most what is left), within [`MAX_LINE`] and [`MAX_HEAD`]. None when the
/// client closed without a request.
pub fn read_head(stream: &mut TcpStream, deadline: Instant) -> Result<Option<String>, Response> {
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        if find(&buf, b"\r\n").unwrap_or(buf.len()) > MAX_LINE {
            return Err(Response::text(414, "request line too long"));
        }
        let end = find(&buf, b"\r\n\r\n");
        if end.unwrap_or(buf.len()) > MAX_HEAD {
            return Err(Response::text(431, "request headers too large"));
        }
        if let Some(end) = end {
            buf.truncate(end);
            return String::from_utf8(buf)
                .map(Some)
                .map_err(|_| Response::text(400, "the request head is not UTF-8"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Response::text(408, "no whole request in time"));
        }
        let _ = stream.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        match stream.read(&mut chunk) {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) => return Err(Response::text(400, "the request ended before its head did")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Response::text(408, "no whole request in time"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Ok(None),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
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

    #[test]
    fn requests_parse_and_decode() {
        let r = parse("GET /host/a%20b?run=1&run=2&tag=x+y&token=t HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T").unwrap();
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
    fn bodies_and_other_methods_are_refused() {
        assert_eq!(
            parse("POST / HTTP/1.1\r\nContent-Length: 3")
                .unwrap_err()
                .status,
            405
        );
        assert_eq!(
            parse("GET / HTTP/1.1\r\nContent-Length: 3")
                .unwrap_err()
                .status,
            413
        );
        assert_eq!(
            parse("GET / HTTP/1.1\r\nTransfer-Encoding: chunked")
                .unwrap_err()
                .status,
            413
        );
        assert_eq!(parse("GET http://x/ HTTP/1.1").unwrap_err().status, 400);
        assert_eq!(parse("GET /").unwrap_err().status, 400);
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
}
