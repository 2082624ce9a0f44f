use super::*;

/// Windows of 1000 ns; threads with a period of 10 ns and a deadline of 10 ns.
const W: i64 = 1000;

fn cut(threads: usize, start_ns: i64) -> Cut {
    let p = Period {
        interval_ns: 10,
        deadline_ns: 10,
    };
    Cut::new(W, vec![p; threads], start_ns)
}

/// What a closed window holds, per thread: (count, min, max, max at, overruns, misses).
type Row = (i64, u64, u64, i64, i64, i64);

#[derive(Debug, PartialEq)]
struct Got {
    start: i64,
    end: i64,
    partial: bool,
    threads: Vec<Row>,
}

fn got(c: Closed<'_>) -> Got {
    Got {
        start: c.start_ns,
        end: c.end_ns,
        partial: c.partial,
        threads: c
            .accs
            .iter()
            .map(|a| {
                assert_eq!(a.hist.len(), a.count as u64);
                (
                    a.count,
                    a.min_ns,
                    a.max_ns,
                    a.max_at_ns,
                    a.overruns,
                    a.misses,
                )
            })
            .collect(),
    }
}

fn close_until(c: &mut Cut, until: i64) -> Vec<Got> {
    let mut out = Vec::new();
    c.close_until(until, |w| out.push(got(w)));
    out
}

fn finish(c: &mut Cut) -> Vec<Got> {
    let mut out = Vec::new();
    c.finish(|w| out.push(got(w)));
    out
}

/// A wake-up every 10 ns from `from` to before `to`, each 1 ns late.
fn wake(c: &mut Cut, thread: usize, from: i64, to: i64) {
    for t in (from..to).step_by(10) {
        c.add(thread, t, 1);
    }
}

#[test]
fn middle_windows_are_whole_and_on_boundaries_the_first_and_last_partial() {
    let mut c = cut(1, 1234);
    wake(&mut c, 0, 1240, 4570);
    let mut all = close_until(&mut c, 3999);
    assert_eq!(all.len(), 2, "[1234, 2000) and [2000, 3000) are over");
    all.extend(close_until(&mut c, 4000));
    all.extend(finish(&mut c));
    let bounds: Vec<_> = all.iter().map(|g| (g.start, g.end, g.partial)).collect();
    assert_eq!(
        bounds,
        [
            (1234, 2000, true),
            (2000, 3000, false),
            (3000, 4000, false),
            (4000, 4561, true)
        ]
    );
    let counts: Vec<i64> = all.iter().map(|g| g.threads[0].0).collect();
    // 1240..1990, 2000..2990, 3000..3990, 4000..4560.
    assert_eq!(counts, [76, 100, 100, 57]);
}

#[test]
fn a_late_close_moves_neither_the_bounds_nor_the_wake_ups() {
    let mut c = cut(1, 1500);
    // The main thread sees the wake-ups up to 2790 before closing anything:
    // those after 2000 belong to the next window all the same.
    wake(&mut c, 0, 1500, 2800);
    c.add(0, 1999, 7);
    c.add(0, 2000, 9);
    let first = close_until(&mut c, 2790);
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].start, first[0].end), (1500, 2000));
    assert_eq!(first[0].threads[0].0, 51, "1500..=1990 and 1999");
    assert_eq!(first[0].threads[0].2, 7);
    assert_eq!(first[0].threads[0].3, 1999, "the maximum's own time");
    let rest = finish(&mut c);
    assert_eq!(
        (rest[0].start, rest[0].end, rest[0].partial),
        (2000, 2791, true),
        "the last window ends at its last wake-up"
    );
    assert_eq!(rest[0].threads[0].0, 81);
    assert_eq!(rest[0].threads[0].2, 9);
}

#[test]
fn threads_seen_one_after_the_other_fill_the_same_windows() {
    let mut c = cut(2, 500);
    // Thread 0's wake-ups up to 2500 are taken before thread 1's.
    wake(&mut c, 0, 500, 2500);
    wake(&mut c, 1, 505, 2500);
    let w = close_until(&mut c, 2000);
    assert_eq!(w.len(), 2);
    assert_eq!((w[1].start, w[1].end, w[1].partial), (1000, 2000, false));
    assert_eq!(w[1].threads.len(), 2);
    assert_eq!((w[1].threads[0].0, w[1].threads[1].0), (100, 100));
    assert_eq!((w[0].threads[0].0, w[0].threads[1].0), (50, 50));
}

