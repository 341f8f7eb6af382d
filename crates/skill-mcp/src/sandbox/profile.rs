//! The default profile: what a sandboxed server may read and write so that it works, as
//! found from its command, arguments, environment and working folder.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::Effective;

/// Read-only system locations.
const SYSTEM: [&str; 10] = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt", "/proc", "/sys"];

/// What `/etc` holds that no server reads: password hashes, sudo rules, SSH host keys,
/// TLS private keys. Everything else of `/etc` (name service, certificates, time zone) is
/// readable.
const ETC_SECRETS: [&str; 8] = ["shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl"];

/// Devices a server may read and write; `/dev` itself only read.
const DEVICES: [&str; 8] =
    ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/shm"];

/// Programs the usual launchers run the server with, whose installations are readable
/// when its `PATH` finds them (`npx` runs `node`; `uvx` and scripts run `python3`).
const INTERPRETERS: [&str; 7] = ["node", "npm", "python3", "python", "uv", "uvx", "sh"];

/// Files that mark a script's package folder.
const PACKAGE_MARKERS: [&str; 5] = ["package.json", "pyproject.toml", "setup.py", "setup.cfg", "node_modules"];

/// What a server is run as.
#[derive(Debug)]
pub(crate) struct Server<'a> {
    pub(crate) command: &'a str,
    pub(crate) args: &'a [String],
    pub(crate) env: &'a BTreeMap<String, String>,
    /// The values of the variables its `env` sets (not those it inherits).
    pub(crate) named: &'a [String],
    /// Its working folder: the configured one, else this process's.
    pub(crate) cwd: &'a Path,
    /// Whether `cwd` was configured (this process's own is readable only when it is
    /// neither the home folder nor above it).
    pub(crate) cwd_configured: bool,
}

/// The paths of `server`'s profile under `sandbox`, with `tmp` its temporary folder:
/// (read, write).
pub(crate) fn paths(server: &Server<'_>, sandbox: &Effective, tmp: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let home = server.env.get("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    let home = home.as_deref();
    let mut read: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    read.extend(children_except(Path::new("/etc"), &ETC_SECRETS));
    read.extend(children_except(Path::new("/etc/ssl"), &["private"]));
    read.extend(["/dev", "/run/systemd/resolve"].map(PathBuf::from));
    let mut write: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    write.push(tmp.to_owned());

    let search = server.env.get("PATH").map(String::as_str).unwrap_or("/usr/bin:/bin");
    for dir in std::env::split_paths(search).filter(|dir| dir.is_absolute()) {
        if !is_home_or_above(&dir, home) {
            read.push(dir);
        }
    }
    let command = find_program(server.command, search, server.cwd);
    let programs =
        command.into_iter().chain(INTERPRETERS.iter().filter_map(|name| find_program(name, search, server.cwd)));
    for program in programs {
        read.extend(installations(&program, home));
    }
    // What the arguments and the configured variables name (`--flag=/path` too): a
    // script, its data, a config folder.
    for value in server.args.iter().chain(server.named) {
        let value = value.rsplit_once('=').map_or(value.as_str(), |(_, value)| value);
        if let Some(path) = named_path(value, server.cwd, home) {
            read.extend(package_of(&path, home));
        }
    }
    if server.cwd_configured || !is_home_or_above(server.cwd, home) {
        read.push(server.cwd.to_owned());
    }
    if let Some(home) = home {
        let cache = |name: &str, default: &str| {
            server.env.get(name).filter(|value| !value.is_empty()).map_or_else(|| home.join(default), PathBuf::from)
        };
        write.push(cache("npm_config_cache", ".npm"));
        write.push(cache("NPM_CONFIG_CACHE", ".npm"));
        write.push(cache("UV_CACHE_DIR", ".cache/uv"));
        write.extend([".local/share/uv", ".cache/pip"].map(|path| home.join(path)));
        read.extend(
            [".npmrc", ".config/uv", ".config/pip", ".pyenv", ".gitconfig", ".config/git"].map(|path| home.join(path)),
        );
    }
    read.extend(sandbox.read.iter().map(|path| expand(path, home)));
    write.extend(sandbox.write.iter().map(|path| expand(path, home)));
    (read, write)
}

/// `~/…` under `home`.
fn expand(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if path == "~" => home.map_or_else(|| PathBuf::from(path), Path::to_owned),
        _ => PathBuf::from(path),
    }
}

/// The entries of `dir` but those named in `except`.
fn children_except(dir: &Path, except: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|entry| !except.iter().any(|name| entry.file_name() == *name))
        .map(|entry| entry.path())
        .collect()
}

/// Whether `path` is the root, the home folder or a folder above it: never given whole.
fn is_home_or_above(path: &Path, home: Option<&Path>) -> bool {
    path.parent().is_none() || home.is_some_and(|home| home.starts_with(path))
}

/// `name` as `execvp` finds it: a path as it is (relative to `cwd`), a bare name in `search`.
fn find_program(name: &str, search: &str, cwd: &Path) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(cwd.join(name));
    }
    std::env::split_paths(search).map(|dir| dir.join(name)).find(|path| path.is_file())
}

