//! The measured CPUs as an isolated cgroup v2 cpuset partition: the scheduler
//! takes them away from every other cgroup, and the measuring threads run in
//! the partition (this process moves there when they start; the loads stay
//! where they were started). Needs the cpuset controller on cgroup v2 and a
//! kernel with `cpuset.cpus.partition` (5.11+).

use super::{no_housekeeping, value_want, Ctx, Fix, Plan};
use crate::tune::trial::change::{Form, Want};

/// The candidate.
pub const FIX: Fix = Fix {
    name: "cpuset",
    title: "measured CPUs as an isolated cpuset partition",
    plan,
};

/// The name of the cgroup the partition is made in.
pub const CGROUP: &str = "rtlab-tune";

/// The fields of each line of `/proc/self/mounts`.
fn mounts(c: &Ctx) -> Vec<Vec<String>> {
    c.root
        .read("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Where cgroup v2 is mounted.
fn cgroup2(c: &Ctx) -> Option<String> {
    mounts(c)
        .into_iter()
        .find_map(|f| (f.get(2).map(String::as_str) == Some("cgroup2")).then(|| f[1].clone()))
}

fn plan(c: &Ctx) -> Result<Plan, String> {
    if c.housekeeping.is_empty() {
        return Err(no_housekeeping("the other tasks"));
    }
    let mount = cgroup2(c).ok_or("no cgroup v2 file system is mounted")?;
    let controllers = c
        .root
        .read(&format!("{mount}/cgroup.controllers"))
        .unwrap_or_default();
    if !controllers.split_whitespace().any(|w| w == "cpuset") {
        let v1 = mounts(c).into_iter().find_map(|f| {
            (f.get(2).map(String::as_str) == Some("cgroup")
                && f.get(3)
                    .is_some_and(|o| o.split(',').any(|w| w == "cpuset")))
            .then(|| f[1].clone())
        });
        return Err(format!(
            "cgroup v2 at {mount} has no cpuset controller (it has: {}){}",
            if controllers.is_empty() {
                "none"
            } else {
                &controllers
            },
            match v1 {
                Some(at) => format!("; a cgroup v1 hierarchy holds it ({at})"),
                None => String::new(),
            }
        ));
    }
    let dir = format!("{mount}/{CGROUP}");
    let cpus = c.measured.to_string();
    Ok(Plan {
        wants: vec![
            value_want(
                &format!("{mount}/cgroup.subtree_control"),
                "+cpuset",
                Form::Controllers,
                false,
            ),
            Want::Dir { path: dir.clone() },
            value_want(&format!("{dir}/cpuset.cpus"), &cpus, Form::List, false),
            value_want(
                &format!("{dir}/cpuset.cpus.partition"),
                "isolated",
                Form::Text,
                false,
            ),
            Want::Cgroup { dir: dir.clone() },
        ],
        change: format!("CPUs {cpus} an isolated partition ({dir})"),
        by_hand: format!(
            "echo +cpuset > {mount}/cgroup.subtree_control; mkdir {dir}; echo {cpus} > {dir}/cpuset.cpus; echo isolated > {dir}/cpuset.cpus.partition; echo $PID > {dir}/cgroup.procs"
        ),
        boot: Some(format!(
            "a systemd slice with AllowedCPUs={cpus} and the partition set (or isolcpus=domain,managed_irq,{cpus} at boot)"
        )),
        ..Plan::default()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, tree};
    use super::*;

    #[test]
    fn cpuset_held_by_cgroup_v1_is_said() {
        let (_d, root) = tree(&[
            (
                "/proc/self/mounts",
                "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n",
            ),
            ("/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n"),
        ]);
        let input = crate::tune::audit::Input::read(root.clone());
        let e = plan(&ctx(&root, &input)).unwrap_err();
        assert_eq!(
            e,
            "cgroup v2 at /sys/fs/cgroup/unified has no cpuset controller (it has: hugetlb); a cgroup v1 hierarchy holds it (/sys/fs/cgroup/cpuset)"
        );
        let (_d, root) = tree(&[
            (
                "/proc/self/mounts",
                "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
            ),
            (
                "/sys/fs/cgroup/cgroup.controllers",
                "cpuset cpu io memory\n",
            ),
        ]);
        let p = plan(&ctx(&root, &input)).unwrap();
        assert_eq!(p.wants.len(), 5);
        assert_eq!(
            p.change,
            "CPUs 1 an isolated partition (/sys/fs/cgroup/rtlab-tune)"
        );
    }
}
