//! A child confined by a policy is denied what the policy leaves out, with the system's
//! ordinary error, and does what it allows.

use std::path::PathBuf;
use std::process::Command;

use child_sandbox::{Network, Part, Policy, Sandbox};

/// A shell confined by `policy` runs `script`: its exit status, stdout and stderr.
fn run(policy: &Policy, script: &str) -> (bool, String, String) {
    let sandbox = Sandbox::prepare(policy).expect("the sandbox is prepared");
    // Root has every part here; an ordinary user has no network namespace and no procfs
    // to make, which the sandbox says, and the rest applies (the process limit as
    // RLIMIT_NPROC where no pids cgroup can be made).
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status.lines().any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(2) == Some("0"))
    });
    let unprivileged = [Part::Network, Part::ProcessView];
    for missing in sandbox.missing() {
        assert!(!root && unprivileged.contains(&missing.part), "{missing} is missing");
    }
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(script);
    let _confined = sandbox.install(&mut command);
    let output = command.output().expect("the shell starts");
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    (output.status.success(), text(output.stdout), text(output.stderr))
}

fn system() -> Policy {
    let read = ["/usr", "/lib", "/lib64", "/bin", "/etc", "/proc", "/dev"].map(PathBuf::from).to_vec();
    Policy {
        read,
        write: vec![PathBuf::from("/dev/null")],
        processes: Some(64),
        memory: Some(1 << 30),
        ..Policy::default()
    }
}

#[test]
fn files_outside_the_policy_are_denied_and_those_inside_readable() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("secret"), "s").unwrap();
    let (ok, _, stderr) = run(&system(), &format!("cat {}/secret", folder.path().display()));
    assert!(!ok && stderr.contains("Permission denied"), "{stderr}");
    let mut policy = system();
    policy.read.push(folder.path().to_owned());
    let (ok, stdout, _) = run(&policy, &format!("cat {}/secret", folder.path().display()));
    assert!(ok && stdout == "s", "{stdout}");
}

#[test]
fn the_parents_secrets_in_proc_are_denied() {
    let parent = std::process::id();
    let (ok, _, stderr) = run(&system(), &format!("cat /proc/{parent}/environ"));
    // Denied by Landlock; or, in a `/proc` of the child's own, not there at all.
    let denied = stderr.contains("Permission denied") || stderr.contains("No such file or directory");
    assert!(!ok && denied, "{stderr}");
    let (ok, stdout, _) = run(&system(), "cat /proc/self/status");
    assert!(ok && stdout.contains("NoNewPrivs:\t1") && stdout.contains("CapEff:\t0000000000000000"), "{stdout}");
}

/// Where the sandbox can give the child a `/proc` of its own (as root), the child sees
/// its own processes there and no other: not its parent, not init.
#[test]
fn other_processes_are_not_seen_where_the_child_has_a_proc_of_its_own() {
    let view = Sandbox::prepare(&system()).unwrap().missing().iter().all(|missing| missing.part != Part::ProcessView);
    let parent = std::process::id();
    let script = format!(
        "test -e /proc/{parent} && echo parent; test -e /proc/1 && echo init; \
         sleep 5 & echo \"child $!\"; ls /proc | grep -c '^[0-9]'; kill $!"
    );
    let (ok, stdout, stderr) = run(&system(), &script);
    assert!(ok, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    if view {
        // The shell, its `sleep` and the pipeline's `ls` and `grep`, and nothing else.
        let processes: u32 = lines.get(1).and_then(|count| count.parse().ok()).unwrap_or(u32::MAX);
        assert!(lines.len() == 2 && lines[0].starts_with("child ") && processes <= 5, "{stdout}");
    } else {
        assert!(lines.contains(&"parent") && lines.contains(&"init"), "{stdout}");
    }
}

#[test]
fn network_none_has_no_ip_socket() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let policy = Policy { network: Network::None, ..system() };
    let connect = format!("import socket; socket.create_connection(('127.0.0.1', {port}), 2)");
    let (ok, _, stderr) = run(&policy, &format!("exec python3 -c \"{connect}\""));
    assert!(!ok && stderr.contains("PermissionError"), "{stderr}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "the listener was reached");
}
