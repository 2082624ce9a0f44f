//! The wire format of `rtlab net serve` / `rtlab net ping`.
//!
//! Every message is a fixed 40-byte header followed by `payload_len` bytes of
//! payload. Integers are big-endian (network order).
//!
//! | offset | size | field | meaning |
//! |-------:|-----:|-------|---------|
//! | 0 | 4 | magic | `RTLN` (0x52 0x54 0x4C 0x4E) |
//! | 4 | 1 | version | [`VERSION`] (1) |
//! | 5 | 1 | kind | 1 request, 2 reply, 3 info request, 4 info reply |
//! | 6 | 1 | leg | round trip within the message, 0-based, below `legs` |
//! | 7 | 1 | legs | round trips per message, 1..=[`MAX_LEGS`] |
//! | 8 | 4 | session | chosen by the client per run; replies of other runs are ignored |
//! | 12 | 2 | payload_len | bytes after the header, at most [`MAX_PAYLOAD`] |
//! | 14 | 2 | flags | must be 0 |
//! | 16 | 8 | seq | message number, 0-based |
//! | 24 | 8 | client_ns | client's send time (its own clock), echoed unchanged |
//! | 32 | 8 | server_ns | in replies: time the request spent inside the server (ns) |
//!
//! Over UDP one datagram carries exactly one message; over TCP messages follow each
//! other on the stream. A server answers a request with a reply of the **same
//! length** and an info request with a reply that is **never longer** than it, so the
//! server cannot be used to amplify traffic. Anything else is rejected with a
//! [`Reject`] reason and never answered.
//!
//! The parser ([`parse`]) reads from a byte slice only, never allocates, never
//! panics on any input (fuzzed and property-tested).

/// The four magic bytes that open every message.
pub const MAGIC: [u8; 4] = *b"RTLN";
/// The protocol version this build speaks.
pub const VERSION: u8 = 1;
/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 40;
/// Largest payload accepted (16 KiB); longer messages are rejected as oversized.
pub const MAX_PAYLOAD: usize = 16 * 1024;
/// Largest whole message: header plus the largest payload.
pub const MAX_MESSAGE: usize = HEADER_LEN + MAX_PAYLOAD;
/// Most round trips per message (a message's legs fit a 32-bit mask).
pub const MAX_LEGS: u8 = 32;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A client's timed request; the server echoes it.
    Request = 1,
    /// The server's echo of a request.
    Reply = 2,
    /// A client asking for the server's settings.
    InfoRequest = 3,
    /// The server's settings as `key=value` lines in the payload.
    InfoReply = 4,
}

impl Kind {
    fn from_byte(b: u8) -> Option<Kind> {
        match b {
            1 => Some(Kind::Request),
            2 => Some(Kind::Reply),
            3 => Some(Kind::InfoRequest),
            4 => Some(Kind::InfoReply),
            _ => None,
        }
    }
}

/// A decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// What the message is.
    pub kind: Kind,
    /// Round trip within the message (0-based).
    pub leg: u8,
    /// Round trips per message.
    pub legs: u8,
    /// The client's run identifier.
    pub session: u32,
    /// Payload bytes after the header.
    pub payload_len: u16,
    /// Message number.
    pub seq: u64,
    /// Client send time, echoed.
    pub client_ns: u64,
    /// Time spent inside the server (replies).
    pub server_ns: u64,
}

/// Why a message was refused. Small and `Copy`; every value has a stable name for
/// the server's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// Fewer bytes than a header.
    Short,
    /// Longer than [`MAX_MESSAGE`], or `payload_len` above [`MAX_PAYLOAD`].
    Oversized,
    /// Fewer payload bytes than `payload_len` announces.
    Truncated,
    /// More bytes than the header and `payload_len` announce.
    Trailing,
    /// The first four bytes are not [`MAGIC`].
    BadMagic,
    /// A version this build does not speak.
    BadVersion,
    /// An unknown kind, or a kind the receiver does not accept.
    BadKind,
    /// `legs` is 0 or above [`MAX_LEGS`], or `leg` is not below `legs`.
    BadLeg,
    /// Reserved flag bits set.
    BadFlags,
}

impl Reject {
    /// Every reason, in counter order.
    pub const ALL: [Reject; 9] = [
        Reject::Short,
        Reject::Oversized,
        Reject::Truncated,
        Reject::Trailing,
        Reject::BadMagic,
        Reject::BadVersion,
        Reject::BadKind,
        Reject::BadLeg,
        Reject::BadFlags,
    ];

    /// The stable name used in counters and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Reject::Short => "short",
            Reject::Oversized => "oversized",
            Reject::Truncated => "truncated",
            Reject::Trailing => "trailing",
            Reject::BadMagic => "bad_magic",
            Reject::BadVersion => "bad_version",
            Reject::BadKind => "bad_kind",
            Reject::BadLeg => "bad_leg",
            Reject::BadFlags => "bad_flags",
        }
    }

    /// Position in [`Reject::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Decodes and checks a header from the first [`HEADER_LEN`] bytes of `buf`,