/// The folders a program needs, for the path it is found at and the one it resolves to:
/// its package (the folder holding the outermost `node_modules`, or the prefix holding
/// `lib/pythonX/site-packages`), else its installation (the parent of a `bin`, `sbin` or
/// `shims` folder), else its own folder.
fn installations(program: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let canonical = program.canonicalize().ok();
    for path in std::iter::once(program.to_owned()).chain(canonical) {
        found.push(path.clone());
        if let Some(root) = package_root(&path) {
            found.push(root);
            continue;
        }
        let Some(dir) = path.parent() else { continue };
        let named = |names: &[&str]| dir.file_name().is_some_and(|name| names.iter().any(|n| name == *n));
        let install = if named(&["bin", "sbin", "shims", ".bin"]) { dir.parent().unwrap_or(dir) } else { dir };
        if !is_home_or_above(install, home) {
            found.push(install.to_owned());
        } else if !is_home_or_above(dir, home) {
            found.push(dir.to_owned());
        }
    }
    found
}

/// The folder above the outermost `node_modules` of `path`, or the prefix above its
/// `lib/pythonX/site-packages` (a virtual environment or a Python installation).
fn package_root(path: &Path) -> Option<PathBuf> {
    let components: Vec<Component<'_>> = path.components().collect();
    let at = |name: &str| components.iter().position(|component| component.as_os_str() == name);
    let cut = if let Some(index) = at("node_modules") {
        index
    } else {
        let index = at("site-packages").or_else(|| at("dist-packages"))?;
        index.checked_sub(2)?
    };
    (cut > 1).then(|| components[..cut].iter().collect())
}

/// The path an argument names, when it names one that exists (`~/…`, absolute, or
/// relative to `cwd` and starting with `.` or holding a `/`); never the root or home.
fn named_path(arg: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let path = if arg.starts_with('~') {
        expand(arg, home)
    } else if arg.starts_with('/') {
        PathBuf::from(arg)
    } else if arg.starts_with('.') || arg.contains('/') {
        cwd.join(arg)
    } else {
        return None;
    };
    (path.exists() && !is_home_or_above(&path, home)).then_some(path)
}

/// What an argument's path gives: a folder as it is; a file with its package folder (the
/// nearest one above it with a package marker, below the home folder), or its own folder.
fn package_of(path: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    if path.is_dir() {
        return vec![path.to_owned()];
    }
    let mut found = vec![path.to_owned()];
    if let Some(root) = package_root(path) {
        found.push(root);
        return found;
    }
    let folders = path.ancestors().skip(1).take_while(|folder| !is_home_or_above(folder, home));
    let mut nearest = None;
    for folder in folders {
        nearest.get_or_insert(folder);
        if PACKAGE_MARKERS.iter().any(|marker| folder.join(marker).exists()) {
            nearest = Some(folder);
            break;
        }
    }
    found.extend(nearest.map(Path::to_owned));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_found_above_its_node_modules_or_site_packages() {
        let root = |path: &str| package_root(Path::new(path)).map(|path| path.display().to_string());
        assert_eq!(root("/c/peers/x-1/node_modules/@s/p/dist/index.js").as_deref(), Some("/c/peers/x-1"));
        assert_eq!(root("/c/venv/lib/python3.12/site-packages/mcp/server.py").as_deref(), Some("/c/venv"));
        assert_eq!(root("/node_modules/x"), None);
        assert_eq!(root("/srv/tool/server.py"), None);
    }

    #[test]
    fn an_installation_is_above_its_bin_but_never_the_home() {
        let home = Path::new("/home/a");
        let found = installations(Path::new("/home/a/.venv/bin/python3"), Some(home));
        assert!(found.contains(&PathBuf::from("/home/a/.venv")), "{found:?}");
        let found = installations(Path::new("/home/a/bin/tool"), Some(home));
        assert!(found.contains(&PathBuf::from("/home/a/bin")), "{found:?}");
        assert!(!found.contains(&PathBuf::from("/home/a")), "{found:?}");
    }

    #[test]
    fn the_profile_holds_no_home_and_no_etc_secret() {
        let home = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([
            ("HOME".to_owned(), home.path().display().to_string()),
            ("PATH".to_owned(), format!("{}:/usr/bin:/bin", home.path().display())),
        ]);
        let args = vec!["~".to_owned(), "/".to_owned(), "--root=/usr/share".to_owned()];
        let server =
            Server { command: "sh", args: &args, env: &env, named: &[], cwd: home.path(), cwd_configured: false };
        let sandbox = super::super::SandboxSettings::default().effective();
        let (read, write) = paths(&server, &sandbox, Path::new("/tmp/x"));
        for path in read.iter().chain(&write) {
            assert!(!is_home_or_above(path, Some(home.path())), "{} is given", path.display());
            assert!(!path.ends_with("etc/shadow") && !path.starts_with("/etc/ssh"), "{} is given", path.display());
        }
        assert!(read.contains(&PathBuf::from("/usr/share")), "{read:?}");
        assert!(write.contains(&home.path().join(".npm")), "{write:?}");
    }
}