#[test]
fn overruns_and_misses_are_counted_in_the_window_of_their_wake_up() {
    let mut c = cut(1, 0);
    c.add(0, 100, 9); // on time: no overrun, no miss
    c.add(0, 200, 11); // a miss, and the next period expired
    c.add(0, 1300, 35); // 3 periods expired, a miss
    let w = finish(&mut c);
    assert_eq!(w[0].threads[0], (2, 9, 11, 200, 1, 1));
    assert_eq!(w[1].threads[0], (1, 35, 35, 1300, 3, 1));
    assert!(
        !w[0].partial,
        "a session begun on a boundary has a whole first window"
    );
    assert!(w[1].partial);
}

#[test]
fn a_window_the_probe_stopped_in_is_partial_however_late_it_is_closed() {
    let mut c = cut(1, 2000);
    wake(&mut c, 0, 2000, 3500);
    // Stopped after the wake-up at 3490; the main thread looks at 9000.
    let w = close_until(&mut c, 9000);
    assert_eq!(w.len(), 1, "the window it ran through");
    assert_eq!((w[0].start, w[0].end, w[0].partial), (2000, 3000, false));
    let w = finish(&mut c);
    assert_eq!((w[0].start, w[0].end, w[0].partial), (3000, 3491, true));
    assert_eq!(w[0].threads[0].0, 50);
}

#[test]
fn a_stop_after_a_boundary_leaves_the_window_whole() {
    let mut c = cut(1, 2000);
    // The wake-up at 3000 came: the probe ran through the window.
    wake(&mut c, 0, 2000, 3001);
    let w = finish(&mut c);
    assert_eq!((w[0].start, w[0].end, w[0].partial), (2000, 3000, false));
    assert_eq!((w[1].start, w[1].end, w[1].partial), (3000, 3001, true));
}

#[test]
fn windows_nobody_woke_in_are_not_stored() {
    let mut c = cut(1, 100);
    assert!(finish(&mut c).is_empty(), "stopped before a wake-up");
    let mut c = cut(1, 100);
    c.add(0, 150, 1);
    // The clock steps 10 windows forward: no empty rows in between.
    c.add(0, 10_500, 1);
    let w = finish(&mut c);
    let bounds: Vec<_> = w.iter().map(|g| (g.start, g.end)).collect();
    assert_eq!(bounds, [(100, 1000), (10_000, 10_501)]);
}

#[test]
fn a_wake_up_seen_after_its_window_closed_goes_to_the_next_one() {
    let mut c = cut(1, 0);
    c.add(0, 900, 1);
    c.add(0, 1005, 1);
    assert_eq!(close_until(&mut c, 1000).len(), 1);
    // Taken from the ring after the close (a thread preempted between its
    // clock read and its push): counted, in the window under way.
    c.add(0, 990, 4);
    let w = finish(&mut c);
    assert_eq!((w[0].start, w[0].end), (1000, 1006));
    assert_eq!(w[0].threads[0].0, 2);
    assert_eq!(c.open_windows(), 0);
}

#[test]
fn accumulators_are_reused_so_open_windows_stay_few() {
    let mut c = cut(2, 0);
    for k in 0..50 {
        wake(&mut c, 0, k * W, (k + 1) * W);
        wake(&mut c, 1, k * W, (k + 1) * W);
        assert!(c.open_windows() <= 2);
        assert_eq!(close_until(&mut c, k * W).len(), usize::from(k > 0));
    }
    assert!(c.spare.len() <= 2, "{} sets kept", c.spare.len());
}

#[test]
fn boundaries_are_the_multiples_of_the_window() {
    assert_eq!(next_boundary(0, 10), 10);
    assert_eq!(next_boundary(9, 10), 10);
    assert_eq!(next_boundary(10, 10), 20);
    assert_eq!(next_boundary(-1, 10), 0);
}
