use super::*;
use crate::step::rt::PolicyArg;

fn machine() -> Machine {
    Machine {
        cpus: vec![0, 1, 2, 3],
        mem_available: 0,
    }
}

fn params(f: impl FnOnce(&mut Params)) -> Params {
    let mut p = Params::default();
    f(&mut p);
    p
}

#[test]
fn frequencies_take_units_and_bare_numbers_are_hz() {
    assert_eq!(parse_hz("1kHz"), Ok(1e3));
    assert_eq!(parse_hz("2.5 MHz"), Ok(2.5e6));
    assert_eq!(parse_hz("500"), Ok(500.0));
    assert_eq!(parse_hz("40hz"), Ok(40.0));
    for bad in ["0", "-3kHz", "fast", "", "2GHz", "nanHz"] {
        assert!(parse_hz(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_defaults_pin_to_the_last_cpu_at_fifo_90() {
    let p = Params::default().plan(&machine()).unwrap();
    assert_eq!(p.cpu, Some(3));
    assert_eq!((p.policy, p.priority), (Policy::Fifo, 90));
    assert_eq!(p.methods, vec![Method::Sleep]);
    assert!((p.tolerance - 0.1).abs() < 1e-12);
    assert_eq!(p.duration_ns, 1_000_000_000);
    assert_eq!(p.spin_ns, 50_000);
    assert!(p.sweep.is_none());
    assert_eq!(p.sched(1_000_000).unwrap(), Sched::Fixed(Policy::Fifo, 90));
}

#[test]
fn a_sweep_reads_its_range_and_all_methods() {
    let p = params(|p| {
        p.sweep = Some("1kHz..10MHz".into());
        p.method = MethodArg::All;
        p.tolerance = "5".into();
    })
    .plan(&machine())
    .unwrap();
    let s = p.sweep.unwrap();
    assert_eq!(
        (s.lo_hz, s.hi_hz, s.steps_per_decade, s.refine, s.repeats),
        (1e3, 1e7, 4, 6, 3)
    );
    assert_eq!(p.methods.len(), 4);
    assert!((p.tolerance - 0.05).abs() < 1e-12);
    assert_eq!(p.duration_ns, 120_000_000_000, "a sweep's default bound");
}

#[test]
fn deadline_gives_a_reservation_per_period_and_no_pinning() {
    let p = params(|p| p.sched.policy = PolicyArg::Deadline)
        .plan(&machine())
        .unwrap();
    assert_eq!(p.cpu, None);
    match p.sched(500_000).unwrap() {
        Sched::Deadline(dl) => {
            assert_eq!(
                (dl.runtime_ns, dl.deadline_ns, dl.period_ns),
                (50_000, 500_000, 500_000)
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn refusals_name_their_flag() {
    let cases: Vec<(Params, &str)> = vec![
        (params(|p| p.frequency = "0".into()), "--frequency"),
        (params(|p| p.sweep = Some("5kHz..1kHz".into())), "--sweep"),
        (params(|p| p.sweep = Some("1kHz..1kHz".into())), "--sweep"),
        (params(|p| p.tolerance = "100".into()), "--tolerance"),
        (params(|p| p.tolerance = "-1%".into()), "--tolerance"),
        (params(|p| p.method = MethodArg::All), "--method"),
        (params(|p| p.cpu = Some(9)), "--cpu"),
        (params(|p| p.sched.priority = Some(100)), "--priority"),
        (
            params(|p| p.point_duration = "1ms".into()),
            "--point-duration",
        ),
        (
            params(|p| {
                p.sweep = Some("1kHz..2kHz".into());
                p.steps_per_decade = 0;
            }),
            "--steps-per-decade",
        ),
        (
            params(|p| {
                p.sweep = Some("1kHz..2kHz".into());
                p.point_repeats = 0;
            }),
            "--point-repeats",
        ),
        (
            params(|p| {
                p.sweep = Some("1kHz..2kHz".into());
                p.point_repeats = 10;
            }),
            "--point-repeats",
        ),
        (
            params(|p| {
                p.method = MethodArg::Hybrid;
                p.duration = Some("3s".into());
            }),
            "--duration",
        ),
        (
            params(|p| {
                p.gpio = Some("/dev/gpiochip0:1".into());
                p.gpio_in = Some("/dev/gpiochip0:2".into());
                p.sweep = Some("1kHz..2kHz".into());
            }),
            "--gpio-in",
        ),
        (
            params(|p| p.gpio = Some("/dev/gpiochip250:1".into())),
            "--gpio",
        ),
        (
            params(|p| p.gpio = Some("/dev/gpiochip0:x".into())),
            "--gpio",
        ),
    ];
    for (p, flag) in cases {
        let e = p.plan(&machine()).unwrap_err().to_string();
        assert!(e.starts_with(flag), "{flag}: {e}");
    }
}

#[test]
fn a_scenario_step_reads_the_same_keys() {
    let probe = crate::step::probe("periodic").unwrap();
    let mut m = serde_json::Map::new();
    m.insert("sweep".into(), "1kHz..1MHz".into());
    m.insert("method".into(), "busy".into());
    m.insert("frequency".into(), 2000.into());
    match probe.params(m).unwrap() {
        crate::step::Params::Periodic(p) => {
            assert_eq!(p.method, MethodArg::Busy);
            assert_eq!(p.frequency, "2000");
            assert!(p.plan(&machine()).is_ok());
        }
        other => panic!("{other:?}"),
    }
}
