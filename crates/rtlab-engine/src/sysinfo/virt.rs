//! Hypervisor and container detection.

use super::SysRoot;

/// The hypervisor's name when running virtualised.
pub(super) fn hypervisor(root: &SysRoot, cpuinfo: &str) -> Option<String> {
    if let Some(t) = root.read("/sys/hypervisor/type").filter(|t| !t.is_empty()) {
        return Some(t);
    }
    let dmi = [
        root.read("/sys/class/dmi/id/sys_vendor")
            .unwrap_or_default(),
        root.read("/sys/class/dmi/id/product_name")
            .unwrap_or_default(),
    ]
    .join(" ")
    .to_lowercase();
    for (needle, name) in [
        ("qemu", "qemu"),
        ("kvm", "kvm"),
        ("vmware", "vmware"),
        ("virtualbox", "virtualbox"),
        ("microsoft corporation", "hyperv"),
        ("xen", "xen"),
        ("amazon ec2", "kvm"),
        ("google compute engine", "kvm"),
        ("firecracker", "firecracker"),
    ] {
        if dmi.contains(needle) {
            return Some(name.to_string());
        }
    }
    let flagged = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|w| w == "hypervisor"));
    if flagged {
        return Some(cpuid_vendor().unwrap_or_else(|| "unknown hypervisor".to_string()));
    }
    root.exists("/proc/device-tree/hypervisor")
        .then(|| "device-tree hypervisor".to_string())
}

/// The hypervisor vendor signature from CPUID leaf 0x40000000.
#[cfg(target_arch = "x86_64")]
fn cpuid_vendor() -> Option<String> {
    // SAFETY: CPUID is available on every x86_64 CPU; leaf 0x40000000 is reserved
    // for hypervisors and returns zeros on bare metal.
    #[allow(unused_unsafe)]
    let r = unsafe { std::arch::x86_64::__cpuid(0x4000_0000) };
    let mut bytes = Vec::with_capacity(12);
    for reg in [r.ebx, r.ecx, r.edx] {
        bytes.extend_from_slice(&reg.to_le_bytes());
    }
    let sig = String::from_utf8_lossy(&bytes)
        .trim_matches(char::from(0))
        .to_string();
    let name = match sig.as_str() {
        "KVMKVMKVM" => "kvm",
        "Microsoft Hv" => "hyperv",
        "VMwareVMware" => "vmware",
        "XenVMMXenVMM" => "xen",
        "VBoxVBoxVBox" => "virtualbox",
        "TCGTCGTCGTCG" => "qemu-tcg",
        "ACRNACRNACRN" => "acrn",
        "" => return None,
        other => return Some(other.to_string()),
    };
    Some(name.to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_vendor() -> Option<String> {
    None
}

/// The container runtime when running in a container.
pub(super) fn container(root: &SysRoot) -> Option<String> {
    if root.exists("/.dockerenv") {
        return Some("docker".into());
    }
    if root.exists("/run/.containerenv") {
        return Some("podman".into());
    }
    let cgroup = root.read("/proc/1/cgroup").unwrap_or_default();
    for (needle, name) in [
        ("docker", "docker"),
        ("kubepods", "kubernetes"),
        ("lxc", "lxc"),
        ("libpod", "podman"),
    ] {
        if cgroup.contains(needle) {
            return Some(name.into());
        }
    }
    None
}