/// without looking at the length of what follows (the TCP reader's first step).
pub fn parse_header(buf: &[u8]) -> Result<Header, Reject> {
    if buf.len() < HEADER_LEN {
        return Err(Reject::Short);
    }
    if buf[0..4] != MAGIC {
        return Err(Reject::BadMagic);
    }
    if buf[4] != VERSION {
        return Err(Reject::BadVersion);
    }
    let kind = Kind::from_byte(buf[5]).ok_or(Reject::BadKind)?;
    let (leg, legs) = (buf[6], buf[7]);
    if legs == 0 || legs > MAX_LEGS || leg >= legs {
        return Err(Reject::BadLeg);
    }
    let payload_len = be_u16(buf, 12);
    if payload_len as usize > MAX_PAYLOAD {
        return Err(Reject::Oversized);
    }
    if be_u16(buf, 14) != 0 {
        return Err(Reject::BadFlags);
    }
    Ok(Header {
        kind,
        leg,
        legs,
        session: be_u32(buf, 8),
        payload_len,
        seq: be_u64(buf, 16),
        client_ns: be_u64(buf, 24),
        server_ns: be_u64(buf, 32),
    })
}

/// Decodes and checks one whole message: `buf` must hold exactly the header and the
/// payload it announces.
pub fn parse(buf: &[u8]) -> Result<Header, Reject> {
    if buf.len() > MAX_MESSAGE {
        return Err(Reject::Oversized);
    }
    let h = parse_header(buf)?;
    let want = HEADER_LEN + h.payload_len as usize;
    if buf.len() < want {
        Err(Reject::Truncated)
    } else if buf.len() > want {
        Err(Reject::Trailing)
    } else {
        Ok(h)
    }
}

/// Writes `h` into the first [`HEADER_LEN`] bytes of `buf` (which must be at least
/// that long). The payload is the caller's.
pub fn write_header(buf: &mut [u8], h: &Header) {
    buf[0..4].copy_from_slice(&MAGIC);
    buf[4] = VERSION;
    buf[5] = h.kind as u8;
    buf[6] = h.leg;
    buf[7] = h.legs;
    buf[8..12].copy_from_slice(&h.session.to_be_bytes());
    buf[12..14].copy_from_slice(&h.payload_len.to_be_bytes());
    buf[14..16].copy_from_slice(&0u16.to_be_bytes());
    buf[16..24].copy_from_slice(&h.seq.to_be_bytes());
    buf[24..32].copy_from_slice(&h.client_ns.to_be_bytes());
    buf[32..40].copy_from_slice(&h.server_ns.to_be_bytes());
}

/// Turns the valid request in `buf` (as returned by [`parse`]) into the server's
/// answer, in place, and returns the answer's length, never above `buf.len()`:
/// a request becomes a reply of the same length carrying `server_ns`; an info
/// request becomes an info reply whose payload is as much of `info` as fits in the
/// request's payload.
pub fn make_answer(buf: &mut [u8], req: &Header, server_ns: u64, info: &[u8]) -> usize {
    let mut h = *req;
    h.server_ns = server_ns;
    match req.kind {
        Kind::InfoRequest => {
            let n = info.len().min(req.payload_len as usize);
            h.kind = Kind::InfoReply;
            h.payload_len = n as u16;
            buf[HEADER_LEN..HEADER_LEN + n].copy_from_slice(&info[..n]);
            write_header(buf, &h);
            HEADER_LEN + n
        }
        _ => {
            h.kind = Kind::Reply;
            write_header(buf, &h);
            HEADER_LEN + req.payload_len as usize
        }
    }
}

