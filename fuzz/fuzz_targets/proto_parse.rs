//! Fuzzes the wire-format parser the server faces: any bytes must be refused or
//! accepted without panicking, an accepted message must be exactly what its header
//! announces, and the server's answer must never be longer than the request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtlab_engine::proto::{self, Kind, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let header = proto::parse_header(data);
    match proto::parse(data) {
        Ok(h) => {
            assert_eq!(header, Ok(h));
            assert_eq!(data.len(), HEADER_LEN + h.payload_len as usize);
            let mut answer = data.to_vec();
            let n = proto::make_answer(&mut answer, &h, 1, b"key=value\nother=1\n");
            assert!(n <= data.len());
            let back = proto::parse(&answer[..n]).expect("answers parse");
            assert!(matches!(back.kind, Kind::Reply | Kind::InfoReply));
            assert_eq!((back.seq, back.leg, back.legs, back.session), (h.seq, h.leg, h.legs, h.session));
            let _ = proto::parse_info(&data[HEADER_LEN..]);
        }
        Err(_) => {
            // Whatever the parser refused, the header check alone never accepts
            // something parse would call short, bad magic or bad version.
            if data.len() < HEADER_LEN {
                assert!(header.is_err());
            }
        }
    }
});
