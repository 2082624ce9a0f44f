//! Two hosts: two network namespaces joined by a veth pair, created and removed by
//! the test itself, with private addresses that exist only inside them. The server
//! runs in one, the client in the other.

use crate::net_common::{assert_sound_run, counter, ping_in, Server};
use std::process::Command;

/// Two namespaces `a` and `b` joined by a veth pair; removed when dropped, even
/// when the test fails half-way.
struct TwoHosts {
    a: String,
    b: String,
    veth: String,
    /// Address of host `a`.
    addr_a: String,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl TwoHosts {
    fn create() -> TwoHosts {
        let id = std::process::id();
        let net = id % 250;
        let h = TwoHosts {
            a: format!("rtlab-t{id}a"),
            b: format!("rtlab-t{id}b"),
            veth: format!("rtv{id}"),
            addr_a: format!("10.213.{net}.1"),
        };
        let (va, vb) = (format!("{}a", h.veth), format!("{}b", h.veth));
        let addr_b = format!("10.213.{net}.2/24");
        let addr_a = format!("{}/24", h.addr_a);
        let steps: Vec<Vec<&str>> = vec![
            vec!["netns", "add", &h.a],
            vec!["netns", "add", &h.b],
            vec!["link", "add", &va, "type", "veth", "peer", "name", &vb],
            vec!["link", "set", &va, "netns", &h.a],
            vec!["link", "set", &vb, "netns", &h.b],
            vec!["-n", &h.a, "addr", "add", &addr_a, "dev", &va],
            vec!["-n", &h.b, "addr", "add", &addr_b, "dev", &vb],
            vec!["-n", &h.a, "link", "set", &va, "up"],
            vec!["-n", &h.b, "link", "set", &vb, "up"],
            vec!["-n", &h.a, "link", "set", "lo", "up"],
            vec!["-n", &h.b, "link", "set", "lo", "up"],
        ];
        for s in steps {
            // `h` is dropped (and everything removed) if a step fails.
            ip(&s).unwrap();
        }
        h
    }

    fn exec(&self, ns: &str) -> Vec<String> {
        vec!["ip".into(), "netns".into(), "exec".into(), ns.to_string()]
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        // Deleting a namespace destroys the veth end inside it; the link delete
        // covers a failure before the ends were moved.
        let _ = ip(&["link", "del", &format!("{}a", self.veth)]);
        let _ = ip(&["netns", "del", &self.a]);
        let _ = ip(&["netns", "del", &self.b]);
    }
}

#[test]
#[ignore = "needs root: network namespaces"]
fn client_and_server_on_two_hosts_joined_by_veth() {
    let hosts = TwoHosts::create();
    let in_a = hosts.exec(&hosts.a);
    let in_b = hosts.exec(&hosts.b);
    let in_a: Vec<&str> = in_a.iter().map(String::as_str).collect();
    let in_b: Vec<&str> = in_b.iter().map(String::as_str).collect();
    let bind = format!("{}:7700", hosts.addr_a);

    // The default bind is loopback only: from the other host nothing answers.
    let local_only = Server::start_in(&in_a, &["--bind", "127.0.0.1:7700"]);
    let out = Command::new("ip")
        .args(["netns", "exec", &hosts.b, env!("CARGO_BIN_EXE_rtlab")])
        .args(["net", "ping", &bind, "--no-save", "--timeout", "100ms"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(local_only);

    // UDP across the veth pair.
    let server = Server::start_in(&in_a, &["--bind", &bind]);
    assert_eq!(server.addr, bind);
    let (run, code) = ping_in(
        &in_b,
        &[
            &bind,
            "--period",
            "2ms",
            "--count",
            "30",
            "--round-trips",
            "4",
        ],
    );
    assert_eq!(code, Some(0));
    assert_sound_run(&run, 30, 4);
    assert_eq!(run["params"]["server"]["bind"], bind.as_str());
    let (summary, _) = server.stop();
    assert_eq!(counter(&summary, "served"), 120);

    // TCP across the veth pair.
    let server = Server::start_in(&in_a, &["--tcp", "--bind", &bind]);
    let (run, code) = ping_in(
        &in_b,
        &[
            &bind,
            "--tcp",
            "--period",
            "2ms",
            "--count",
            "10",
            "--round-trips",
            "2",
        ],
    );
    assert_eq!(code, Some(0));
    assert_sound_run(&run, 10, 2);
    drop(server);
    drop(hosts);
}