/// Parses the `key=value` lines of an info reply's payload. Lines that are not
/// UTF-8 or have no `=` are skipped.
pub fn parse_info(payload: &[u8]) -> Vec<(String, String)> {
    payload
        .split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header(kind: Kind, payload_len: u16) -> Header {
        Header {
            kind,
            leg: 1,
            legs: 4,
            session: 0xDEAD_BEEF,
            payload_len,
            seq: 12345,
            client_ns: 777,
            server_ns: 0,
        }
    }

    fn message(h: &Header) -> Vec<u8> {
        let mut b = vec![0xA5; HEADER_LEN + h.payload_len as usize];
        write_header(&mut b, h);
        b
    }

    #[test]
    fn round_trips_a_request() {
        let h = header(Kind::Request, 24);
        assert_eq!(parse(&message(&h)), Ok(h));
    }

    #[test]
    fn names_every_malformed_case() {
        let h = header(Kind::Request, 8);
        let good = message(&h);
        assert_eq!(parse(&good[..10]), Err(Reject::Short));
        assert_eq!(parse(&good[..HEADER_LEN + 3]), Err(Reject::Truncated));
        let mut long = good.clone();
        long.push(0);
        assert_eq!(parse(&long), Err(Reject::Trailing));
        assert_eq!(parse(&vec![0; MAX_MESSAGE + 1]), Err(Reject::Oversized));
        let mut b = good.clone();
        b[0] = b'X';
        assert_eq!(parse(&b), Err(Reject::BadMagic));
        let mut b = good.clone();
        b[4] = 2;
        assert_eq!(parse(&b), Err(Reject::BadVersion));
        let mut b = good.clone();
        b[5] = 9;
        assert_eq!(parse(&b), Err(Reject::BadKind));
        let mut b = good.clone();
        b[6] = 4;
        assert_eq!(parse(&b), Err(Reject::BadLeg));
        let mut b = good.clone();
        b[7] = 0;
        assert_eq!(parse(&b), Err(Reject::BadLeg));
        let mut b = good.clone();
        b[15] = 1;
        assert_eq!(parse(&b), Err(Reject::BadFlags));
        let mut b = good;
        b[12..14].copy_from_slice(&((MAX_PAYLOAD + 1) as u16).to_be_bytes());
        assert_eq!(parse(&b), Err(Reject::Oversized));
        let names: Vec<_> = Reject::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), 9);
        for (i, r) in Reject::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
        }
    }

    #[test]
    fn info_answer_never_exceeds_the_request() {
        let h = header(Kind::InfoRequest, 5);
        let mut b = message(&h);
        let n = make_answer(&mut b, &h, 9, b"policy=fifo\npriority=80\n");
        assert_eq!(n, HEADER_LEN + 5);
        let r = parse(&b[..n]).unwrap();
        assert_eq!(
            (r.kind, r.payload_len, r.server_ns),
            (Kind::InfoReply, 5, 9)
        );
        assert_eq!(&b[HEADER_LEN..n], b"polic");
        assert_eq!(
            parse_info(b"policy=fifo\n\xff\xfe=1\nnoequals\npriority = 80"),
            vec![
                ("policy".to_string(), "fifo".to_string()),
                ("priority".to_string(), "80".to_string())
            ]
        );
    }

    proptest! {
        #[test]
        fn parser_never_panics_and_accepts_only_exact_messages(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(h) = parse(&bytes) {
                prop_assert_eq!(bytes.len(), HEADER_LEN + h.payload_len as usize);
                prop_assert_eq!(&bytes[0..4], &MAGIC);
                prop_assert!(h.leg < h.legs && h.legs <= MAX_LEGS);
                // Re-encoding gives back the same header bytes.
                let mut again = bytes.clone();
                write_header(&mut again, &h);
                prop_assert_eq!(again, bytes);
            }
        }

        #[test]
        fn info_pairs_never_panic_and_hold_no_line_breaks(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let pairs = parse_info(&bytes);
            prop_assert!(pairs.len() <= bytes.iter().filter(|&&b| b == b'=').count());
            for (k, v) in pairs {
                prop_assert!(!k.is_empty() && !k.contains('\n') && !v.contains('\n'));
            }
        }

        #[test]
        fn encoded_headers_parse_back(
            kind in 1u8..=4, legs in 1u8..=MAX_LEGS, leg_seed in any::<u8>(), session in any::<u32>(),
            payload_len in 0u16..=300, seq in any::<u64>(), client_ns in any::<u64>(), server_ns in any::<u64>(),
        ) {
            let h = Header {
                kind: Kind::from_byte(kind).unwrap(), leg: leg_seed % legs, legs, session,
                payload_len, seq, client_ns, server_ns,
            };
            let m = message(&h);
            prop_assert_eq!(parse(&m), Ok(h));
            // Any shorter prefix is refused, never accepted.
            for cut in [0, 1, HEADER_LEN - 1, m.len().saturating_sub(1)] {
                if cut < m.len() {
                    prop_assert!(parse(&m[..cut]).is_err());
                }
            }
        }

        #[test]
        fn answers_are_never_longer_than_requests(
            payload_len in 0u16..=600, info in proptest::collection::vec(any::<u8>(), 0..1000), info_kind in any::<bool>(),
        ) {
            let h = header(if info_kind { Kind::InfoRequest } else { Kind::Request }, payload_len);
            let mut m = message(&h);
            let len = m.len();
            let n = make_answer(&mut m, &h, 1, &info);
            prop_assert!(n <= len);
            let r = parse(&m[..n]).unwrap();
            prop_assert!(matches!(r.kind, Kind::Reply | Kind::InfoReply));
            prop_assert_eq!((r.seq, r.leg, r.session), (h.seq, h.leg, h.session));
        }
    }
}
