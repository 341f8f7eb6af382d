//! A view of `/proc` that shows a confined child its own processes only: a procfs of its
//! own, mounted `hidepid=invisible` over `/proc` in a mount namespace of its own. Such a
//! procfs neither lists nor finds a process the reader may not ptrace, and Landlock lets
//! it ptrace none outside its sandbox: the gateway and every other process are not there.
//!
//! The procfs is made in the parent as a detached mount (`fsopen`, `fsmount`: attached
//! nowhere, so the parent's namespace never holds it), so that Landlock's rule can name
//! it; the child only moves it over `/proc`. Process ids stay those of the host: a PID
//! namespace would make the server its own init (which ignores signals it has no handler
//! for and must reap orphans) and change the ids its host knows it by.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::mount::{
    FsMountFlags, FsOpenFlags, MountAttrFlags, MountPropagationFlags, MoveMountFlags, fsconfig_create,
    fsconfig_set_string, fsmount, fsopen, mount_change, move_mount,
};

/// A group id no process has, for the procfs's `gid` (those in it see every process).
const NO_GROUP: &std::ffi::CStr = c"2147483646";

/// A procfs that shows a child its own processes only, to be moved over its `/proc`.
#[derive(Debug)]
pub(super) struct ProcView {
    mount: OwnedFd,
}

impl ProcView {
    /// Makes the detached procfs; why not when it cannot be made (it needs root).
    pub(super) fn prepare() -> Result<Self, String> {
        let made = || -> rustix::io::Result<OwnedFd> {
            let context = fsopen(c"proc", FsOpenFlags::FSOPEN_CLOEXEC)?;
            fsconfig_set_string(&context, c"hidepid", c"invisible")?;
            // The group that sees every process anyway: by default root's, which a server
            // run by root has. One no process is in.
            fsconfig_set_string(&context, c"gid", NO_GROUP)?;
            fsconfig_create(&context)?;
            let attributes = MountAttrFlags::MOUNT_ATTR_NOSUID
                | MountAttrFlags::MOUNT_ATTR_NODEV
                | MountAttrFlags::MOUNT_ATTR_NOEXEC;
            fsmount(&context, FsMountFlags::FSMOUNT_CLOEXEC, attributes)
        };
        made().map(|mount| Self { mount }).map_err(|error| {
            format!("no procfs of its own could be made ({error}; needs root): other processes are listed in /proc")
        })
    }

    /// Its root, for the Landlock rule that lets the child read it.
    pub(super) fn root(&self) -> BorrowedFd<'_> {
        self.mount.as_fd()
    }

    /// In the child, once it has a mount namespace of its own: makes every mount private
    /// (nothing of what follows reaches the parent's namespace) and moves the procfs over
    /// `/proc`. Only system calls, on what was prepared.
    pub(super) fn enter(&self) -> std::io::Result<()> {
        mount_change(c"/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)?;
        move_mount(&self.mount, c"", rustix::fs::CWD, c"/proc", MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH)?;
        Ok(())
    }
}
