//! The seccomp filters: the denylist container runtimes use (Docker's default profile
//! without `CAP_SYS_ADMIN`), and the sockets a network mode denies.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

use crate::Network;

/// System calls no MCP server needs and that reach into the kernel or other processes:
/// mounting, module loading, kexec, BPF, keyrings, ptrace and cross-process memory, new
/// namespaces, clocks, swap, accounting and reboot. Each fails with `EPERM`.
const DENIED: &[libc::c_long] = &[
    libc::SYS_acct,
    libc::SYS_add_key,
    libc::SYS_bpf,
    libc::SYS_clock_adjtime,
    libc::SYS_clock_settime,
    libc::SYS_delete_module,
    libc::SYS_finit_module,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fsopen,
    libc::SYS_fspick,
    libc::SYS_init_module,
    libc::SYS_kcmp,
    libc::SYS_kexec_file_load,
    libc::SYS_kexec_load,
    libc::SYS_keyctl,
    libc::SYS_mount,
    libc::SYS_mount_setattr,
    libc::SYS_move_mount,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_open_tree,
    libc::SYS_perf_event_open,
    libc::SYS_pivot_root,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_ptrace,
    libc::SYS_quotactl,
    libc::SYS_reboot,
    libc::SYS_request_key,
    libc::SYS_setns,
    libc::SYS_settimeofday,
    libc::SYS_swapoff,
    libc::SYS_swapon,
    libc::SYS_umount2,
    libc::SYS_unshare,
    libc::SYS_userfaultfd,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lookup_dcookie,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ustat,
    #[cfg(target_arch = "x86_64")]
    libc::SYS__sysctl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_sysfs,
];

/// The filters for `network`, in the order they are installed: the denylist (`EPERM`,
/// and `clone` into a new user namespace), `clone3` answered `ENOSYS` (so that the C
/// library falls back to `clone`, whose flags a filter can read), and the sockets the
/// network mode denies (`EACCES`).
pub(super) fn filters(network: Network) -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|call| (*call, Vec::new())).collect();
    let new_user = libc::CLONE_NEWUSER as u64;
    denied.insert(
        libc::SYS_clone,
        vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(new_user),
            new_user,
        )?])?],
    );
    let mut filters = vec![filter(denied, libc::EPERM, arch)?];
    filters.push(filter(BTreeMap::from([(libc::SYS_clone3, Vec::new())]), libc::ENOSYS, arch)?);
    if let Some(sockets) = denied_sockets(network)? {
        filters.push(filter(BTreeMap::from([(libc::SYS_socket, sockets)]), libc::EACCES, arch)?);
    }
    Ok(filters)
}

/// A filter that answers `rules` with `errno` and allows everything else.
fn filter(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, seccompiler::BackendError> {
    let errno = u32::try_from(errno).unwrap_or(1);
    SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno), arch)?.try_into()
}

/// The `socket` calls `network` denies: every IP and packet socket with `none`; with a
/// proxy, those that are not TCP (UDP, raw), so that names and traffic go through it.
fn denied_sockets(network: Network) -> Result<Option<Vec<SeccompRule>>, seccompiler::BackendError> {
    let domain = |family: i32| SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family as u64);
    let kind = |kind: i32| {
        // The type may carry SOCK_NONBLOCK and SOCK_CLOEXEC in its high bits.
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(0xf), kind as u64)
    };
    let rules = match network {
        Network::All => return Ok(None),
        Network::None => [libc::AF_INET, libc::AF_INET6, libc::AF_PACKET]
            .into_iter()
            .map(|family| SeccompRule::new(vec![domain(family)?]))
            .collect::<Result<_, _>>()?,
        Network::Proxy(_) => {
            let mut rules = vec![SeccompRule::new(vec![domain(libc::AF_PACKET)?])?];
            for family in [libc::AF_INET, libc::AF_INET6] {
                for denied in [libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_SEQPACKET] {
                    rules.push(SeccompRule::new(vec![domain(family)?, kind(denied)?])?);
                }
            }
            rules
        }
    };
    Ok(Some(rules))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_network_mode_compiles() {
        assert_eq!(filters(Network::All).unwrap().len(), 2);
        assert_eq!(filters(Network::None).unwrap().len(), 3);
        assert_eq!(filters(Network::Proxy(8080)).unwrap().len(), 3);
    }
}
